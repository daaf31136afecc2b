// The proxy's domain errors: what its repositories, installation code, engines and jobs throw, a kind and the public
// message without an HTTP status. ./errors.ts alone answers each kind with the spec's status.
import { DomainError } from "../shared/domain-errors";

/** A project, backend, container or user that does not exist or that the caller may not see (same answer). */
export class NotFound extends DomainError {
  override name = "NotFound";
  constructor(message: string) {
    super("not_found", message);
  }
}

/** A create or update that cannot be processed (the spec answers these with 500 and the reason). */
export class CannotProcess extends DomainError {
  override name = "CannotProcess";
  constructor(message: string) {
    super("unprocessable", message);
  }
}

/** A write that would break a uniqueness rule another row already holds. */
export class Conflict extends DomainError {
  override name = "Conflict";
  constructor(message: string) {
    super("conflict", message);
  }
}

/** A write past a quota or an installation bound (issue 27): nothing was written. */
export class QuotaExceeded extends DomainError {
  override name = "QuotaExceeded";
  constructor(message: string) {
    super("quota", message);
  }
}

/** A field or parameter the installation refuses (a HAProxy parameter, an address, a certificate). */
export class Invalid extends DomainError {
  override name = "Invalid";
  constructor(message: string) {
    super("invalid", message);
  }
}

export class Forbidden extends DomainError {
  override name = "Forbidden";
  constructor(message = "Administrator access required") {
    super("forbidden", message);
  }
}

/** A write whose If-Match names no current entity tag of the project it would change: nothing was written. */
export class PreconditionFailed extends DomainError {
  override name = "PreconditionFailed";
  constructor(
    message: string,
    /** The project's entity tag now, for the caller to retry with (absent when the project does not exist). */
    readonly currentETag?: string,
  ) {
    super("stale_revision", message);
  }
}

/** A job run's failure as its caller reads it: the failure's kind and message, and the run to ask about. */
export class RunFailed extends DomainError {
  override name = "RunFailed";
  constructor(
    kind: DomainError["kind"],
    message: string,
    readonly runId: number,
  ) {
    super(kind, message);
  }
}

export const invalidProject = (label: string) =>
  new NotFound(`Invalid project: label ${label} not existing or access denied`);
export const invalidBackend = (label: string) =>
  new NotFound(`Invalid backend: label ${label} not existing or access denied`);
/** A HAProxy or SSH proxy version number that names no stored version (or is no version number at all). */
export const versionNotFound = (version: number | string) => new NotFound(`Invalid version: ${version} not existing`);
