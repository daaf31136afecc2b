// The proxy API's error wire format, {"success": false, "payload": "<message>", "warnings": []}, and the one place that
// answers each domain error kind (./domain-errors.ts, the jobs platform's JobLocked) with the spec's status.
import { DomainError, type DomainErrorKind } from "../shared/domain-errors";
import { errorHandler, HttpError } from "../shared/http/errors";
import { PreconditionFailed, RunFailed } from "./domain-errors";

// The original's realm (Helidon security with realm "agiprx"): clients that keep credentials per realm still answer.
export const REALM_NAME = "agiprx";
export const REALM = `Basic realm="${REALM_NAME}"`;

export class Unauthorized extends HttpError {
  override name = "Unauthorized";
  constructor() {
    super(401, "Authentication required: valid HTTP Basic credentials are needed", { "WWW-Authenticate": REALM });
  }
}

/** The spec's status of each kind. It answers a create or update that cannot be processed with 500. */
const STATUS: Record<DomainErrorKind, number> = {
  invalid: 400,
  not_found: 404,
  conflict: 409,
  unprocessable: 500,
  invalid_state: 422,
  locked: 423,
  stale_revision: 412,
  quota: 403,
  forbidden: 403,
  failed: 500,
};

/** What a domain error puts in the headers: the current entity tag of a stale write, the run of a failed job. */
function headersOf(error: DomainError): Record<string, string> {
  if (error instanceof PreconditionFailed && error.currentETag !== undefined) return { ETag: error.currentETag };
  if (error instanceof RunFailed) return { "X-Job-Id": String(error.runId) };
  return {};
}

/** A domain error as the HTTP error the proxy answers it with; any other error as it is. */
export const toHttpError = (error: Error): Error =>
  error instanceof DomainError ? new HttpError(STATUS[error.kind], error.message, headersOf(error)) : error;

const proxyBody = (payload: string) => ({ success: false, payload, warnings: [] });

export const proxyErrorResponse = errorHandler(
  "proxy",
  {
    expected: (c, error) => c.json(proxyBody(error.message), error.status as 400, error.headers),
    failure: (c, message) => c.json(proxyBody(message), 500),
  },
  toHttpError,
);
