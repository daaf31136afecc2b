// The news API's error wire format, after the rest generator it rewrites: operational errors carry their
// status and body; anything unexpected is logged and answered [{"code":500,"path":"meta","message":"Server error"}].
import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import { HttpError } from "../shared/errors";
import { logError } from "../shared/log";
import { SettingsError } from "../shared/settings";

/** An operational error whose JSON body is given exactly (e.g. the validation shape {valid, param, message}). */
export class NewsError extends HttpError {
  override name = "NewsError";
  constructor(
    status: number,
    readonly body: unknown,
    headers: Record<string, string> = {},
  ) {
    super(status, typeof body === "string" ? body : JSON.stringify(body), headers);
  }
}

export function newsErrorResponse(error: Error, c: Context): Response {
  if (error instanceof NewsError) return c.json(error.body, error.status as 400, error.headers);
  if (error instanceof HttpError) return c.json({ message: error.message }, error.status as 400, error.headers);
  if (error instanceof HTTPException) return c.json({ message: error.message }, error.status);
  if (error instanceof SettingsError) {
    logError("news: invalid settings", error);
    return c.json([{ code: 500, path: "meta", message: error.message }], 500);
  }
  logError("news: unexpected error", error);
  return c.json([{ code: 500, path: "meta", message: "Server error" }], 500);
}
