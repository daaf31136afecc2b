// The largest page of GET /news: 500 articles, as restfulnews allowed (users keep the generator's 100). Its own file:
// the 501 articles it stores would crowd the other list tests' pages.
import { beforeAll, describe, expect, it } from "vitest";
import { seedArticles, type SeedArticle } from "../../support/news-articles";
import { getJson, signUp } from "../../support/news-api";

let reader: string;

beforeAll(async () => {
  reader = (await signUp("page-size-reader@example.com")).token;
});

describe("GET /news?limit", () => {
  it("takes up to 500 articles a page, as restfulnews did, and answers 400 naming the limit beyond", async () => {
    const many: SeedArticle[] = Array.from({ length: 501 }, (_, index) => ({
      title: `Bulk story ${index}`,
      source: "bulk-limit.example",
      publishedAt: new Date(Date.UTC(2026, 0, 1) + index * 60_000).toISOString(),
    }));
    await seedArticles(many);
    const page = await getJson("/news?sources=bulk-limit.example&limit=500", reader);
    expect(page.status).toBe(200);
    expect(page.headers.get("X-Total-Count")).toBe("501");
    const titles = ((await page.json()) as { title: string }[]).map((article) => article.title);
    expect(titles).toEqual(
      many
        .slice(1)
        .map((article) => article.title)
        .reverse(),
    );
    const beyond = await getJson("/news?sources=bulk-limit.example&limit=501", reader);
    expect(beyond.status).toBe(400);
    expect(await beyond.json()).toEqual({
      valid: false,
      name: "max",
      param: "limit",
      value: 501,
      max: 500,
      message: "limit must be lower than or equal to 500",
    });
  });
});
