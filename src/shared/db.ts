// The drizzle handle over the D1 binding, shared by the services' repositories, and the D1 batch helpers: lists as one
// JSON parameter, and writes (drizzle queries or raw SQL with parameters) committed as one all-or-nothing batch.
import { inArray, type AnyColumn, type Query, type SQL } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { SQLiteAsyncDialect } from "drizzle-orm/sqlite-core";
import { sql } from "drizzle-orm";
import { utf8Pieces } from "./bytes";
import { meteredD1 } from "./d1-meter";
import { currentD1Usage } from "./d1-usage";
import { perIsolate } from "./isolate";

export type Database = ReturnType<typeof drizzle>;

/** One handle per binding object: building drizzle's dialect and session on every request would cost more than most queries. */
const plainHandle = perIsolate("drizzle handle", (d1: D1Database) => drizzle(d1));

/** The same over the metered binding, which counts each call into the usage record of the request making it. */
const meteredHandle = perIsolate("metered drizzle handle", (d1: D1Database) => drizzle(meteredD1(d1, currentD1Usage)));

/**
 * The drizzle handle of a D1 binding: the binding's own, unless the request is counting its D1 work (D1_USAGE_HEADER,
 * src/shared/d1-usage.ts), then one whose calls are counted.
 */
export const database = (d1: D1Database): Database => (currentD1Usage() ? meteredHandle(d1) : plainHandle(d1));

/** A write for commitBatch(): a drizzle query builder, or raw SQL (with parameters) from drizzle's `sql`. */
export type Statement = SQL | { toSQL(): Query };

const dialect = new SQLiteAsyncDialect();

/**
 * `column IN (<values>)` with the values as one JSON parameter, whatever their number: D1 allows 100 bound parameters
 * per statement.
 */
export const inJsonList = (column: AnyColumn, values: readonly (string | number)[]) =>
  inArray(column, sql`(select value from json_each(${JSON.stringify(values)}))`);

/**
 * A D1 statement from drizzle SQL or a drizzle query. drizzle's batch cannot run raw SQL that has parameters (it looks
 * for a prepared statement that raw SQL does not have), so writes mixing both go to D1's batch directly.
 */
export function d1Statement(db: Database, statement: Statement): D1PreparedStatement {
  const query = "toSQL" in statement ? statement.toSQL() : dialect.sqlToQuery(statement);
  return db.$client.prepare(query.sql).bind(...query.params);
}

/** Runs the statements as one D1 batch, which D1 executes as one transaction: all or nothing. Returns each one's rows. */
export async function commitBatch(db: Database, statements: Statement[]): Promise<Record<string, unknown>[][]> {
  if (statements.length === 0) return [];
  const results = await db.$client.batch<Record<string, unknown>>(statements.map((s) => d1Statement(db, s)));
  return results.map((result) => result.results ?? []);
}

// D1 (SQLite) error text the code branches on, matched here only: test/shared/db.test.ts provokes each error in
// workerd and pins its wording, so a runtime whose wording changes fails that test instead of answering 500s.

/** True when the D1 error, or one it wraps (D1 nests the SQLite error, drizzle the D1 one, as a cause), says `pattern`. */
function errorSays(error: unknown, pattern: string | RegExp): boolean {
  for (let current: unknown = error; current instanceof Error; current = current.cause) {
    if (typeof pattern === "string" ? current.message.includes(pattern) : pattern.test(current.message)) return true;
  }
  return false;
}

/** True when a D1 error (or one it wraps) is a constraint failure of any kind: UNIQUE, NOT NULL, CHECK, foreign key. */
export const isConstraintFailure = (error: unknown): boolean => errorSays(error, /constraint failed/i);

/** True when a unique index refused the write; with `columns` (`table.a, table.b`), that index. */
export const isUniqueFailure = (error: unknown, columns?: string): boolean =>
  errorSays(error, columns === undefined ? /UNIQUE constraint failed/i : `UNIQUE constraint failed: ${columns}`);

/** True when the NOT NULL column `column` (`table.column`) refused a NULL. */
export const isNotNullFailure = (error: unknown, column: string): boolean =>
  errorSays(error, `NOT NULL constraint failed: ${column}`);

/** True when a CHECK constraint refused the write. */
export const isCheckFailure = (error: unknown): boolean => errorSays(error, "CHECK constraint failed");

/**
 * An SQL expression that fails its statement, quoting `text` (SQL for one text value) in the error for raisedText().
 * SQLite has no way to raise an error of one's own outside a trigger, so the text becomes a JSON path that is none (it
 * does not start with `$`): json_extract fails with an error quoting that path, and D1 rolls the batch back.
 */
export const raise = (text: SQL): SQL => sql`json_extract('{}', ${RAISED_OPEN} || ${text} || ${RAISED_CLOSE})`;

const RAISED_OPEN = "raised#";
const RAISED_CLOSE = "#end";
const RAISED = new RegExp(`${RAISED_OPEN}([^']*?)${RAISED_CLOSE}`);

/** The text a raise() expression failed its statement with, if the D1 error (or one it wraps) is that failure. */
export function raisedText(error: unknown): string | undefined {
  for (let current: unknown = error; current instanceof Error; current = current.cause) {
    const match = RAISED.exec(current.message);
    if (match) return match[1];
  }
  return undefined;
}

/**
 * The most UTF-8 bytes of one JSON list bound as a parameter (jsonArrayPieces): D1 refuses a value over 2,000,000
 * bytes, and the statement that reads the list must stay well within it.
 */
export const JSON_PARAMETER_BYTES = 1_000_000;

/** The most UTF-8 bytes one stored piece of a file holds: D1 refuses a value, or a row, over 2,000,000 bytes. */
export const FILE_PIECE_BYTES = 1_000_000;

/** Files as the rows of their pieces (`part` 0, 1, ...), each within what one D1 row holds. */
export function filePieces(files: Record<string, string>): { name: string; part: number; content: string }[] {
  return Object.entries(files).flatMap(([name, text]) =>
    utf8Pieces(text, FILE_PIECE_BYTES).map((content, part) => ({ name, part, content })),
  );
}

/** Files stored as pieces (filePieces), read back in each file's piece order: each file's pieces joined. */
export function joinPieces(pieces: readonly { name: string; content: string }[]): Record<string, string> {
  const files: Record<string, string> = {};
  for (const { name, content } of pieces) files[name] = (files[name] ?? "") + content;
  return files;
}
