// PUT /news/{id} with many company links: no statement binds more than D1's 100 parameters, whatever the links
// (workerd's local D1 refuses more, as D1 does).
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { app } from "../../../src/app";
import type { ArticleView } from "../../../src/news/store/articles";
import { bearer, signUp } from "../../support/news-api";
import { callJson } from "../../support/worker-http";

let admin: string;
let tickers: string[];

beforeAll(async () => {
  admin = (await signUp("many-links-admin@example.com", { role: "admin" })).token;
  const { results } = await env.DB.prepare("select ticker from companies order by ticker").all<{ ticker: string }>();
  tickers = results.map((row) => row.ticker);
});

describe("PUT /news/{id} with many companies", () => {
  it("links all 70 seeded companies: no statement binds a parameter per link", async () => {
    expect(tickers).toHaveLength(70);
    const created = await callJson(
      "/news",
      "POST",
      { title: "Every listed company at once", url: "https://desk.example.com/all", source: "many-links-desk" },
      bearer(admin),
    );
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as ArticleView;

    const response = await app.request(
      `/news/${id}`,
      {
        method: "PUT",
        headers: { "content-type": "application/json", ...bearer(admin) },
        body: JSON.stringify({ companies: tickers }),
      },
      env,
    );
    expect(response.status).toBe(200);
    expect(((await response.json()) as ArticleView).companies).toEqual(tickers);

    // A later edit that names no companies keeps the 70 explicit links, again within the limit.
    const retitled = await app.request(
      `/news/${id}`,
      {
        method: "PUT",
        headers: { "content-type": "application/json", ...bearer(admin) },
        body: JSON.stringify({ title: "Every listed company, retitled" }),
      },
      env,
    );
    expect(retitled.status).toBe(200);
    expect(((await retitled.json()) as ArticleView).companies).toEqual(tickers);
  });
});
