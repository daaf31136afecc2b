// A D1 binding that changes the database between a proxy write's reads and its batch: the moment a concurrent request
// wins a race, which two real requests cannot be timed to hit.
import { createExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import worker from "../../src/index";

/** Every proxy write's batch opens with its projects' revision bumps (src/proxy/installation/revisions.ts). */
const REVISION_BUMP = /^\s*update projects set revision\b/;

/**
 * env.DB, except that `meanwhile` runs (on env.DB itself) once, just before the first batch that bumps a project's
 * revision: the commit of a write (installation/writes.ts commitWrite), after every read of the request.
 */
export function racingDatabase(meanwhile: () => Promise<unknown>): D1Database {
  const real = env.DB;
  let preparedSinceBatch: string[] = [];
  let raced = false;
  const racing: Pick<D1Database, "prepare" | "batch" | "exec"> = {
    prepare(query) {
      preparedSinceBatch.push(query);
      return real.prepare(query);
    },
    async batch(statements) {
      const commits = preparedSinceBatch.some((query) => REVISION_BUMP.test(query));
      preparedSinceBatch = [];
      if (commits && !raced) {
        raced = true;
        await meanwhile();
      }
      return real.batch(statements);
    },
    exec: (query) => real.exec(query),
  };
  return racing as D1Database;
}

/** A proxy API request with a JSON body (and `headers`) through the Worker, whose D1 binding is `db`. */
export function sendRacing(
  db: D1Database,
  request: { auth: string; method: string; path: string; body: unknown; headers?: Record<string, string> },
) {
  const { auth, method, path, body, headers = {} } = request;
  return worker.fetch(
    new Request(`http://example.com${path}`, {
      method,
      headers: { Authorization: auth, "content-type": "application/json", ...headers },
      body: JSON.stringify(body),
    }),
    { ...env, DB: db } as unknown as Env,
    createExecutionContext(),
  );
}
