// PUT /news/{id} with many company links: no statement binds more than D1's 100 parameters, whatever the links.
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { app } from "../../../src/app";
import type { ArticleView } from "../../../src/news/store/articles";
import { bearer, signUp } from "../../support/news-api";
import { callJson } from "../../support/worker-http";

/** D1 refuses a statement with more bound parameters than this ("too many SQL variables"); local SQLite does not. */
const D1_MAX_PARAMETERS = 100;

/** env.DB, except that binding more than D1's limit throws as D1 does; `counts` records every statement's binds. */
function d1LimitedDatabase(counts: number[]): D1Database {
  const real = env.DB;
  const limited: Pick<D1Database, "prepare" | "batch" | "exec"> = {
    prepare(query) {
      const statement = real.prepare(query);
      const bind = statement.bind.bind(statement);
      statement.bind = (...values: unknown[]) => {
        counts.push(values.length);
        if (values.length > D1_MAX_PARAMETERS) throw new Error(`D1_ERROR: too many SQL variables (${values.length})`);
        return bind(...values);
      };
      return statement;
    },
    batch: (statements) => real.batch(statements),
    exec: (query) => real.exec(query),
  };
  return limited as D1Database;
}

let admin: string;
let tickers: string[];

beforeAll(async () => {
  admin = (await signUp("many-links-admin@example.com", { role: "admin" })).token;
  const { results } = await env.DB.prepare("select ticker from companies order by ticker").all<{ ticker: string }>();
  tickers = results.map((row) => row.ticker);
});

describe("PUT /news/{id} with many companies", () => {
  it("links all 70 seeded companies, binding at most 100 parameters per statement", async () => {
    expect(tickers).toHaveLength(70);
    const created = await callJson(
      "/news",
      "POST",
      { title: "Every listed company at once", url: "https://desk.example.com/all", source: "many-links-desk" },
      bearer(admin),
    );
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as ArticleView;

    const counts: number[] = [];
    const response = await app.request(
      `/news/${id}`,
      {
        method: "PUT",
        headers: { "content-type": "application/json", ...bearer(admin) },
        body: JSON.stringify({ companies: tickers }),
      },
      { ...env, DB: d1LimitedDatabase(counts) },
    );
    expect(response.status).toBe(200);
    expect(((await response.json()) as ArticleView).companies).toEqual(tickers);
    expect(counts.length).toBeGreaterThan(0);
    expect(counts.filter((count) => count > D1_MAX_PARAMETERS)).toEqual([]);

    // A later edit that names no companies keeps the 70 explicit links, again within the limit.
    const retitled = await app.request(
      `/news/${id}`,
      {
        method: "PUT",
        headers: { "content-type": "application/json", ...bearer(admin) },
        body: JSON.stringify({ title: "Every listed company, retitled" }),
      },
      { ...env, DB: d1LimitedDatabase(counts) },
    );
    expect(retitled.status).toBe(200);
    expect(((await retitled.json()) as ArticleView).companies).toEqual(tickers);
    expect(counts.filter((count) => count > D1_MAX_PARAMETERS)).toEqual([]);
  });
});
