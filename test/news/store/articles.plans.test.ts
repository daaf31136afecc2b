// The plans of GET /news and GET /search on D1 (EXPLAIN QUERY PLAN of the repository's own statements): a company
// filter reads article_companies_ticker_idx, not every article of the window.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { listArticles, listArticlesQueries, type ListArticlesInput } from "../../../src/news/store/articles";
import { articleCompanies, articles, companies } from "../../../src/news/store/tables";
import { database } from "../../../src/shared/db";
import { queryPlan } from "../../support/query-plans";

const db = () => database(env.DB);
const WINDOW = { from: new Date("2021-06-01T00:00:00Z"), to: new Date("2026-06-01T00:00:00Z") };
const NEWEST_FIRST = [{ field: "publishedAt" as const, descending: true }];

/** The tickers' article ids, read once from article_companies_ticker_idx, then each article by its id. */
const byTickers = (list: number, json: number) => [
  "SEARCH articles USING INTEGER PRIMARY KEY (rowid=?)",
  `LIST SUBQUERY ${list}`,
  "  SEARCH article_companies USING COVERING INDEX article_companies_ticker_idx (ticker=?)",
  `  LIST SUBQUERY ${json}`,
  "    SCAN json_each VIRTUAL TABLE INDEX 1:",
  "    CREATE BLOOM FILTER",
  "  CREATE BLOOM FILTER",
];

describe("a company filter", () => {
  it("reads the linked articles from article_companies_ticker_idx, for the page and for the total", async () => {
    const input: ListArticlesInput = { tickers: ["BHP", "RIO"], ...WINDOW, page: 3, limit: 20, sort: NEWEST_FIRST };
    const [page, total] = listArticlesQueries(db(), input);
    // The sort reads only the matched articles; the tickers of each answered one come from the primary key.
    expect(await queryPlan(page)).toEqual([
      ...byTickers(3, 2),
      "CORRELATED SCALAR SUBQUERY 1",
      "  SEARCH article_companies USING COVERING INDEX sqlite_autoindex_article_companies_1 (article_id=?)",
      "USE TEMP B-TREE FOR ORDER BY",
    ]);
    expect(await queryPlan(total)).toEqual(byTickers(2, 1));
  });
});

/** Two companies of this test's own, and articles linked to them: no other test's article carries these tickers. */
async function linkedArticles() {
  const suffix = crypto.randomUUID().slice(0, 4).toUpperCase();
  const [first, second] = [`A${suffix}`, `B${suffix}`];
  await db()
    .insert(companies)
    .values([first, second].map((ticker) => ({ ticker, name: ticker, shortName: ticker })));
  const story = (title: string, publishedAt: string) => ({
    title,
    url: "https://example.com/story",
    source: "guardian",
    fingerprint: crypto.randomUUID(),
    publishedAt: new Date(publishedAt),
  });
  const rows = await db()
    .insert(articles)
    .values([
      story("first only", "2026-01-01T00:00:00Z"),
      story("both", "2026-02-01T00:00:00Z"),
      story("second only, as new as both", "2026-02-01T00:00:00Z"),
      story("neither", "2026-03-01T00:00:00Z"),
      story("first, before the window", "2020-01-01T00:00:00Z"),
    ])
    .returning({ id: articles.id });
  const ids = rows.map((row) => row.id);
  const links = [
    [ids[0], first],
    [ids[1], first],
    [ids[1], second],
    [ids[2], second],
    [ids[4], first],
  ] as const;
  await db()
    .insert(articleCompanies)
    .values(links.map(([articleId, ticker]) => ({ articleId, ticker })));
  return { first, second, ids };
}

describe("listing by companies", () => {
  it("answers each linked article of the window once, in the order asked, with the total", async () => {
    const { first, second, ids } = await linkedArticles();
    const list = async (page: number, sort: ListArticlesInput["sort"]) => {
      const { rows, total } = await listArticles(db(), { tickers: [first, second], ...WINDOW, page, limit: 2, sort });
      return { rows: rows.map((row) => [row.id, row.title, row.companies]), total };
    };
    expect(await list(1, NEWEST_FIRST)).toEqual({
      rows: [
        [ids[2], "second only, as new as both", [second]],
        [ids[1], "both", [first, second]],
      ],
      total: 3,
    });
    expect(await list(2, NEWEST_FIRST)).toEqual({ rows: [[ids[0], "first only", [first]]], total: 3 });
    expect(await list(1, [{ field: "title", descending: false }])).toEqual({
      rows: [
        [ids[1], "both", [first, second]],
        [ids[0], "first only", [first]],
      ],
      total: 3,
    });
    const { rows, total } = await listArticles(db(), { tickers: [first], page: 1, limit: 10, sort: NEWEST_FIRST });
    expect({ ids: rows.map((row) => row.id), total }).toEqual({ ids: [ids[1], ids[0], ids[4]], total: 3 });
  });
});
