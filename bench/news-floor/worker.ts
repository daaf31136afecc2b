// Floor for bench/news.mjs: GET /?q=... runs the two statements GET /news?q=... runs (the page of 30 and the total)
// as one D1 batch and returns the raw rows. The SQL comes from the app's own query builder, built once per q. Every
// answer carries its D1 work in Server-Timing, counted as the Worker counts its own with D1_USAGE_HEADER on.
import { drizzle } from "drizzle-orm/d1";
import { listArticlesQueries } from "../../src/news/store/articles";
import { ftsQuery } from "../../src/news/store/full-text";
import { d1ServerTiming, emptyD1Usage, meteredD1 } from "../../src/shared/d1-meter";

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
    const usage = emptyD1Usage();
    const db = meteredD1(env.DB, () => usage);
    const [page, count] = await db.batch(statementsFor(db, url.searchParams.get("q") ?? ""));
    // The count statement has no column alias: its one value is the total.
    const total = Object.values(count.results[0] as Record<string, number>)[0];
    return Response.json(page.results, {
      headers: { "X-Total-Count": String(total), "Server-Timing": d1ServerTiming(usage) },
    });
  },
} satisfies ExportedHandler<Env>;
