// A small, fixed set of stored articles for the /news and /search tests, written through the ingestion upsert.
import { env } from "cloudflare:workers";
import { upsertArticles, type IncomingArticle } from "../../src/news/store/upsert";
import { articleFingerprint } from "../../src/news/store/text";
import { database } from "../../src/shared/db";

export interface SeedArticle {
  title: string;
  abstract?: string;
  source: string;
  publishedAt: string;
  tickers?: string[];
}

export const SEED_ARTICLES: SeedArticle[] = [
  {
    title: "BHP and Rio Tinto ramp up iron ore exports",
    abstract: "Mining exports rose for a third month as Chinese mills restocked.",
    source: "guardian",
    publishedAt: "2026-01-10T03:00:00Z",
    tickers: ["BHP", "RIO"],
  },
  {
    title: "Lithium price slump hits Pilbara Minerals",
    abstract: "The producer cut its guidance again.",
    source: "nyt",
    publishedAt: "2026-02-05T09:00:00Z",
    tickers: ["PLS"],
  },
  {
    title: "Commonwealth Bank posts a record half-year profit",
    abstract: "Home lending grew faster than the market.",
    source: "guardian",
    publishedAt: "2026-03-01T00:00:00Z",
    tickers: ["CBA"],
  },
  {
    title: "Westpac mining loans under scrutiny",
    abstract: "The regulator asks how exposed the bank is to coal.",
    source: "afr.com",
    publishedAt: "2026-03-15T10:00:00Z",
    tickers: ["WBC"],
  },
  {
    title: "Qantas fares rise ahead of the summer holidays",
    abstract: "Domestic airfares climbed 8% in a month.",
    source: "nyt",
    publishedAt: "2025-12-20T22:00:00Z",
    tickers: ["QAN"],
  },
  {
    title: "Telstra switches on its 5G network in the outback",
    abstract: "Regional towns get faster mobile data.",
    source: "abc.net.au",
    publishedAt: "2026-04-01T01:00:00Z",
    tickers: ["TLS"],
  },
  // Thirty market wraps for paging: one a day from 1 June 2025, no company named.
  ...Array.from({ length: 30 }, (_, day) => ({
    title: `Market wrap for day ${day + 1}`,
    abstract: "Shares closed mixed.",
    source: "wire.example",
    publishedAt: new Date(Date.UTC(2025, 5, 1 + day, 6)).toISOString(),
  })),
];

/** Stores the seed articles and returns their ids by title. */
export async function seedArticles(articles: SeedArticle[] = SEED_ARTICLES): Promise<Map<string, number>> {
  const db = database(env.DB);
  const incoming: IncomingArticle[] = await Promise.all(
    articles.map(async (article) => ({
      fingerprint: await articleFingerprint(article.title, article.source),
      title: article.title,
      abstract: article.abstract ?? "",
      url: `https://${article.source.replace(/^(guardian|nyt)$/, "$1.example")}/${encodeURIComponent(article.title)}`,
      thumbnail: null,
      source: article.source,
      publishedAt: new Date(article.publishedAt),
      tickers: article.tickers ?? [],
    })),
  );
  const now = new Date("2026-05-01T00:00:00Z");
  await upsertArticles(db, { articles: incoming, cursor: { publisher: "test-seed", fetchedUntil: now }, now });
  const rows = await env.DB.prepare("SELECT id, title FROM articles").all<{ id: number; title: string }>();
  return new Map(rows.results.map((row) => [row.title, row.id]));
}
