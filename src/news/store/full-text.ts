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
 * The most words one search may hold: the words of q's distinct terms, or of /search's distinct topics. Each word is
 * one more doclist FTS5 reads, for the page and again for the total; on 50 000 articles 1 800 words (60 topics of
 * "the" repeated) took 18 s of the one shared D1 database, 16 words at most about 70 ms (docs/news.md).
 */
export const MAX_SEARCH_WORDS = 16;

/** The fewest characters before a `*`: each prefix term merges the doclist of every indexed word it begins. */
export const MIN_PREFIX_LENGTH = 3;

/** Why a search is refused: the rule of the generator's validation object and its limit. */
export interface SearchRefusal {
  rule: "maxwords" | "minprefix";
  limit: number;
}

interface Term {
  words: string[];
  prefix: boolean;
}

/** FTS5 folds case and diacritics, so terms differing only in case are one term. */
const termKey = (term: Term) => term.words.join(" ").toLowerCase() + (term.prefix ? "*" : "");

/** The items, each key's first one only, in their order. */
function distinctBy<T>(items: T[], key: (item: T) => string): T[] {
  const seen = new Set<string>();
  return items.filter((item) => !seen.has(key(item)) && Boolean(seen.add(key(item))));
}

/** q's terms as groups of alternatives (a OR b), all groups required; a term or group written again counts once. */
function queryGroups(q: string): Term[][] {
  const groups: Term[][] = [];
  let pendingOr = false;
  for (const match of q.matchAll(/"([^"]*)"?|(\S+)/g)) {
    if (match[2] === "OR") {
      pendingOr = groups.length > 0;
      continue;
    }
    const words = wordsOf(match[1] ?? match[2]);
    if (words.length === 0) continue;
    const term = { words, prefix: match[2]?.endsWith("*") ?? false };
    if (pendingOr) groups[groups.length - 1].push(term);
    else groups.push([term]);
    pendingOr = false;
  }
  const distinctGroups = groups.map((group) => distinctBy(group, termKey));
  return distinctBy(distinctGroups, (group) => group.map(termKey).join(" OR "));
}

const wordCount = (terms: Term[]) => terms.reduce((sum, term) => sum + term.words.length, 0);

/** The rule q breaks, if any: more than MAX_SEARCH_WORDS words, or a prefix shorter than MIN_PREFIX_LENGTH. */
export function queryRefusal(q: string): SearchRefusal | undefined {
  const terms = queryGroups(q).flat();
  if (wordCount(terms) > MAX_SEARCH_WORDS) return { rule: "maxwords", limit: MAX_SEARCH_WORDS };
  const shortPrefix = terms.some(
    (term) => term.prefix && [...term.words[term.words.length - 1]].length < MIN_PREFIX_LENGTH,
  );
  return shortPrefix ? { rule: "minprefix", limit: MIN_PREFIX_LENGTH } : undefined;
}

/**
 * Turns a user's `q` into an FTS5 query: words must all appear (AND), "quoted words" are phrases, a trailing *
 * makes a prefix search, and OR between two terms means either; a term written again is searched once. Returns
 * undefined when nothing searchable is left. The route refuses what queryRefusal refuses before it comes here.
 */
export function ftsQuery(q: string): string | undefined {
  const parts = queryGroups(q).map((group) =>
    group.map((term) => ftsString(term.words.join(" ")) + (term.prefix ? "*" : "")).join(" OR "),
  );
  if (parts.length === 0) return undefined;
  return parts.map((part) => (part.includes(" OR ") ? `(${part})` : part)).join(" AND ");
}

/** The /search topics as phrases, each once (whatever its case and punctuation), those without a word left out. */
const topicTerms = (topics: string[]): Term[] =>
  distinctBy(
    topics.map((topic) => ({ words: wordsOf(topic), prefix: false })).filter((term) => term.words.length > 0),
    termKey,
  );

/** The rule /search's topics break, if any: more than MAX_SEARCH_WORDS words over the distinct topics. */
export const topicsRefusal = (topics: string[]): SearchRefusal | undefined =>
  wordCount(topicTerms(topics)) > MAX_SEARCH_WORDS ? { rule: "maxwords", limit: MAX_SEARCH_WORDS } : undefined;

/** An FTS5 query matching any of the phrases (the /search topics); undefined when none has a word. */
export function ftsAnyOf(phrases: string[]): string | undefined {
  const terms = topicTerms(phrases).map((term) => ftsString(term.words.join(" ")));
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
