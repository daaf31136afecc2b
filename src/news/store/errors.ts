// The news stores' domain errors: what went wrong and which request field it is about, with no HTTP status. Only
// news/errors.ts turns a kind into a status and the validation object the news API answers.

/**
 * NotFound: an id names no record. Conflict: a write would duplicate a record already stored (a unique rule).
 * UnknownReference: a field names records that do not exist (e.g. unknown tickers), so the input is refused.
 */
export type NewsFailureKind = "NotFound" | "Conflict" | "UnknownReference";

/** A failure the client caused, named by kind; `param` is the request field it is about. */
export class NewsDomainError extends Error {
  override name = "NewsDomainError";
  constructor(
    readonly kind: NewsFailureKind,
    readonly param: string,
    message: string,
    /** The value the client gave, where the answer echoes it. */
    readonly value?: unknown,
  ) {
    super(message);
  }
}

/** An id that names no record. */
export const recordNotFound = () => new NewsDomainError("NotFound", "id", "id names no record");

/** A write that would duplicate a record already stored, e.g. an e-mail address that is already registered. */
export const duplicateRecord = (param: string, message: string) => new NewsDomainError("Conflict", param, message);

/** A field naming records that do not exist. */
export const unknownReference = (param: string, value: unknown, message: string) =>
  new NewsDomainError("UnknownReference", param, message, value);
