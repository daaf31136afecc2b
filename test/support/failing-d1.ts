// A D1 binding that fails some statements as D1 itself would: for the tests of what a client sees when the database
// fails mid-request, and that a write it fails leaves nothing behind.
import { env } from "cloudflare:workers";

/** The table a failed statement names instead of its own, so that D1 refuses it ("no such table: ..."). */
export const MISSING_TABLE = "d1_failure_injected";

/**
 * env.DB whose statements matching `pattern` fail when D1 runs them: each names a table that does not exist, so that
 * D1 itself refuses it with its own error, with the statement's parameters as they were bound. Inside a batch, D1
 * then rolls the whole batch back. `failed` lists the SQL of each statement failed this way; with `failing.on` false
 * every statement goes through (a D1 that has not failed yet, or has recovered), and `matched.count` counts every
 * statement the pattern matched, failed or not.
 */
export function d1FailingOn(pattern: RegExp, inner: D1Database = env.DB) {
  const failed: string[] = [];
  const failing = { on: true };
  const matched = { count: 0 };
  const db = new Proxy(inner, {
    get(target, key) {
      if (key === "prepare") {
        return (query: string) => {
          if (!pattern.test(query)) return target.prepare(query);
          matched.count += 1;
          if (!failing.on) return target.prepare(query);
          failed.push(query);
          const renamed = query.replace(/\b(into|update|from)\s+("?)\w+\2/i, `$1 "${MISSING_TABLE}"`);
          if (renamed === query) throw new Error(`d1FailingOn: no table to rename in ${query}`);
          return target.prepare(renamed);
        };
      }
      const value = Reflect.get(target, key, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { db: db as D1Database, failed, failing, matched };
}

/** The Worker's env with `db` as its D1 binding (a fresh object: settings are parsed again). */
export const withDb = (db: D1Database, vars: Record<string, string> = {}) =>
  ({ ...env, ...vars, DB: db }) as unknown as Env;
