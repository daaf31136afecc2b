// The typed error that HTTP layers throw; each service's onError turns it into that service's wire format.

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
