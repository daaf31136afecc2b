// The news API's error wire format, after the rest generator it rewrites: operational errors carry their
// status and body; anything unexpected is logged and answered [{"code":500,"path":"meta","message":"Server error"}].
import { errorHandler, GENERIC_FAILURE, HttpError } from "../shared/http/errors";
import { InvalidUtf8, PayloadTooLarge } from "../shared/http/request-body";

/**
 * An operational error whose JSON body is given exactly (e.g. the validation shape {valid, param, message}).
 * `undefined` means an empty body, as the generator's 401 and 404 answers have.
 */
export class NewsError extends HttpError {
  override name = "NewsError";
  constructor(
    status: number,
    readonly body: unknown,
    headers: Record<string, string> = {},
  ) {
    super(
      status,
      body === undefined ? `HTTP ${status}` : typeof body === "string" ? body : JSON.stringify(body),
      headers,
    );
  }
}

/** The challenge passport sends with a failed bearer (master key or user token) check. */
export const BEARER_CHALLENGE = { "WWW-Authenticate": 'Bearer realm="Users"' };
/** The challenge passport sends with a failed HTTP Basic check. */
export const BASIC_CHALLENGE = { "WWW-Authenticate": 'Basic realm="Users"' };

/** 401 with an empty body: missing or wrong master key, token, credentials, or a role that does not suffice. */
export const unauthorized = (headers: Record<string, string> = BEARER_CHALLENGE) =>
  new NewsError(401, undefined, headers);

/** 404 with an empty body, for an id that names no record. */
export const notFound = () => new NewsError(404, undefined);

/** The generator's validation error object: {valid: false, name: <rule>, param, value, <rule>: <limit>, message}. */
export interface ValidationFailure {
  valid: false;
  name: string;
  param: string;
  value?: unknown;
  message: string;
  [rule: string]: unknown;
}

export const validationError = (failure: Omit<ValidationFailure, "valid">) =>
  new NewsError(400, { valid: false, ...failure });

/** 409 in the generator's shape, e.g. for an e-mail address that is already registered. */
export const conflict = (param: string, message: string) => new NewsError(409, { valid: false, param, message });

/**
 * The shared body reader's refusals in the validation shape of the generator, with the limit as the rule's value:
 * {valid: false, name: "maxbytes", param: "body", maxbytes: 1048576, message} and {valid: false, name: "utf8", ...}.
 */
function bodyFailure(error: Error): NewsError | undefined {
  if (error instanceof PayloadTooLarge) {
    return new NewsError(413, {
      valid: false,
      name: "maxbytes",
      param: "body",
      maxbytes: error.limitBytes,
      message: error.message,
    });
  }
  if (error instanceof InvalidUtf8)
    return new NewsError(400, { valid: false, name: "utf8", param: "body", message: error.message });
  return undefined;
}

export const newsErrorResponse = errorHandler(
  "news",
  {
    expected(c, error) {
      if (!(error instanceof NewsError)) return c.json({ message: error.message }, error.status as 400, error.headers);
      if (error.body === undefined) return c.body(null, error.status as 401, error.headers);
      return c.json(error.body, error.status as 400, error.headers);
    },
    failure: (c, message) =>
      c.json([{ code: 500, path: "meta", message: message === GENERIC_FAILURE ? "Server error" : message }], 500),
  },
  (error) => bodyFailure(error) ?? error,
);
