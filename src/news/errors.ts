// The news API's error wire format, after the rest generator it rewrites: every error answers the generator's
// validation object {valid: false, name: <rule>, param: <field>, message} (with `value` and the rule's limit where
// there is one): failed validation, conflicts, oversized bodies, refused credentials (401), unknown ids and routes
// (404), wrong methods (405) and anything unexpected, which is logged and answered {..., name: "server", message:
// "Server error"}.
import { errorHandler, GENERIC_FAILURE, HttpError, InvalidJsonBody } from "../shared/http/errors";
import { MalformedMultipart } from "../shared/http/form-body";
import { InvalidUtf8, JsonTooDeep, PayloadTooLarge } from "../shared/http/request-body";
import { MethodNotAllowed, RouteNotFound } from "../shared/http/unmatched-route";
import { NewsDomainError, type NewsFailureKind } from "./store/errors";

/** An operational error whose JSON body is given exactly, in the validation shape {valid, name, param, message}. */
export class NewsError extends HttpError {
  override name = "NewsError";
  constructor(
    status: number,
    readonly body: ValidationFailure,
    headers: Record<string, string> = {},
  ) {
    super(status, body.message, headers);
  }
}

/** The challenge passport sends with a failed bearer (master key or user token) check. */
export const BEARER_CHALLENGE = { "WWW-Authenticate": 'Bearer realm="Users"' };
/** The challenge passport sends with a failed HTTP Basic check. */
export const BASIC_CHALLENGE = { "WWW-Authenticate": 'Basic realm="Users"' };

/**
 * 401 in the validation shape, with the challenge of the scheme the route uses. Every refusal of one check answers the
 * same body, whatever failed (missing, wrong, expired, a deleted user, a role that does not suffice).
 */
export const unauthorized = (param: string, message: string, headers: Record<string, string>) =>
  new NewsError(401, { valid: false, name: "unauthorized", param, message }, headers);

/** A missing or wrong master key (MASTER_KEY, as a Bearer token or access_token). */
export const masterKeyRefused = () =>
  unauthorized(
    "access_token",
    "access_token must be the master key (a Bearer token or access_token)",
    BEARER_CHALLENGE,
  );

/** A missing, expired or tampered session token, a user it no longer names, or a role that does not suffice. */
export const tokenRefused = () =>
  unauthorized(
    "access_token",
    "access_token must be a valid session token of a user allowed here (a Bearer token or access_token)",
    BEARER_CHALLENGE,
  );

/** Missing HTTP Basic credentials, an unknown e-mail or a wrong password (the same answer for each). */
export const loginRefused = () =>
  unauthorized(
    "authorization",
    "authorization must carry the e-mail and password of a user (HTTP Basic)",
    BASIC_CHALLENGE,
  );

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
  new NewsError(400, { valid: false, ...failure } as ValidationFailure);

/** Each domain failure's status and the generator's rule it answers under. */
const DOMAIN_ANSWERS: Record<NewsFailureKind, { status: number; rule: string }> = {
  not_found: { status: 404, rule: "exists" },
  conflict: { status: 409, rule: "unique" },
  invalid: { status: 400, rule: "exists" },
};

/** A store's domain error in the generator's shape: {valid: false, name: <rule>, param, value?, message}. */
export function domainFailure(error: Error): NewsError | undefined {
  if (!(error instanceof NewsDomainError)) return undefined;
  const { status, rule } = DOMAIN_ANSWERS[error.kind];
  const value = error.value === undefined ? {} : { value: error.value };
  return new NewsError(status, { valid: false, name: rule, param: error.param, ...value, message: error.message });
}

/**
 * The shared body reader's refusals in the validation shape of the generator, with the limit as the rule's value:
 * {valid: false, name: "maxbytes", param: "body", maxbytes: 1048576, message}, "utf8", "json", "depth" and "form".
 */
export function bodyFailure(error: Error): NewsError | undefined {
  // Keys in the generator's order: valid, name, param, then the rule's limit, then message.
  const refused = (status: number, { name, ...rule }: { name: string; message: string; [rule: string]: unknown }) =>
    new NewsError(status, { valid: false, name, param: "body", ...rule } as ValidationFailure);
  if (error instanceof PayloadTooLarge)
    return refused(413, { name: "maxbytes", maxbytes: error.limitBytes, message: error.message });
  if (error instanceof InvalidUtf8) return refused(400, { name: "utf8", message: error.message });
  if (error instanceof InvalidJsonBody) return refused(400, { name: "json", message: "body must be valid JSON" });
  if (error instanceof JsonTooDeep) {
    const message = `body must not nest deeper than ${error.maxDepth} levels`;
    return refused(400, { name: "depth", depth: error.maxDepth, message });
  }
  if (error instanceof MalformedMultipart)
    return refused(400, { name: "form", message: "body must be valid multipart/form-data" });
  return undefined;
}

/** The root router's 404 and 405 for paths this service owns, in its shape. */
function routeFailure(error: Error): NewsError | undefined {
  if (error instanceof MethodNotAllowed) {
    const failure = { name: "enum", param: "method", value: error.method, enum: error.allowed };
    return new NewsError(405, { valid: false, ...failure, message: error.message }, error.headers);
  }
  if (error instanceof RouteNotFound)
    return new NewsError(404, {
      valid: false,
      name: "route",
      param: "path",
      value: error.path,
      message: error.message,
    });
  return undefined;
}

export const newsErrorResponse = errorHandler(
  "news",
  {
    expected(c, error) {
      const body: ValidationFailure =
        error instanceof NewsError
          ? error.body
          : { valid: false, name: "request", param: "request", message: error.message };
      return c.json(body, error.status as 400, error.headers);
    },
    failure: (c, message) =>
      c.json(
        {
          valid: false,
          name: "server",
          param: "request",
          message: message === GENERIC_FAILURE ? "Server error" : message,
        },
        500,
      ),
  },
  (error) => bodyFailure(error) ?? routeFailure(error) ?? domainFailure(error) ?? error,
);
