// The batched upsert by fingerprint that ingestion stores publishers' articles with, and each publisher's cursor.
import { eq, sql } from "drizzle-orm";
import { jsonArrayPieces } from "../../shared/bytes";
import { d1Statement, inJsonList, JSON_PARAMETER_BYTES, type Database } from "../../shared/db";
import { insertLinksByFingerprint } from "./articles";
import { articleCompanies, articles, newsArticleTombstones, newsIngestCursors } from "./tables";

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
  /** Stories an admin deleted or retitled (see newsArticleTombstones), left out. */
  removed: number;
}

/** The stored rows of these fingerprints, and which of them an admin removed. */
async function storedState(db: Database, fingerprints: string[]) {
  const [before, removed] = await db.batch([
    db
      .select({
        fingerprint: articles.fingerprint,
        abstract: articles.abstract,
        url: articles.url,
        thumbnail: articles.thumbnail,
        editedAt: articles.editedAt,
      })
      .from(articles)
      .where(inJsonList(articles.fingerprint, fingerprints)),
    db
      .select({ fingerprint: newsArticleTombstones.fingerprint })
      .from(newsArticleTombstones)
      .where(inJsonList(newsArticleTombstones.fingerprint, fingerprints)),
  ]);
  return {
    known: new Map(before.map((row) => [row.fingerprint, row])),
    removed: new Set(removed.map((row) => row.fingerprint)),
  };
}

/** Inserts the rows of a JSON list, or brings a known article up to date (see upsertArticles). */
const insertOrUpdateRows = (list: string) => sql`
      INSERT INTO ${articles} (fingerprint, title, abstract, url, thumbnail, source, published_at, created_at, updated_at)
      SELECT json_extract(row.value, '$.fingerprint'), json_extract(row.value, '$.title'), json_extract(row.value, '$.abstract'),
        json_extract(row.value, '$.url'), json_extract(row.value, '$.thumbnail'), json_extract(row.value, '$.source'),
        json_extract(row.value, '$.publishedAt'), json_extract(row.value, '$.now'), json_extract(row.value, '$.now')
      FROM json_each(${list}) AS row
      -- Checked again here, in the batch: an admin's delete may have come since storedState read the tombstones.
      WHERE json_extract(row.value, '$.fingerprint') NOT IN (SELECT ${newsArticleTombstones.fingerprint} FROM ${newsArticleTombstones})
      ON CONFLICT (fingerprint) DO UPDATE SET
        abstract = CASE WHEN excluded.abstract = '' THEN abstract ELSE excluded.abstract END,
        url = excluded.url, thumbnail = coalesce(thumbnail, excluded.thumbnail), updated_at = excluded.updated_at
      WHERE edited_at IS NULL AND (${changedSql})`;

/**
 * Stores articles by fingerprint in one batch together with the publisher's new cursor: a new fingerprint is
 * inserted; a known one takes the publisher's latest abstract and url (its title, source, publishedAt and
 * createdAt stay). Links found by the matcher are replaced, unless the story came without an abstract and keeps its
 * stored one; links an admin made explicitly stay. An article an admin wrote is left as it is, and a story an admin
 * removed (a tombstone) is not stored again: the publisher brings both back on every run of their day.
 */
export async function upsertArticles(
  db: Database,
  input: { articles: IncomingArticle[]; cursor: { publisher: string; fetchedUntil: Date }; now: Date },
): Promise<UpsertOutcome> {
  const deduplicated = [...new Map(input.articles.map((article) => [article.fingerprint, article])).values()];
  const state = await storedState(
    db,
    deduplicated.map((article) => article.fingerprint),
  );
  const unique = deduplicated.filter((article) => !state.removed.has(article.fingerprint));
  const known = new Map([...state.known].filter(([fingerprint]) => !state.removed.has(fingerprint)));

  const now = input.now.getTime();
  const rows = unique.map((article) => ({ ...article, publishedAt: article.publishedAt.getTime(), now }));
  const { relinkedFingerprints, links } = textLinks(unique, known);
  const cursor = { publisher: input.cursor.publisher, fetchedUntil: input.cursor.fetchedUntil, updatedAt: input.now };
  await db.$client.batch([
    // One statement per JSON list of rows within a D1 value: a feed's 500 items with long links take several.
    ...jsonArrayPieces(rows, JSON_PARAMETER_BYTES).map((list) => d1Statement(db, insertOrUpdateRows(list))),
    d1Statement(
      db,
      sql`
      DELETE FROM ${articleCompanies} WHERE ${articleCompanies.origin} = 'text' AND ${articleCompanies.articleId} IN
        (SELECT ${articles.id} FROM ${articles}
          WHERE ${articles.editedAt} IS NULL AND ${inJsonList(articles.fingerprint, relinkedFingerprints)})`,
    ),
    ...insertLinksByFingerprint(links).map((statement) => d1Statement(db, statement)),
    d1Statement(
      db,
      db
        .insert(newsIngestCursors)
        .values(cursor)
        .onConflictDoUpdate({ target: newsIngestCursors.publisher, set: cursor }),
    ),
  ]);

  const updated = unique.filter((article) => {
    const row = known.get(article.fingerprint);
    return row !== undefined && row.editedAt === null && isChanged(row, article);
  }).length;
  const removed = deduplicated.length - unique.length;
  return { inserted: unique.length - known.size, updated, unchanged: known.size - updated, removed };
}

/**
 * The text links to write, and the articles whose text links they replace. A known story that comes again without an
 * abstract keeps its stored one, and so the links found in it: its incoming tickers were matched on the title alone.
 */
function textLinks(unique: IncomingArticle[], known: ReadonlyMap<string, { editedAt: Date | null }>) {
  // An article an admin wrote keeps the links found in the admin's text.
  const relinked = unique.filter((article) => {
    const row = known.get(article.fingerprint);
    return row === undefined || (row.editedAt === null && article.abstract !== "");
  });
  return {
    relinkedFingerprints: relinked.map((article) => article.fingerprint),
    links: relinked.flatMap(({ fingerprint, tickers }) =>
      tickers.map((ticker) => ({ fingerprint, ticker, origin: "text" as const })),
    ),
  };
}

export async function getCursor(db: Database, publisher: string): Promise<Date | undefined> {
  const [row] = await db.select().from(newsIngestCursors).where(eq(newsIngestCursors.publisher, publisher)).limit(1);
  return row?.fetchedUntil;
}
