// The article routes: GET /news (paging, full text, filters, fields), GET /news/:id, and the admins' writes.
import { beforeAll, describe, expect, it } from "vitest";
import { call, callJson } from "../../support/worker-http";
import { SEED_ARTICLES, seedArticles } from "../../support/news-articles";
import type { ArticleView } from "../../../src/news/store/articles";
import { bearer, expectRefused, getJson, PAGING_REFUSALS, REFUSED, signUp, UNKNOWN_ID } from "../../support/news-api";
import { telstraArticleView } from "../../support/news-article-views";
import { expectNewsError } from "../../support/news-errors";

type Article = ArticleView;

let reader: string;
let admin: string;
let ids: Map<string, number>;

beforeAll(async () => {
  ids = await seedArticles();
  reader = (await signUp("news-reader@example.com")).token;
  admin = (await signUp("news-admin@example.com", { role: "admin" })).token;
});

async function list(
  query: string,
  token = reader,
): Promise<{ status: number; total: string | null; titles: string[]; body: unknown }> {
  const response = await getJson(`/news${query}`, token);
  const body = await response.json();
  return {
    status: response.status,
    total: response.headers.get("X-Total-Count"),
    titles: Array.isArray(body) ? (body as Article[]).map((article) => article.title) : [],
    body,
  };
}

const newestFirst = [...SEED_ARTICLES]
  .sort((a, b) => b.publishedAt.localeCompare(a.publishedAt))
  .map((article) => article.title);

describe("GET /news", () => {
  it("needs a signed-in user", async () => {
    await expectRefused(await call("/news"), REFUSED.token);
  });

  it("answers a bare array of 30 articles, newest first, with the total in X-Total-Count", async () => {
    const result = await list("");
    expect(result.status).toBe(200);
    expect(result.total).toBe(String(SEED_ARTICLES.length));
    expect(result.titles).toEqual(newestFirst.slice(0, 30));
    const [first] = result.body as Article[];
    expect(first).toEqual(telstraArticleView(ids.get("Telstra switches on its 5G network in the outback"), ["TLS"]));
  });

  it("pages with page and limit, keeping the total", async () => {
    expect(await list("?page=2")).toMatchObject({ total: "36", titles: newestFirst.slice(30) });
    expect(await list("?limit=10&page=4")).toMatchObject({ total: "36", titles: newestFirst.slice(30, 36) });
    expect(await list("?limit=5&page=2")).toMatchObject({ total: "36", titles: newestFirst.slice(5, 10) });
    expect(await list("?page=9")).toMatchObject({ status: 200, total: "36", titles: [] });
  });

  const badQueries: [string, Record<string, unknown>][] = [
    // The largest page of /news is 500 (list.page-size.test.ts), where the other lists' is 100.
    ...PAGING_REFUSALS.filter(([query]) => query !== "?limit=101"),
    [
      "?from=yesterday",
      {
        valid: false,
        name: "type",
        param: "from",
        value: "yesterday",
        message: "from must be an ISO 8601 date such as 2024-05-01 or 2024-05-01T09:30:00Z",
      },
    ],
    [
      "?companies=B-H",
      {
        valid: false,
        name: "match",
        param: "companies.0",
        value: "B-H",
        match: "/^[A-Z0-9]{1,6}$/",
        message: "companies.0 must match regular expression /^[A-Z0-9]{1,6}$/",
      },
    ],
    [
      "?sort=-popularity",
      {
        valid: false,
        name: "enum",
        param: "sort",
        value: "-popularity",
        enum: ["publishedAt", "createdAt", "updatedAt", "title", "source", "id"],
        message: "sort must be one of: publishedAt, createdAt, updatedAt, title, source, id (with - for descending)",
      },
    ],
  ];
  for (const [query, expected] of badQueries) {
    it(`answers 400 with the validation object for ${query}`, async () => {
      const result = await list(query);
      expect(result.status).toBe(400);
      expect(result.body).toEqual(expected);
    });
  }

  it("searches title and abstract with FTS5, stemming words", async () => {
    // "mining" finds the title word "mining" and the abstract word "Mining"; porter stemming keeps "mine" forms together.
    expect(await list("?q=mining")).toMatchObject({
      total: "2",
      titles: ["Westpac mining loans under scrutiny", "BHP and Rio Tinto ramp up iron ore exports"],
    });
    expect(await list("?q=profits")).toMatchObject({
      total: "1",
      titles: ["Commonwealth Bank posts a record half-year profit"],
    });
  });

  it("needs every word, and supports phrases, prefixes and OR", async () => {
    expect((await list("?q=iron%20exports")).titles).toEqual(["BHP and Rio Tinto ramp up iron ore exports"]);
    expect((await list("?q=iron%20airfares")).titles).toEqual([]);
    expect((await list(`?q=${encodeURIComponent('"ore exports"')}`)).titles).toEqual([
      "BHP and Rio Tinto ramp up iron ore exports",
    ]);
    expect((await list(`?q=${encodeURIComponent('"exports ore"')}`)).titles).toEqual([]);
    expect((await list("?q=lith*")).titles).toEqual(["Lithium price slump hits Pilbara Minerals"]);
    expect((await list("?q=westpac%20OR%20qantas")).titles).toEqual([
      "Westpac mining loans under scrutiny",
      "Qantas fares rise ahead of the summer holidays",
    ]);
  });

  it("never lets query syntax through: quotes, operators and punctuation are only text", async () => {
    // AND is only the word "and" here (which the BHP title has); the quote, bracket, star and minus are dropped.
    expect(await list(`?q=${encodeURIComponent('bhp" AND ( * -')}`)).toMatchObject({
      status: 200,
      titles: ["BHP and Rio Tinto ramp up iron ore exports"],
    });
    expect(await list(`?q=${encodeURIComponent("qantas NOT fares")}`)).toMatchObject({ status: 200, titles: [] });
    expect(await list(`?q=${encodeURIComponent("title:qantas")}`)).toMatchObject({ status: 200, titles: [] });
    expect(await list(`?q=${encodeURIComponent("!!! ???")}`)).toMatchObject({ status: 200, total: "0", titles: [] });
  });

  it("filters by companies (any of the tickers, any case)", async () => {
    expect((await list("?companies=BHP")).titles).toEqual(["BHP and Rio Tinto ramp up iron ore exports"]);
    expect(await list("?companies=cba,bhp")).toMatchObject({
      total: "2",
      titles: ["Commonwealth Bank posts a record half-year profit", "BHP and Rio Tinto ramp up iron ore exports"],
    });
    expect(await list("?companies=ZZZ")).toMatchObject({ total: "0", titles: [] });
  });

  // Each case lists queries and the titles each answers, in order.
  it.each<[string, [string, string[]][]]>([
    [
      "filters by sources",
      [
        [
          "?sources=nyt",
          ["Lithium price slump hits Pilbara Minerals", "Qantas fares rise ahead of the summer holidays"],
        ],
        [
          "?sources=NYT,abc.net.au",
          [
            "Telstra switches on its 5G network in the outback",
            "Lithium price slump hits Pilbara Minerals",
            "Qantas fares rise ahead of the summer holidays",
          ],
        ],
      ],
    ],
    [
      "honours from and to, a bare to date including its whole day",
      [
        [
          "?from=2026-03-01&to=2026-03-15",
          ["Westpac mining loans under scrutiny", "Commonwealth Bank posts a record half-year profit"],
        ],
        ["?from=2026-03-01T00:00:01Z&to=2026-03-15T09:59:59Z", []],
        ["?to=2025-06-02", ["Market wrap for day 2", "Market wrap for day 1"]],
        [
          "?from=2026-03-15T21:00:00%2B11:00",
          ["Telstra switches on its 5G network in the outback", "Westpac mining loans under scrutiny"],
        ],
      ],
    ],
    [
      "sorts by a comma list, - for descending",
      [
        ["?sort=publishedAt&limit=2", ["Market wrap for day 1", "Market wrap for day 2"]],
        [
          "?sort=-source,publishedAt&limit=3",
          ["Market wrap for day 1", "Market wrap for day 2", "Market wrap for day 3"],
        ],
        [
          "?sort=source,-publishedAt&limit=3",
          [
            "Telstra switches on its 5G network in the outback",
            "Westpac mining loans under scrutiny",
            "Commonwealth Bank posts a record half-year profit",
          ],
        ],
      ],
    ],
  ])("%s", async (_name, queries) => {
    for (const [query, titles] of queries) expect((await list(query)).titles, query).toEqual(titles);
  });

  it("combines full text, filters and paging", async () => {
    expect(await list("?q=mining&sources=guardian")).toMatchObject({
      total: "1",
      titles: ["BHP and Rio Tinto ramp up iron ore exports"],
    });
    expect(await list("?q=wrap&from=2025-06-10&to=2025-06-19&limit=3&page=2&sort=publishedAt")).toMatchObject({
      total: "10",
      titles: ["Market wrap for day 13", "Market wrap for day 14", "Market wrap for day 15"],
    });
  });

  it("keeps only the fields asked for (id always), or drops the - ones", async () => {
    const only = await list("?fields=title,source&limit=1");
    expect(only.body).toEqual([
      {
        id: ids.get("Telstra switches on its 5G network in the outback"),
        title: "Telstra switches on its 5G network in the outback",
        source: "abc.net.au",
      },
    ]);
    const without = await list("?fields=-abstract,-fingerprint&limit=1");
    expect(Object.keys((without.body as object[])[0]).sort()).toEqual([
      "companies",
      "createdAt",
      "id",
      "publishedAt",
      "source",
      "thumbnail",
      "title",
      "updatedAt",
      "url",
    ]);
  });
});

describe("GET /news/:id", () => {
  it("answers the article to a signed-in user, 404 for unknown or malformed ids", async () => {
    const id = ids.get("Lithium price slump hits Pilbara Minerals")!;
    const response = await getJson(`/news/${id}`, reader);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      id,
      source: "nyt",
      companies: ["PLS"],
      publishedAt: "2026-02-05T09:00:00.000Z",
    });
    for (const path of ["/news/999999", "/news/abc", "/news/0", "/news/1e3"]) {
      const missing = await getJson(path, reader);
      expect(missing.status).toBe(404);
      expect(await missing.json()).toEqual(UNKNOWN_ID);
    }
    expect((await call(`/news/${id}`)).status).toBe(401);
  });
});

describe("POST, PUT and DELETE /news (admins only)", () => {
  const story = {
    title: "Woodside and <em>Santos Ltd</em> revive merger talks",
    url: "https://desk.example.com/woodside-santos",
    source: "Admin-Desk",
    abstract: "<p>The two gas producers have &quot;re-engaged&quot;, according to people familiar with the matter.</p>",
    publishedAt: "2026-04-10T08:00:00Z",
    companies: "bhp",
  };

  it("refuses users and anonymous callers with 401, writing nothing", async () => {
    expect((await callJson("/news", "POST", story, bearer(reader))).status).toBe(401);
    expect((await callJson("/news", "POST", story)).status).toBe(401);
    const id = ids.get("Qantas fares rise ahead of the summer holidays")!;
    expect((await callJson(`/news/${id}`, "PUT", { title: "Hacked" }, bearer(reader))).status).toBe(401);
    expect((await call(`/news/${id}`, { method: "DELETE", headers: bearer(reader) })).status).toBe(401);
    expect((await list("?sources=admin-desk")).titles).toEqual([]);
    expect((await getJson(`/news/${id}`, reader)).status).toBe(200);
  });

  it("creates, updates and deletes an article, linking companies by the matcher plus the named ones", async () => {
    const created = await callJson("/news", "POST", story, bearer(admin));
    expect(created.status).toBe(201);
    const article = (await created.json()) as Article;
    expect(article).toMatchObject({
      title: "Woodside and Santos Ltd revive merger talks",
      abstract: 'The two gas producers have "re-engaged", according to people familiar with the matter.',
      source: "admin-desk",
      publishedAt: "2026-04-10T08:00:00.000Z",
      thumbnail: null,
      companies: ["BHP", "STO", "WDS"],
    });
    expect((await list("?q=merger")).titles).toEqual([article.title]);

    const duplicate = await callJson(
      "/news",
      "POST",
      { ...story, url: "https://desk.example.com/other" },
      bearer(admin),
    );
    await expectNewsError(duplicate, 409, "unique", "title", "an article with this title and source already exists");

    // A new title drops the matched links that no longer apply; the named company (BHP) stays.
    const renamed = await callJson(
      `/news/${article.id}`,
      "PUT",
      { title: "Woodside walks away from merger talks", abstract: "" },
      bearer(admin),
    );
    expect(renamed.status).toBe(200);
    const updated = (await renamed.json()) as Article;
    expect(updated).toMatchObject({
      id: article.id,
      title: "Woodside walks away from merger talks",
      abstract: "",
      companies: ["BHP", "WDS"],
    });
    expect(updated.fingerprint).not.toBe(article.fingerprint);
    expect((await list("?q=revive")).titles).toEqual([]);
    expect((await list("?q=walks")).titles).toEqual([updated.title]);

    // Naming companies replaces the named ones.
    const relinked = await callJson(`/news/${article.id}`, "PUT", { companies: [] }, bearer(admin));
    expect(((await relinked.json()) as Article).companies).toEqual(["WDS"]);

    const deleted = await call(`/news/${article.id}`, { method: "DELETE", headers: bearer(admin) });
    expect(deleted.status).toBe(204);
    expect((await getJson(`/news/${article.id}`, reader)).status).toBe(404);
    expect((await list("?q=walks")).titles).toEqual([]);
    expect((await call(`/news/${article.id}`, { method: "DELETE", headers: bearer(admin) })).status).toBe(404);
    expect((await callJson(`/news/${article.id}`, "PUT", { title: "Gone" }, bearer(admin))).status).toBe(404);
  });

  it("answers 409 when an edit would give an article another one's title and source", async () => {
    const id = ids.get("Qantas fares rise ahead of the summer holidays")!;
    const response = await callJson(
      `/news/${id}`,
      "PUT",
      { title: "Lithium price slump hits Pilbara Minerals" },
      bearer(admin),
    );
    expect(response.status).toBe(409);
    expect((await getJson(`/news/${id}`, reader).then((r) => r.json())) as Article).toMatchObject({
      title: "Qantas fares rise ahead of the summer holidays",
    });
  });

  it("validates what it stores", async () => {
    const cases: [Record<string, unknown>, Record<string, unknown>][] = [
      [
        { ...story, title: undefined },
        { name: "required", param: "title" },
      ],
      [
        { ...story, title: " <br> <!-- x --> " },
        {
          valid: false,
          name: "required",
          param: "title",
          value: "<br> <!-- x -->",
          message: "title must hold text, not only HTML tags",
        },
      ],
      [
        { ...story, url: "javascript:alert(1)" },
        { name: "match", param: "url", value: "javascript:alert(1)" },
      ],
      [
        { ...story, publishedAt: "soon" },
        { name: "type", param: "publishedAt" },
      ],
      [
        { ...story, companies: "BHP,XYZ" },
        {
          valid: false,
          name: "exists",
          param: "companies",
          value: "BHP,XYZ",
          message: "companies names unknown tickers: XYZ",
        },
      ],
    ];
    for (const [body, expected] of cases) {
      const response = await callJson("/news", "POST", body, bearer(admin));
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ valid: false, ...expected });
    }
    expect((await list("?sources=admin-desk")).titles).toEqual([]);
  });
});
