// The plans and orders of GET /news and GET /users without a filter: every sort /news offers, either way, and the
// default of /users read in index order (EXPLAIN QUERY PLAN of the repositories' own statements), never a whole
// table sorted for one page; and the order itself, ties broken by id, as before the indexes.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import {
  ARTICLE_SORT_FIELDS,
  listArticles,
  listArticlesQueries,
  type ArticleSortField,
} from "../../../src/news/store/articles";
import { articles, newsUsers } from "../../../src/news/store/tables";
import { listUsers, listUsersQueries } from "../../../src/news/store/users";
import { database } from "../../../src/shared/db";
import { queryPlan } from "../../support/query-plans";

const db = () => database(env.DB);

/** The index each sort of /news reads (then id DESC): (key, id) backwards for DESC, (key, id DESC) forwards for ASC. */
const ARTICLE_SORT_INDEXES: Record<ArticleSortField, [ascending: string, descending: string]> = {
  publishedAt: ["articles_published_at_id_desc_idx", "articles_published_at_idx"],
  createdAt: ["articles_created_at_id_desc_idx", "articles_created_at_idx"],
  updatedAt: ["articles_updated_at_id_desc_idx", "articles_updated_at_idx"],
  title: ["articles_title_id_desc_idx", "articles_title_idx"],
  source: ["articles_source_id_desc_idx", "articles_source_idx"],
  id: ["", ""],
};
/** The tickers of each article on the page, by the primary key of article_companies. */
const TICKERS_OF_EACH = [
  "CORRELATED SCALAR SUBQUERY 1",
  "  SEARCH article_companies USING COVERING INDEX sqlite_autoindex_article_companies_1 (article_id=?)",
];

describe("plans without a filter", () => {
  for (const field of Object.keys(ARTICLE_SORT_FIELDS) as ArticleSortField[]) {
    for (const descending of [false, true]) {
      it(`GET /news?sort=${descending ? "-" : ""}${field} reads ${field} in index order`, async () => {
        const sort = [{ field, descending }];
        const [page] = listArticlesQueries(db(), { page: 500, limit: 20, sort });
        const index = ARTICLE_SORT_INDEXES[field][descending ? 1 : 0];
        // By id, the table itself is in order (its rowid).
        const read = index ? `SCAN articles USING INDEX ${index}` : "SCAN articles";
        expect(await queryPlan(page)).toEqual([read, ...TICKERS_OF_EACH]);
      });
    }
  }

  it("GET /users reads newest first (its default sort) in index order", async () => {
    const [page] = listUsersQueries(db(), { page: 50, limit: 20, sort: [{ field: "createdAt", descending: true }] });
    expect(await queryPlan(page)).toEqual(["SCAN news_users USING INDEX news_users_created_at_idx"]);
  });
});

describe("orders, ties broken by id", () => {
  it("GET /news: by the key either way, then the newest id first", async () => {
    const source = `sorts-${crypto.randomUUID()}`;
    const at = (day: number) => new Date(Date.UTC(2026, 0, day));
    const story = (title: string, created: number, updated: number, published: number) => ({
      title,
      url: "https://example.com/story",
      source,
      fingerprint: crypto.randomUUID(),
      createdAt: at(created),
      updatedAt: at(updated),
      publishedAt: at(published),
    });
    const rows = await db()
      .insert(articles)
      .values([story("b", 2, 3, 2), story("a", 2, 2, 3), story("b", 1, 3, 2), story("c", 3, 1, 1)])
      .returning({ id: articles.id });
    const [a0, a1, a2, a3] = rows.map((row) => row.id);
    const order = async (field: ArticleSortField, descending: boolean) => {
      const listed = await listArticles(db(), { sources: [source], page: 1, limit: 10, sort: [{ field, descending }] });
      return listed.rows.map((row) => row.id);
    };
    expect(await order("createdAt", false)).toEqual([a2, a1, a0, a3]);
    expect(await order("createdAt", true)).toEqual([a3, a1, a0, a2]);
    expect(await order("updatedAt", false)).toEqual([a3, a1, a2, a0]);
    expect(await order("updatedAt", true)).toEqual([a2, a0, a1, a3]);
    expect(await order("title", false)).toEqual([a1, a2, a0, a3]);
    expect(await order("title", true)).toEqual([a3, a2, a0, a1]);
    expect(await order("publishedAt", false)).toEqual([a3, a2, a0, a1]);
    expect(await order("publishedAt", true)).toEqual([a1, a2, a0, a3]);
    expect(await order("source", false)).toEqual([a3, a2, a1, a0]);
  });

  it("GET /users: newest first, then the smallest id first", async () => {
    const tag = crypto.randomUUID();
    const user = (suffix: string, day: number) => ({
      id: `${tag}-${suffix}`,
      email: `${tag}-${suffix}@example.com`,
      passwordHash: "x",
      name: suffix,
      picture: "",
      createdAt: new Date(Date.UTC(2026, 0, day)),
    });
    await db()
      .insert(newsUsers)
      .values([user("b", 2), user("a", 2), user("c", 1), user("d", 3)]);
    const listed = await listUsers(db(), {
      q: tag,
      page: 1,
      limit: 10,
      sort: [{ field: "createdAt", descending: true }],
    });
    expect({ ids: listed.rows.map((row) => row.id.slice(tag.length + 1)), total: listed.total }).toEqual({
      ids: ["d", "a", "b", "c"],
      total: 4,
    });
  });
});
