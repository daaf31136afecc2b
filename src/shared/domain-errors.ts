// The errors stores, installation code and jobs throw: a kind and the public message, never an HTTP status. Each
// service's errors.ts alone maps a kind to its status and wire shape, so a repository never decides an answer.

/** What went wrong, in the words of the domain; a service answers each kind with one status of its choosing. */
export type DomainErrorKind =
  | "invalid" // the input breaks a rule of the domain (a field, a parameter)
  | "not_found" // names nothing the caller may see
  | "conflict" // another row already holds a unique name or address
  | "unprocessable" // a create or update that cannot be processed as asked
  | "invalid_state" // the stored state cannot give what was asked (e.g. a configuration that cannot be generated)
  | "locked" // a job (or the one sharing its lock) is already running
  | "stale_revision" // the write names a revision that is no longer current
  | "quota" // past a quota or an installation bound
  | "forbidden" // the caller may not do this
  | "failed"; // a run of a job failed

/** An expected failure of the domain; subclasses may carry data their service's errors.ts puts on the wire. */
export class DomainError extends Error {
  override name = "DomainError";
  constructor(
    readonly kind: DomainErrorKind,
    message: string,
  ) {
    super(message);
  }
}
