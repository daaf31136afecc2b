// The article and search routes refused exactly: the admins' writes (POST, PUT, DELETE /news) to a user's token
// however it is sent, the master key and anonymous callers, and the readers' routes (GET /news/{id}, GET /search) to
// anonymous callers and a token that is none, each answer the 401 of a refused token with its Bearer challenge, and
// nothing is written.
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { bearer, expectRefused, MASTER_KEY, REFUSED, signUp } from "../../support/news-api";
import { SEED_ARTICLES, seedArticles } from "../../support/news-articles";
import { call } from "../../support/worker-http";

const STORY = {
  title: "Woodside and Santos revive merger talks",
  url: "https://desk.example.com/refused-story",
  source: "Admin-Desk",
  abstract: "The two gas producers have re-engaged.",
  publishedAt: "2026-04-10T08:00:00Z",
  companies: "bhp",
};

/** Every row an article write could change. */
const stored = async () => {
  const rows = (query: string) =>
    env.DB.prepare(query)
      .all()
      .then((result) => result.results);
  return {
    articles: await rows("select * from articles order by id"),
    links: await rows("select * from article_companies order by article_id, ticker"),
    tombstones: await rows("select * from news_article_tombstones order by fingerprint"),
  };
};

let readerToken: string;
let articleId: number;

// Two stored articles and a signed-in user with the role user.
beforeAll(async () => {
  const ids = await seedArticles(SEED_ARTICLES.slice(0, 2));
  articleId = ids.get(SEED_ARTICLES[0].title)!;
  readerToken = (await signUp("refused-reader@example.com")).token;
});

/** How a caller presents itself: extra headers, and a query string for access_token. */
interface Caller {
  headers: Record<string, string>;
  query: string;
}

const callers: Record<string, () => Caller> = {
  anonymous: () => ({ headers: {}, query: "" }),
  "a user's token as a Bearer": () => ({ headers: bearer(readerToken), query: "" }),
  "a user's token as access_token": () => ({ headers: {}, query: `?access_token=${readerToken}` }),
  "the master key": () => ({ headers: bearer(MASTER_KEY), query: "" }),
  "a token that is none": () => ({ headers: bearer("not-a-token"), query: "" }),
};

/** Method, path ({id}: a stored article), body, and the callers each route refuses. */
const routes: [string, string, unknown, string[]][] = [
  ["POST", "/news", STORY, Object.keys(callers)],
  ["PUT", "/news/{id}", { title: "Hacked" }, Object.keys(callers)],
  ["DELETE", "/news/{id}", undefined, Object.keys(callers)],
  ["GET", "/news/{id}", undefined, ["anonymous", "a token that is none"]],
  ["GET", "/search", undefined, ["anonymous", "a token that is none"]],
];

function send(method: string, path: string, body: unknown, caller: Caller): Promise<Response> {
  const headers: Record<string, string> = { ...caller.headers };
  if (body !== undefined) headers["content-type"] = "application/json";
  return call(`${path.replace("{id}", String(articleId))}${caller.query}`, {
    method,
    headers,
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
}

describe("the article routes refuse", () => {
  for (const [method, path, body, refused] of routes) {
    for (const who of refused) {
      it(`${method} ${path} to ${who} with the 401 of a refused token, writing nothing`, async () => {
        const before = await stored();
        await expectRefused(await send(method, path, body, callers[who]()), REFUSED.token);
        expect(await stored()).toEqual(before);
      });
    }
  }

  it("leave the article as it was, for a reader to read", async () => {
    for (const [method, path, body, refused] of routes)
      for (const who of refused) expect((await send(method, path, body, callers[who]())).status).toBe(401);
    const response = await call(`/news/${articleId}`, { headers: bearer(readerToken) });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ id: articleId, title: SEED_ARTICLES[0].title });
  });
});
