// D1 tables of the news API: its users, the articles gathered from publishers, the ASX companies they mention,
// each publisher's ingestion cursor and the fingerprints of the articles admins removed. The FTS5 index over articles lives in a hand-written migration.
import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, type SQLiteColumn } from "drizzle-orm/sqlite-core";

/** An index column in descending order (drizzle's SQLite indexes take columns or SQL). */
const descending = (column: SQLiteColumn) => sql`${column} desc`;

/** The two indexes that let a list ordered by `key` (either way) and then id DESC read in index order. */
const sortIndexes = (name: string, key: SQLiteColumn, id: SQLiteColumn) => [
  index(`${name}_idx`).on(key, id),
  index(`${name}_id_desc_idx`).on(key, descending(id)),
];

const createdAt = () =>
  integer("created_at", { mode: "timestamp_ms" })
    .notNull()
    .default(sql`(unixepoch() * 1000)`);
const updatedAt = () =>
  integer("updated_at", { mode: "timestamp_ms" })
    .notNull()
    .default(sql`(unixepoch() * 1000)`);

/** Prefixed so it cannot collide with the proxy API's users. */
export const newsUsers = sqliteTable(
  "news_users",
  {
    /** Random UUID: ids appear in URLs and tokens, so they must not be guessable or enumerable. */
    id: text("id").primaryKey(),
    /** Trimmed and lower-cased before it is stored, so uniqueness ignores case. */
    email: text("email").notNull().unique(),
    passwordHash: text("password_hash").notNull(),
    name: text("name").notNull(),
    picture: text("picture").notNull(),
    role: text("role", { enum: ["user", "admin"] })
      .notNull()
      .default("user"),
    /**
     * Raised by every password change. Tokens carry the value they were issued under (claim `ver`) and one that no
     * longer matches is refused, so a new password ends every session opened before it.
     */
    tokenVersion: integer("token_version").notNull().default(0),
    /**
     * When the password last changed (null: never, since the account was created or migrated). Tokens of the original
     * service carry no version, only their issue time (`iat`): one issued before this is refused.
     */
    passwordChangedAt: integer("password_changed_at", { mode: "timestamp_ms" }),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  // GET /users lists newest first by default (created_at DESC, then id ASC): this index, read backwards.
  (table) => [index("news_users_created_at_idx").on(table.createdAt, descending(table.id))],
);

export const articles = sqliteTable(
  "articles",
  {
    /** Integer so that the FTS5 external-content index can use it as its rowid. */
    id: integer("id").primaryKey({ autoIncrement: true }),
    /** md5(title + source), hex: the same story from the same publisher is stored once. */
    fingerprint: text("fingerprint").notNull().unique(),
    title: text("title").notNull(),
    /** Plain text (HTML removed), at most 256 characters plus " ..." when cut. */
    abstract: text("abstract").notNull().default(""),
    url: text("url").notNull(),
    thumbnail: text("thumbnail"),
    /** guardian, nyt, or the feed's host name. */
    source: text("source").notNull(),
    publishedAt: integer("published_at", { mode: "timestamp_ms" }).notNull(),
    /**
     * When an admin last wrote the article (POST or PUT /news); null for one as a publisher gave it. Ingestion never
     * rewrites an article an admin wrote: its abstract, url and links stay the admin's.
     */
    editedAt: integer("edited_at", { mode: "timestamp_ms" }),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  // GET /news orders by one key and then id DESC, so a key needs two indexes: (key, id) read backwards serves the
  // key descending, (key, id DESC) read forwards the key ascending; no page reads and sorts the whole table.
  (table) => [
    index("articles_published_at_idx").on(table.publishedAt),
    index("articles_source_published_at_idx").on(table.source, table.publishedAt),
    index("articles_published_at_id_desc_idx").on(table.publishedAt, descending(table.id)),
    ...sortIndexes("articles_created_at", table.createdAt, table.id),
    ...sortIndexes("articles_updated_at", table.updatedAt, table.id),
    ...sortIndexes("articles_title", table.title, table.id),
    ...sortIndexes("articles_source", table.source, table.id),
  ],
);

export const companies = sqliteTable("companies", {
  /** ASX ticker, upper case (BHP, CBA, S32). */
  ticker: text("ticker").primaryKey(),
  name: text("name").notNull(),
  shortName: text("short_name").notNull(),
  website: text("website"),
  /**
   * Names an article may use for the company, matched as whole words: a word in capitals (NAB) only as written, any
   * other in any case (see companyMatcher). Curated rather than derived: short names such as "Origin" or "Seek" are
   * ordinary words and would link unrelated stories.
   */
  aliases: text("aliases", { mode: "json" })
    .$type<string[]>()
    .notNull()
    .default(sql`'[]'`),
});

export const articleCompanies = sqliteTable(
  "article_companies",
  {
    articleId: integer("article_id")
      .notNull()
      .references(() => articles.id, { onDelete: "cascade" }),
    ticker: text("ticker")
      .notNull()
      .references(() => companies.ticker, { onDelete: "cascade" }),
    /** "text" when the matcher found the company in the article; "explicit" when an admin named it. */
    origin: text("origin", { enum: ["text", "explicit"] })
      .notNull()
      .default("text"),
  },
  (table) => [
    primaryKey({ columns: [table.articleId, table.ticker] }),
    index("article_companies_ticker_idx").on(table.ticker, table.articleId),
  ],
);

/** Where each publisher's last successful ingestion ended, so the next run asks only for what is newer. */
export const newsIngestCursors = sqliteTable("news_ingest_cursors", {
  /** guardian, nyt, or feed:<url>. */
  publisher: text("publisher").primaryKey(),
  fetchedUntil: integer("fetched_until", { mode: "timestamp_ms" }).notNull(),
  updatedAt: updatedAt(),
});

/**
 * The fingerprints of articles an admin removed: deleted, or given another title or source (which is another
 * fingerprint). Publishers bring a story again on every run of its day, and a feed its undated items on every run:
 * ingestion leaves these out, so that an admin's delete stays deleted and an edited title leaves no second copy.
 * An admin's POST or PUT of an article with one of these fingerprints takes it off the list.
 */
export const newsArticleTombstones = sqliteTable("news_article_tombstones", {
  fingerprint: text("fingerprint").primaryKey(),
  removedAt: integer("removed_at", { mode: "timestamp_ms" }).notNull(),
});
