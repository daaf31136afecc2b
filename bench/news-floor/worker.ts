// Floor for bench/news.mjs: GET /?q=... runs the two statements GET /news?q=... runs (the page of 30 and the total)
// as one D1 batch and returns the raw rows. The SQL comes from the app's own query builder, built once per q.
import { drizzle } from "drizzle-orm/d1";
import { listArticlesQueries } from "../../src/news/store/articles";
import { ftsQuery } from "../../src/news/store/full-text";

interface Env {
  DB: D1Database;
}

const built = new Map<string, { sql: string; params: unknown[] }[]>();

function statementsFor(db: D1Database, q: string) {
  let queries = built.get(q);
  if (!queries) {
    const input = {
      match: ftsQuery(q) ?? null,
      page: 1,
      limit: 30,
      sort: [{ field: "publishedAt" as const, descending: true }],
    };
    queries = listArticlesQueries(drizzle(db), input).map((query) => query.toSQL());
    built.set(q, queries);
  }
  return queries.map(({ sql, params }) => db.prepare(sql).bind(...params));
}

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (url.pathname === "/ping") return new Response("pong");
    const [page, count] = await env.DB.batch(statementsFor(env.DB, url.searchParams.get("q") ?? ""));
    // The count statement has no column alias: its one value is the total.
    const total = Object.values(count.results[0] as Record<string, number>)[0];
    return Response.json(page.results, { headers: { "X-Total-Count": String(total) } });
  },
} satisfies ExportedHandler<Env>;
