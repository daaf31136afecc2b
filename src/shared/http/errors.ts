// The typed error that HTTP layers throw, and the onError skeleton that turns it into each service's wire format.
import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import { logError } from "../log";
import { SettingsError } from "../settings";

/** An expected failure with the status and message the client should see. */
export class HttpError extends Error {
  override name = "HttpError";
  constructor(
    readonly status: number,
    message: string,
    /** Extra headers for the response, e.g. WWW-Authenticate on a 401. */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

/** A request body that is not JSON at all. */
export class InvalidJsonBody extends HttpError {
  override name = "InvalidJsonBody";
  constructor() {
    super(400, "request body is not valid JSON");
  }
}

/** How a service writes its errors: an expected one as it is, and a 500 with the given message. */
export interface ErrorRenderer {
  expected(c: Context, error: HttpError): Response;
  failure(c: Context, message: string): Response;
}

/**
 * The onError of a service: expected errors (HttpError, Hono's HTTPException) in the service's wire format; malformed
 * settings answer 500 naming the variables (never their values); anything else is logged and answered with a generic
 * 500 that carries no internal text. `translate` may first turn a shared error into one of the service's own.
 */
export function errorHandler(
  service: string,
  render: ErrorRenderer,
  translate: (error: Error) => Error = (error) => error,
): (thrown: Error, c: Context) => Response {
  return (thrown, c) => {
    const error = translate(thrown);
    if (error instanceof HttpError) return render.expected(c, error);
    if (error instanceof HTTPException) return render.expected(c, new HttpError(error.status, error.message));
    if (error instanceof SettingsError) {
      logError(`${service}: invalid settings`, error);
      return render.failure(c, error.message);
    }
    logError(`${service}: unexpected error`, error);
    return render.failure(c, GENERIC_FAILURE);
  };
}

/** The message of every unexpected failure. */
export const GENERIC_FAILURE = "Internal Server Error";
