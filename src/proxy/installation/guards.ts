// In-batch guards of the proxy API's writes: statements that fail a write's D1 batch, with a known refusal, when a
// condition holds once the write's own statements ran. Like the If-Match revision guard, the check and the write are
// one transaction, so two concurrent writes can never both pass a rule that only one of them may (a quota, a name).
import { sql, type SQL } from "drizzle-orm";
import type { HttpError } from "../../shared/http/errors";

export interface Guard {
  /** SQL for one text value: NULL when the write may stand, else a detail the answer is built from. */
  refusal: SQL;
  /** The 4xx the request gets when the refusal is not NULL; nothing of the write is stored. */
  answer: (detail: string) => HttpError;
}

const OPEN = "write-guard#";
const CLOSE = "#end";
/** A guard's refusal as SQLite quotes it in its error: the guard's index, then the detail. */
const REFUSAL = new RegExp(`${OPEN}(\\d+):([^']*?)${CLOSE}`);

/**
 * The guard as a statement of the batch. SQLite has no way to raise an error of one's own outside a trigger, so a
 * refusal becomes a JSON path that is none (it does not start with `$`): json_extract fails the statement with an
 * error quoting that path, which carries the guard's index and the detail, and D1 rolls the whole batch back. The
 * path is built only for a row that passes the WHERE, so an empty refusal costs one lookup and fails nothing.
 */
export function guardStatement(guard: Guard, index: number): SQL {
  return sql`select json_extract('{}', ${`${OPEN}${index}:`} || refused || ${CLOSE})
    from (select (${guard.refusal}) as refused) where refused is not null`;
}

/** The answer of the guard that failed the batch, when one did (D1 nests the SQLite error as a cause). */
export function guardAnswer(error: unknown, guards: readonly Guard[]): HttpError | undefined {
  for (let current: unknown = error; current instanceof Error; current = current.cause) {
    const match = REFUSAL.exec(current.message);
    const guard = match && guards[Number(match[1])];
    if (guard) return guard.answer(match[2]);
  }
  return undefined;
}
