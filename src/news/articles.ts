// The articles repository: listing with full-text search (D1's FTS5) and filters, admin create/update/delete,
// and the batched upsert by fingerprint that ingestion uses. Every write is one D1 batch.
import { and, asc, count, desc, eq, getTableColumns, gte, lte, ne, sql, type SQL } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { d1Statement, inJsonList, type Database } from "../shared/db";
import { conflict, notFound, validationError } from "./errors";
import type { SortKey } from "./list";
import { articleCompanies, articles, companies, newsIngestCursors } from "./tables";
import { articleFingerprint, htmlToText, makeAbstract } from "./text";

export type Article = typeof articles.$inferSelect;

export interface ArticleView {
  id: number;
  title: string;
  abstract: string;
  url: string;
  thumbnail: string | null;
  source: string;
  publishedAt: string;
  fingerprint: string;
  /** Tickers of the companies the article is linked to, sorted. */
  companies: string[];
  createdAt: string;
  updatedAt: string;
}

type ArticleRow = Article & { tickers: string | null };

export const articleView = (row: ArticleRow): ArticleView => ({
  id: row.id,
  title: row.title,
  abstract: row.abstract,
  url: row.url,
  thumbnail: row.thumbnail,
  source: row.source,
  publishedAt: row.publishedAt.toISOString(),
  fingerprint: row.fingerprint,
  companies: row.tickers ? row.tickers.split(",").sort() : [],
  createdAt: row.createdAt.toISOString(),
  updatedAt: row.updatedAt.toISOString(),
});

export const ARTICLE_SORT_FIELDS = {
  publishedAt: articles.publishedAt,
  createdAt: articles.createdAt,
  updatedAt: articles.updatedAt,
  title: articles.title,
  source: articles.source,
  id: articles.id,
};
export type ArticleSortField = keyof typeof ARTICLE_SORT_FIELDS;

const tickersOf = sql<string | null>`(SELECT group_concat(${articleCompanies.ticker}) FROM ${articleCompanies}
  WHERE ${articleCompanies.articleId} = ${articles.id})`;
const articleWithTickers = { ...getTableColumns(articles), tickers: tickersOf };

// ---------------------------------------------------------------------------------------------------------------
// Full-text queries

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
 * The FTS5 index (created by migrations/0004_news_fts.sql), described here for queries only: it is not in
 * drizzle.config.ts's schema list, so drizzle-kit never tries to create it as a plain table.
 */
const articlesFts = sqliteTable("articles_fts", {
  rowid: integer("rowid"),
  title: text("title"),
  abstract: text("abstract"),
});

const matchesFts = (query: string) =>
  sql`${articles.id} IN (SELECT ${articlesFts.rowid} FROM ${articlesFts} WHERE ${articlesFts} MATCH ${query})`;

// ---------------------------------------------------------------------------------------------------------------
// Reads

export interface ArticleFilter {
  /** An FTS5 query (see ftsQuery); null means the user searched for something that cannot match. */
  match?: string | null;
  /** Tickers: an article matches when it is linked to any of them. */
  tickers?: string[];
  sources?: string[];
  from?: Date;
  to?: Date;
}

export function articleConditions(filter: ArticleFilter): SQL | undefined {
  const conditions: SQL[] = [];
  if (filter.match === null) conditions.push(sql`0`);
  else if (filter.match !== undefined) conditions.push(matchesFts(filter.match));
  if (filter.tickers) {
    conditions.push(
      sql`EXISTS (SELECT 1 FROM ${articleCompanies}
        WHERE ${articleCompanies.articleId} = ${articles.id} AND ${inJsonList(articleCompanies.ticker, filter.tickers)})`,
    );
  }
  if (filter.sources) conditions.push(inJsonList(articles.source, filter.sources));
  if (filter.from) conditions.push(gte(articles.publishedAt, filter.from));
  if (filter.to) conditions.push(lte(articles.publishedAt, filter.to));
  return and(...conditions);
}

export interface ListArticlesInput extends ArticleFilter {
  page: number;
  limit: number;
  sort: SortKey<ArticleSortField>[];
}

/** The two statements of a list (the page and the total), exposed so the benchmark can run the same SQL on D1. */
export function listArticlesQueries(db: Database, input: ListArticlesInput) {
  const where = articleConditions(input);
  const order = [
    ...input.sort.map(({ field, descending }) => (descending ? desc : asc)(ARTICLE_SORT_FIELDS[field])),
    desc(articles.id),
  ];
  const offset = (input.page - 1) * input.limit;
  const onlyFullText = typeof input.match === "string" && !input.tickers && !input.sources && !input.from && !input.to;
  return [
    db
      .select(articleWithTickers)
      .from(articles)
      .where(where)
      .orderBy(...order)
      .limit(input.limit)
      .offset(offset),
    // The index holds one row per article (the triggers keep it so): counting there spares a lookup per match.
    onlyFullText
      ? db
          .select({ total: count() })
          .from(articlesFts)
          .where(sql`${articlesFts} MATCH ${input.match}`)
      : db.select({ total: count() }).from(articles).where(where),
  ] as const;
}

export async function listArticles(
  db: Database,
  input: ListArticlesInput,
): Promise<{ rows: ArticleView[]; total: number }> {
  const [rows, [{ total }]] = await db.batch(listArticlesQueries(db, input));
  return { rows: rows.map(articleView), total };
}

export async function getArticle(db: Database, id: number): Promise<ArticleView | undefined> {
  const [row] = await db.select(articleWithTickers).from(articles).where(eq(articles.id, id)).limit(1);
  return row && articleView(row);
}

// ---------------------------------------------------------------------------------------------------------------
// Admin writes

export interface ArticleInput {
  title: string;
  url: string;
  abstract?: string;
  thumbnail?: string | null;
  source: string;
  publishedAt?: Date;
  /** Tickers an admin names explicitly, linked besides those the matcher finds. */
  companies?: string[];
}

type Matcher = (text: string) => string[];

const isUniqueViolation = (error: unknown) =>
  error instanceof Error &&
  /UNIQUE constraint failed/i.test(`${error.message} ${(error as { cause?: Error }).cause?.message ?? ""}`);

async function checkTickersExist(db: Database, tickers: string[]): Promise<void> {
  if (tickers.length === 0) return;
  const known = await db
    .select({ ticker: companies.ticker })
    .from(companies)
    .where(inJsonList(companies.ticker, tickers));
  const unknown = tickers.filter((ticker) => !known.some((row) => row.ticker === ticker));
  if (unknown.length > 0) {
    throw validationError({
      name: "exists",
      param: "companies",
      value: tickers.join(","),
      message: `companies names unknown tickers: ${unknown.join(", ")}`,
    });
  }
}

/** An article's links: each ticker once, "explicit" winning over "text" when an admin named a matched company. */
function mergeLinks(explicit: string[], matched: string[]) {
  const links = new Map<string, "text" | "explicit">();
  for (const ticker of matched) links.set(ticker, "text");
  for (const ticker of explicit) links.set(ticker, "explicit");
  return [...links].map(([ticker, origin]) => ({ ticker, origin }));
}

const matchText = (title: string, abstract: string) => `${title}\n${abstract}`;

export async function createArticle(
  db: Database,
  input: ArticleInput & { now: Date },
  matcher: Matcher,
): Promise<ArticleView> {
  const explicit = [...new Set(input.companies ?? [])];
  await checkTickersExist(db, explicit);
  const title = htmlToText(input.title);
  const abstract = makeAbstract(input.abstract ?? "");
  const fingerprint = await articleFingerprint(title, input.source);
  const row = {
    fingerprint,
    title,
    abstract,
    url: input.url,
    thumbnail: input.thumbnail ?? null,
    source: input.source,
    publishedAt: input.publishedAt ?? input.now,
    createdAt: input.now,
    updatedAt: input.now,
  };
  const links = mergeLinks(explicit, matcher(matchText(title, abstract))).map((link) => ({ fingerprint, ...link }));
  try {
    const [inserted] = await db.$client.batch<{ id: number }>([
      d1Statement(db, db.insert(articles).values(row).returning({ id: articles.id })),
      d1Statement(db, insertLinksByFingerprint(links)),
    ]);
    return (await getArticle(db, inserted.results[0].id))!;
  } catch (error) {
    if (isUniqueViolation(error)) throw conflict("title", "an article with this title and source already exists");
    throw error;
  }
}

export async function updateArticle(
  db: Database,
  input: Partial<ArticleInput> & { id: number; now: Date },
  matcher: Matcher,
): Promise<ArticleView> {
  const [existing] = await db.select().from(articles).where(eq(articles.id, input.id)).limit(1);
  if (!existing) throw notFound();
  const currentLinks = await db.select().from(articleCompanies).where(eq(articleCompanies.articleId, input.id));
  const explicit = input.companies
    ? [...new Set(input.companies)]
    : currentLinks.filter((link) => link.origin === "explicit").map((link) => link.ticker);
  if (input.companies) await checkTickersExist(db, explicit);

  const title = input.title === undefined ? existing.title : htmlToText(input.title);
  const abstract = input.abstract === undefined ? existing.abstract : makeAbstract(input.abstract);
  const source = input.source ?? existing.source;
  const fingerprint = await articleFingerprint(title, source);
  const [clash] = await db
    .select({ id: articles.id })
    .from(articles)
    .where(and(eq(articles.fingerprint, fingerprint), ne(articles.id, input.id)))
    .limit(1);
  if (clash) throw conflict("title", "an article with this title and source already exists");

  const changes = {
    title,
    abstract,
    source,
    fingerprint,
    ...(input.url !== undefined && { url: input.url }),
    ...(input.thumbnail !== undefined && { thumbnail: input.thumbnail }),
    ...(input.publishedAt !== undefined && { publishedAt: input.publishedAt }),
    updatedAt: input.now,
  };
  const links = mergeLinks(explicit, matcher(matchText(title, abstract))).map((link) => ({
    articleId: input.id,
    ...link,
  }));
  const statements: BatchItem<"sqlite">[] = [
    db.update(articles).set(changes).where(eq(articles.id, input.id)),
    db.delete(articleCompanies).where(eq(articleCompanies.articleId, input.id)),
  ];
  if (links.length > 0) statements.push(db.insert(articleCompanies).values(links));
  try {
    await db.batch(statements as [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]]);
  } catch (error) {
    if (isUniqueViolation(error)) throw conflict("title", "an article with this title and source already exists");
    throw error;
  }
  return (await getArticle(db, input.id))!;
}

export async function deleteArticle(db: Database, id: number): Promise<void> {
  const deleted = await db.delete(articles).where(eq(articles.id, id)).returning({ id: articles.id });
  if (deleted.length === 0) throw notFound();
}

// ---------------------------------------------------------------------------------------------------------------
// Ingestion

/** A normalised article from a publisher, ready to store. */
export interface IncomingArticle {
  fingerprint: string;
  title: string;
  abstract: string;
  url: string;
  thumbnail: string | null;
  source: string;
  publishedAt: Date;
  tickers: string[];
}

/** Inserts link rows given by article fingerprint, in one statement whatever their number (no bound-parameter limit). */
function insertLinksByFingerprint(links: { fingerprint: string; ticker: string; origin: "text" | "explicit" }[]): SQL {
  return sql`
    INSERT INTO ${articleCompanies} (article_id, ticker, origin)
    SELECT ${articles.id}, json_extract(link.value, '$.ticker'), json_extract(link.value, '$.origin')
    FROM json_each(${JSON.stringify(links)}) AS link
    JOIN ${articles} ON ${articles.fingerprint} = json_extract(link.value, '$.fingerprint')
    WHERE true
    ON CONFLICT DO NOTHING`;
}

/**
 * When a known article is rewritten: a new non-empty abstract or a new url, or a thumbnail where it had none.
 * A thumbnail already stored stays, so that two feeds of one publisher with different image sizes do not flap.
 */
const changedSql = sql.raw(`(excluded.abstract <> '' AND abstract IS NOT excluded.abstract) OR url IS NOT excluded.url
        OR (thumbnail IS NULL AND excluded.thumbnail IS NOT NULL)`);

const isChanged = (row: { abstract: string; url: string; thumbnail: string | null }, article: IncomingArticle) =>
  (article.abstract !== "" && row.abstract !== article.abstract) ||
  row.url !== article.url ||
  (row.thumbnail === null && article.thumbnail !== null);

export interface UpsertOutcome {
  inserted: number;
  updated: number;
  unchanged: number;
}

/**
 * Stores articles by fingerprint in one batch together with the publisher's new cursor: a new fingerprint is
 * inserted; a known one takes the publisher's latest abstract and url (its title, source, publishedAt and
 * createdAt stay). Links found by the matcher are replaced; links an admin made explicitly stay.
 */
export async function upsertArticles(
  db: Database,
  input: { articles: IncomingArticle[]; cursor: { publisher: string; fetchedUntil: Date }; now: Date },
): Promise<UpsertOutcome> {
  const unique = [...new Map(input.articles.map((article) => [article.fingerprint, article])).values()];
  const fingerprints = unique.map((article) => article.fingerprint);
  const before = await db
    .select({
      fingerprint: articles.fingerprint,
      abstract: articles.abstract,
      url: articles.url,
      thumbnail: articles.thumbnail,
    })
    .from(articles)
    .where(inJsonList(articles.fingerprint, fingerprints));
  const known = new Map(before.map((row) => [row.fingerprint, row]));

  const now = input.now.getTime();
  const rows = unique.map((article) => ({ ...article, publishedAt: article.publishedAt.getTime(), now }));
  const links = unique.flatMap(({ fingerprint, tickers }) =>
    tickers.map((ticker) => ({ fingerprint, ticker, origin: "text" as const })),
  );
  const cursor = { publisher: input.cursor.publisher, fetchedUntil: input.cursor.fetchedUntil, updatedAt: input.now };
  await db.$client.batch([
    d1Statement(
      db,
      sql`
      INSERT INTO ${articles} (fingerprint, title, abstract, url, thumbnail, source, published_at, created_at, updated_at)
      SELECT json_extract(row.value, '$.fingerprint'), json_extract(row.value, '$.title'), json_extract(row.value, '$.abstract'),
        json_extract(row.value, '$.url'), json_extract(row.value, '$.thumbnail'), json_extract(row.value, '$.source'),
        json_extract(row.value, '$.publishedAt'), json_extract(row.value, '$.now'), json_extract(row.value, '$.now')
      FROM json_each(${JSON.stringify(rows)}) AS row
      WHERE true
      ON CONFLICT (fingerprint) DO UPDATE SET
        abstract = CASE WHEN excluded.abstract = '' THEN abstract ELSE excluded.abstract END,
        url = excluded.url, thumbnail = coalesce(thumbnail, excluded.thumbnail), updated_at = excluded.updated_at
      WHERE ${changedSql}`,
    ),
    d1Statement(
      db,
      sql`
      DELETE FROM ${articleCompanies} WHERE ${articleCompanies.origin} = 'text' AND ${articleCompanies.articleId} IN
        (SELECT ${articles.id} FROM ${articles} WHERE ${inJsonList(articles.fingerprint, fingerprints)})`,
    ),
    d1Statement(db, insertLinksByFingerprint(links)),
    d1Statement(
      db,
      db
        .insert(newsIngestCursors)
        .values(cursor)
        .onConflictDoUpdate({ target: newsIngestCursors.publisher, set: cursor }),
    ),
  ]);

  let updated = 0;
  for (const article of unique) {
    const row = known.get(article.fingerprint);
    if (row && isChanged(row, article)) updated++;
  }
  return { inserted: unique.length - known.size, updated, unchanged: known.size - updated };
}

export async function getCursor(db: Database, publisher: string): Promise<Date | undefined> {
  const [row] = await db.select().from(newsIngestCursors).where(eq(newsIngestCursors.publisher, publisher)).limit(1);
  return row?.fetchedUntil;
}
