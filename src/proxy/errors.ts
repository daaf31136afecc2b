// The proxy API's error wire format: {"success": false, "payload": "<message>", "warnings": []}.
import { errorHandler, HttpError } from "../shared/http/errors";

export const REALM = 'Basic realm="proxy"';

export class Unauthorized extends HttpError {
  override name = "Unauthorized";
  constructor() {
    super(401, "Authentication required: valid HTTP Basic credentials are needed", { "WWW-Authenticate": REALM });
  }
}

const proxyBody = (payload: string) => ({ success: false, payload, warnings: [] });

export const proxyErrorResponse = errorHandler("proxy", {
  expected: (c, error) => c.json(proxyBody(error.message), error.status as 400, error.headers),
  failure: (c, message) => c.json(proxyBody(message), 500),
});

/** A project, backend, container or user that does not exist or that the caller may not see (same answer). */
export class NotFound extends HttpError {
  override name = "NotFound";
  constructor(message: string) {
    super(404, message);
  }
}

/** A create or update that cannot be processed: the spec answers these with 500 and the reason. */
export class CannotProcess extends HttpError {
  override name = "CannotProcess";
  constructor(message: string) {
    super(500, message);
  }
}

/** A write that would break a uniqueness rule another row already holds. */
export class Conflict extends HttpError {
  override name = "Conflict";
  constructor(message: string) {
    super(409, message);
  }
}

/** A write past a quota or an installation bound (issue 27): nothing was written. */
export class QuotaExceeded extends HttpError {
  override name = "QuotaExceeded";
  constructor(message: string) {
    super(403, message);
  }
}

export class Forbidden extends HttpError {
  override name = "Forbidden";
  constructor(message = "Administrator access required") {
    super(403, message);
  }
}

/** A write whose If-Match names no current entity tag of the project it would change: nothing was written. */
export class PreconditionFailed extends HttpError {
  override name = "PreconditionFailed";
  constructor(message: string, currentETag?: string) {
    super(412, message, currentETag === undefined ? {} : { ETag: currentETag });
  }
}

export const invalidProject = (label: string) =>
  new NotFound(`Invalid project: label ${label} not existing or access denied`);
export const invalidBackend = (label: string) =>
  new NotFound(`Invalid backend: label ${label} not existing or access denied`);
/** A HAProxy or SSH proxy version number that names no stored version (or is no version number at all). */
export const versionNotFound = (version: number | string) => new NotFound(`Invalid version: ${version} not existing`);
