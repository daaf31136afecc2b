// The proxy API's error wire format: {"success": false, "payload": "<message>", "warnings": []}.
import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import { HttpError } from "../shared/errors";
import { logError } from "../shared/log";
import { SettingsError } from "../shared/settings";

export const REALM = 'Basic realm="proxy"';

export class Unauthorized extends HttpError {
  override name = "Unauthorized";
  constructor() {
    super(401, "Authentication required: valid HTTP Basic credentials are needed", { "WWW-Authenticate": REALM });
  }
}

export function proxyErrorResponse(error: Error, c: Context): Response {
  if (error instanceof HttpError) {
    return c.json({ success: false, payload: error.message, warnings: [] }, error.status as 400, error.headers);
  }
  if (error instanceof HTTPException) {
    return c.json({ success: false, payload: error.message, warnings: [] }, error.status);
  }
  if (error instanceof SettingsError) {
    logError("proxy: invalid settings", error);
    return c.json({ success: false, payload: error.message, warnings: [] }, 500);
  }
  logError("proxy: unexpected error", error);
  return c.json({ success: false, payload: "Internal Server Error", warnings: [] }, 500);
}
