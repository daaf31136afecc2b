// The rate limit service's error wire format: text/plain bodies, as the reference's Go HTTP server answers.
import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import { HttpError } from "../shared/errors";
import { logError } from "../shared/log";
import { SettingsError } from "../shared/settings";

export function ratelimitErrorResponse(error: Error, c: Context): Response {
  if (error instanceof HttpError) return c.text(error.message, error.status as 400, error.headers);
  if (error instanceof HTTPException) return c.text(error.message, error.status);
  if (error instanceof SettingsError) {
    logError("ratelimit: invalid settings", error);
    return c.text(error.message, 500);
  }
  logError("ratelimit: unexpected error", error);
  return c.text("Internal Server Error", 500);
}
