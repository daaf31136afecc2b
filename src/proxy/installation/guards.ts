// In-batch guards of the proxy API's writes: statements that fail a write's D1 batch, with a known refusal, when a
// condition holds once the write's own statements ran. Like the If-Match revision guard, the check and the write are
// one transaction, so two concurrent writes can never both pass a rule that only one of them may (a quota, a name).
import { sql, type SQL } from "drizzle-orm";
import { raise, raisedText } from "../../shared/db";
import type { DomainError } from "../../shared/domain-errors";

export interface Guard {
  /** SQL for one text value: NULL when the write may stand, else a detail the answer is built from. */
  refusal: SQL;
  /** The refusal the request gets when it is not NULL; nothing of the write is stored. */
  answer: (detail: string) => DomainError;
}

/**
 * The guard as a statement of the batch: it fails with the guard's index and the detail (shared/db.ts raise()), and
 * D1 rolls the whole batch back. The failure is built only for a row that passes the WHERE, so an empty refusal costs
 * one lookup and fails nothing.
 */
export function guardStatement(guard: Guard, index: number): SQL {
  return sql`select ${raise(sql`${`${index}:`} || refused`)}
    from (select (${guard.refusal}) as refused) where refused is not null`;
}

/** The answer of the guard that failed the batch, when one did. */
export function guardAnswer(error: unknown, guards: readonly Guard[]): DomainError | undefined {
  const match = /^(\d+):(.*)$/s.exec(raisedText(error) ?? "");
  const guard = match && guards[Number(match[1])];
  return guard ? guard.answer(match[2]) : undefined;
}
