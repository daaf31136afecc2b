// The news stores' domain errors: what went wrong and which request field it is about, with no HTTP status. Only
// news/errors.ts turns a kind into a status and the validation object the news API answers.

import { DomainError } from "../../shared/domain-errors";

/**
 * not_found: an id names no record. conflict: a write would duplicate a record already stored (a unique rule).
 * invalid: a field names records that do not exist (e.g. unknown tickers), so the input is refused.
 */
export type NewsFailureKind = "not_found" | "conflict" | "invalid";

/** A failure the client caused, named by kind; `param` is the request field it is about. */
export class NewsDomainError extends DomainError {
  override name = "NewsDomainError";
  constructor(
    override readonly kind: NewsFailureKind,
    readonly param: string,
    message: string,
    /** The value the client gave, where the answer echoes it. */
    readonly value?: unknown,
  ) {
    super(kind, message);
  }
}

/** An id that names no record. */
export const recordNotFound = () => new NewsDomainError("not_found", "id", "id names no record");

/** A write that would duplicate a record already stored, e.g. an e-mail address that is already registered. */
export const duplicateRecord = (param: string, message: string) => new NewsDomainError("conflict", param, message);

/** A field naming records that do not exist. */
export const unknownReference = (param: string, value: unknown, message: string) =>
  new NewsDomainError("invalid", param, message, value);
