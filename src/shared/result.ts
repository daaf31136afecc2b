// The one Result type: expected failures (bad input, bad config, store outage) come back as values the caller must
// look at, where a throw would be for the unexpected. test/scripts/result-type.node.test.ts keeps it the only one.

export type Ok<T> = { ok: true; value: T };
export type Err<E> = { ok: false; error: E };
export type Result<T, E> = Ok<T> | Err<E>;

export function ok<T>(value: T): Ok<T> {
  return { ok: true, value };
}

export function err<E>(error: E): Err<E> {
  return { ok: false, error };
}
