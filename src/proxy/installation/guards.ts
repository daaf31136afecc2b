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

const LOST_RACE = "rows moved";

/**
 * The statement to follow a write that acts on rows where the request read them (a domain by id and the backend it was
 * in): it fails the batch unless that write changed exactly `count` rows, so that a row a concurrent request moved or
 * removed meanwhile fails the whole write instead of being skipped or, worse, written where it now is. SQLite's
 * changes() counts the rows of the statement just before, not those its triggers change.
 */
export const changedExactly = (count: number): SQL =>
  sql`select ${raise(sql`${`${LOST_RACE}:`} || changed`)} from (select changes() as changed) where changed <> ${count}`;

/**
 * The statement to follow writes that make a set of rows what the request wants (a backend's container links, say):
 * like changedExactly() it fails the batch unless `condition` holds once they ran, so that rows a concurrent request
 * added or changed meanwhile fail the whole write instead of staying beside what it wrote.
 */
export const stillHolds = (condition: SQL): SQL =>
  sql`select ${raise(sql`${`${LOST_RACE}:condition`}`)} where not (${condition})`;

/** True when a changedExactly() or stillHolds() check failed the batch: a concurrent change got to the rows first. */
export const isLostRace = (error: unknown): boolean => raisedText(error)?.startsWith(`${LOST_RACE}:`) === true;

/** The answer of the guard that failed the batch, when one did. */
export function guardAnswer(error: unknown, guards: readonly Guard[]): DomainError | undefined {
  const match = /^(\d+):(.*)$/s.exec(raisedText(error) ?? "");
  const guard = match && guards[Number(match[1])];
  return guard ? guard.answer(match[2]) : undefined;
}
