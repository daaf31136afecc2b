// The benchmark floor: what the proxy API's mass update and domain map cost in D1 alone, written the plain
// way (multi-row upserts of at most 100 bound parameters each, in one batch; one SELECT for the map). Every answer
// carries its D1 work in Server-Timing, counted as the Worker counts its own with D1_USAGE_HEADER on.
import { d1ServerTiming, emptyD1Usage, meteredD1 } from "../../src/shared/d1-meter";

interface FloorEnv {
  DB: D1Database;
}

interface FloorDomain {
  domainName: string;
  backendId: number;
  publicCaCertificate: boolean;
  redirectToUrl: string | null;
}

const COLUMNS_PER_ROW = 5;
const ROWS_PER_STATEMENT = Math.floor(100 / COLUMNS_PER_ROW);

function upserts(db: D1Database, domains: FloorDomain[]): D1PreparedStatement[] {
  const statements: D1PreparedStatement[] = [];
  for (let start = 0; start < domains.length; start += ROWS_PER_STATEMENT) {
    const rows = domains.slice(start, start + ROWS_PER_STATEMENT);
    const sql =
      "insert into domains (domain_name, backend_id, public_ca_certificate, cert_provided, redirect_to_url) values " +
      rows.map(() => "(?, ?, ?, ?, ?)").join(", ") +
      " on conflict (domain_name) do update set backend_id = excluded.backend_id," +
      " public_ca_certificate = excluded.public_ca_certificate, cert_provided = excluded.cert_provided," +
      " redirect_to_url = excluded.redirect_to_url, version = domains.version + 1";
    const values = rows.flatMap((d) => [d.domainName, d.backendId, d.publicCaCertificate ? 1 : 0, 0, d.redirectToUrl]);
    statements.push(db.prepare(sql).bind(...values));
  }
  return statements;
}

export default {
  async fetch(request: Request, env: FloorEnv): Promise<Response> {
    const usage = emptyD1Usage();
    const response = await serve(request, { DB: meteredD1(env.DB, () => usage) });
    response.headers.append("Server-Timing", d1ServerTiming(usage));
    return response;
  },
};

/** /ping, /seed, /massupdate and /domains/{projectId}, on the metered binding. */
async function serve(request: Request, env: FloorEnv): Promise<Response> {
  const url = new URL(request.url);
  if (url.pathname === "/ping") return new Response("pong");
  if (url.pathname === "/seed" && request.method === "POST") {
    // Same rows, same ids as the API's seeding (both databases start empty).
    const { projects } = (await request.json()) as { projects: { label: string; backends: string[] }[] };
    const statements: D1PreparedStatement[] = [];
    for (const project of projects) {
      statements.push(env.DB.prepare("insert into projects (label) values (?)").bind(project.label));
      for (const backend of project.backends) {
        statements.push(
          env.DB.prepare(
            "insert into backends (project_id, label) values ((select id from projects where label = ?), ?)",
          ).bind(project.label, backend),
        );
      }
    }
    await env.DB.batch(statements);
    return Response.json(
      await env.DB.prepare("select id, project_id, label from backends order by id")
        .all()
        .then((r) => r.results),
    );
  }
  if (url.pathname === "/massupdate" && request.method === "POST") {
    const { domains } = (await request.json()) as { domains: FloorDomain[] };
    await env.DB.batch(upserts(env.DB, domains));
    return Response.json([]);
  }
  const match = /^\/domains\/(\d+)$/.exec(url.pathname);
  if (match) {
    const { results } = await env.DB.prepare(
      "select d.domain_name, b.label as backend_label, d.public_ca_certificate, d.cert_provided, d.redirect_to_url, d.version" +
        " from domains d join backends b on b.id = d.backend_id where b.project_id = ?",
    )
      .bind(Number(match[1]))
      .all();
    return Response.json(results);
  }
  return new Response("not found", { status: 404 });
}
