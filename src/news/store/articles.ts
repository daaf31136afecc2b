// The articles repository: reads with filters and full-text search, and the admin's create, update and delete.
// Every write is one D1 batch, together with the tombstones that keep ingestion from undoing it.
import { and, count, desc, eq, getTableColumns, gte, lte, ne, sql, type SQL } from "drizzle-orm";
import { jsonArrayPieces } from "../../shared/bytes";
import { d1Statement, inJsonList, isUniqueFailure, JSON_PARAMETER_BYTES, type Database } from "../../shared/db";
import { duplicateRecord, recordNotFound, unknownReference } from "./errors";
import { articlesFts, matchesFts } from "./full-text";
import { orderOf, type SortKey } from "./sort";
import { articleCompanies, articles, companies, newsArticleTombstones } from "./tables";
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
  // The articles linked to a ticker, read from article_companies_ticker_idx: a condition on each article instead (a
  // correlated EXISTS) would walk every article of the window, for the page and again for the total.
  if (filter.tickers) {
    conditions.push(
      sql`${articles.id} IN (SELECT ${articleCompanies.articleId} FROM ${articleCompanies}
        WHERE ${inJsonList(articleCompanies.ticker, filter.tickers)})`,
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
  const order = [...orderOf(input.sort, ARTICLE_SORT_FIELDS), desc(articles.id)];
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

async function checkTickersExist(db: Database, tickers: string[]): Promise<void> {
  if (tickers.length === 0) return;
  const known = await db
    .select({ ticker: companies.ticker })
    .from(companies)
    .where(inJsonList(companies.ticker, tickers));
  const unknown = tickers.filter((ticker) => !known.some((row) => row.ticker === ticker));
  if (unknown.length > 0) {
    throw unknownReference("companies", tickers.join(","), `companies names unknown tickers: ${unknown.join(", ")}`);
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
    editedAt: input.now,
    createdAt: input.now,
    updatedAt: input.now,
  };
  const links = mergeLinks(explicit, matcher(matchText(title, abstract))).map((link) => ({ fingerprint, ...link }));
  try {
    const [inserted] = await db.$client.batch<{ id: number }>([
      d1Statement(db, db.insert(articles).values(row).returning({ id: articles.id })),
      ...insertLinksByFingerprint(links).map((statement) => d1Statement(db, statement)),
      d1Statement(db, untombstone(db, fingerprint)),
    ]);
    return (await getArticle(db, inserted.results[0].id))!;
  } catch (error) {
    if (isUniqueFailure(error)) throw duplicateRecord("title", "an article with this title and source already exists");
    throw error;
  }
}

export async function updateArticle(
  db: Database,
  input: Partial<ArticleInput> & { id: number; now: Date },
  matcher: Matcher,
): Promise<ArticleView> {
  const [existing] = await db.select().from(articles).where(eq(articles.id, input.id)).limit(1);
  if (!existing) throw recordNotFound();
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
  if (clash) throw duplicateRecord("title", "an article with this title and source already exists");

  const changes = {
    title,
    abstract,
    source,
    fingerprint,
    ...(input.url !== undefined && { url: input.url }),
    ...(input.thumbnail !== undefined && { thumbnail: input.thumbnail }),
    ...(input.publishedAt !== undefined && { publishedAt: input.publishedAt }),
    editedAt: input.now,
    updatedAt: input.now,
  };
  const links = mergeLinks(explicit, matcher(matchText(title, abstract)));
  try {
    await db.$client.batch([
      d1Statement(db, db.update(articles).set(changes).where(eq(articles.id, input.id))),
      d1Statement(db, db.delete(articleCompanies).where(eq(articleCompanies.articleId, input.id))),
      // The update above gives the article its new fingerprint first, in the same batch.
      ...insertLinksByFingerprint(links.map((link) => ({ fingerprint, ...link }))).map((statement) =>
        d1Statement(db, statement),
      ),
      // A new title or source is a new fingerprint: the story under the old one must not come back as a second copy.
      ...(fingerprint === existing.fingerprint
        ? []
        : [d1Statement(db, tombstone(db, existing.fingerprint, input.now))]),
      d1Statement(db, untombstone(db, fingerprint)),
    ]);
  } catch (error) {
    if (isUniqueFailure(error)) throw duplicateRecord("title", "an article with this title and source already exists");
    throw error;
  }
  // Deleted between the read above and the batch: the UPDATE found no row.
  const updated = await getArticle(db, input.id);
  if (!updated) throw recordNotFound();
  return updated;
}

/** Deletes an article, and keeps its fingerprint so that ingestion does not bring the story back. */
export async function deleteArticle(db: Database, id: number, now: Date): Promise<void> {
  const [, deleted] = await db.$client.batch<{ id: number }>([
    d1Statement(
      db,
      sql`INSERT INTO ${newsArticleTombstones} (fingerprint, removed_at)
        SELECT ${articles.fingerprint}, ${now.getTime()} FROM ${articles} WHERE ${articles.id} = ${id}
        ON CONFLICT (fingerprint) DO UPDATE SET removed_at = excluded.removed_at`,
    ),
    d1Statement(db, db.delete(articles).where(eq(articles.id, id)).returning({ id: articles.id })),
  ]);
  if (deleted.results.length === 0) throw recordNotFound();
}

const tombstone = (db: Database, fingerprint: string, now: Date) =>
  db
    .insert(newsArticleTombstones)
    .values({ fingerprint, removedAt: now })
    .onConflictDoUpdate({ target: newsArticleTombstones.fingerprint, set: { removedAt: now } });

/**
 * An admin who writes an article under a removed fingerprint wants that story: ingestion stops leaving it out. Only
 * while an article holds it, in the same batch: an edit that raced a delete (its UPDATE found no row) must not take
 * away the tombstone the delete just wrote.
 */
const untombstone = (db: Database, fingerprint: string) =>
  db
    .delete(newsArticleTombstones)
    .where(
      and(
        eq(newsArticleTombstones.fingerprint, fingerprint),
        sql`exists (select 1 from ${articles} where ${articles.fingerprint} = ${fingerprint})`,
      ),
    );

/**
 * Inserts link rows given by article fingerprint: one statement per JSON list of at most JSON_PARAMETER_BYTES, so
 * neither D1's 100 bound parameters nor its 2,000,000 bytes a value limit their number. No links, no statement.
 */
export function insertLinksByFingerprint(
  links: { fingerprint: string; ticker: string; origin: "text" | "explicit" }[],
): SQL[] {
  return jsonArrayPieces(links, JSON_PARAMETER_BYTES).map(
    (list) => sql`
    INSERT INTO ${articleCompanies} (article_id, ticker, origin)
    SELECT ${articles.id}, json_extract(link.value, '$.ticker'), json_extract(link.value, '$.origin')
    FROM json_each(${list}) AS link
    JOIN ${articles} ON ${articles.fingerprint} = json_extract(link.value, '$.fingerprint')
    WHERE true
    ON CONFLICT DO NOTHING`,
  );
}
