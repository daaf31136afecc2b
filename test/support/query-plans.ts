// EXPLAIN QUERY PLAN of a repository's own statement on the test D1, so a test can pin the indexes a query reads.
import { env } from "cloudflare:workers";

/** A drizzle query (its toSQL()) or SQL and its parameters, as the repository sends them. */
export type PlannedStatement = { toSQL(): { sql: string; params: unknown[] } } | { sql: string; params: unknown[] };

interface PlanRow {
  id: number;
  parent: number;
  detail: string;
}

/** SQLite's plan lines, each indented by two spaces per level under its parent, in SQLite's order. */
export async function queryPlan(statement: PlannedStatement): Promise<string[]> {
  const { sql, params } = "toSQL" in statement ? statement.toSQL() : statement;
  const { results } = await env.DB.prepare(`EXPLAIN QUERY PLAN ${sql}`)
    .bind(...params)
    .all<PlanRow>();
  const depths = new Map<number, number>([[0, -1]]);
  return results.map((row) => {
    const depth = (depths.get(row.parent) ?? -1) + 1;
    depths.set(row.id, depth);
    return `${"  ".repeat(depth)}${row.detail}`;
  });
}
