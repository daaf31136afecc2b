// Full-text search over the articles (D1's FTS5): user queries turned into FTS5 syntax that can never be read as
// operators, and the index table described for queries.
import { sql } from "drizzle-orm";
import { integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { articles } from "./tables";

/** Quotes a term for FTS5 so that user input is never read as query syntax (no injection, no syntax errors). */
const ftsString = (term: string) => `"${term.replaceAll('"', '""')}"`;

/** The words of a piece of text, as FTS5's unicode61 tokenizer would split them. */
const wordsOf = (text: string) => text.match(/[\p{L}\p{N}]+/gu) ?? [];

/**
 * Turns a user's `q` into an FTS5 query: words must all appear (AND), "quoted words" are phrases, a trailing *
 * makes a prefix search, and OR between two terms means either. Returns undefined when nothing searchable is left.
 */
export function ftsQuery(q: string): string | undefined {
  const parts: string[] = [];
  let pendingOr = false;
  for (const match of q.matchAll(/"([^"]*)"?|(\S+)/g)) {
    if (match[2] === "OR") {
      pendingOr = parts.length > 0;
      continue;
    }
    const prefix = match[2]?.endsWith("*") ?? false;
    const words = wordsOf(match[1] ?? match[2]);
    if (words.length === 0) continue;
    const term = ftsString(words.join(" ")) + (prefix ? "*" : "");
    if (pendingOr) parts[parts.length - 1] = `${parts[parts.length - 1]} OR ${term}`;
    else parts.push(term);
    pendingOr = false;
  }
  if (parts.length === 0) return undefined;
  return parts.map((part) => (part.includes(" OR ") ? `(${part})` : part)).join(" AND ");
}

/** An FTS5 query matching any of the phrases (the /search topics); undefined when none has a word. */
export function ftsAnyOf(phrases: string[]): string | undefined {
  const terms = phrases
    .map(wordsOf)
    .filter((words) => words.length > 0)
    .map((words) => ftsString(words.join(" ")));
  return terms.length > 0 ? terms.join(" OR ") : undefined;
}

/**
 * The FTS5 index (created by migrations/0004_news_fts.sql), described here for queries only: it is in no tables.ts
 * (the files drizzle.config.ts reads), so drizzle-kit never tries to create it as a plain table.
 */
export const articlesFts = sqliteTable("articles_fts", {
  rowid: integer("rowid"),
  title: text("title"),
  abstract: text("abstract"),
});

export const matchesFts = (query: string) =>
  sql`${articles.id} IN (SELECT ${articlesFts.rowid} FROM ${articlesFts} WHERE ${articlesFts} MATCH ${query})`;
