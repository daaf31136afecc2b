// The variables a local `wrangler dev` (npm start, the integration tests, the benchmarks) sets over wrangler.toml's
// [vars], which are what `wrangler deploy` sends to Cloudflare. COUNTER_OBJECT_ACTIVE_LIMIT guards workerd's one
// SQLite heap, shared by every Durable Object of the process: it exists where the objects run in the Worker's
// process (wrangler dev, self-hosted workerd), not on Cloudflare, so wrangler.toml turns it off and a local run turns
// it back on. .dev.vars.example carries the same values for a bare `wrangler dev`.

/** Name → value of each local-only variable. */
export const LOCAL_VARS = Object.freeze({ COUNTER_OBJECT_ACTIVE_LIMIT: "2000" });

/**
 * The local values the env lacks: a variable the vars file (.dev.vars, --env-file) or --var sets is the user's
 * choice and kept; one only wrangler.toml sets (or nothing) gets its local value.
 * @param {{ values: Record<string, unknown>, origins: Record<string, string> }} worker as workerEnv reads it
 * @returns {Record<string, string>}
 */
export function missingLocalVars(worker) {
  return Object.fromEntries(
    Object.entries(LOCAL_VARS).filter(
      ([name]) => worker.values[name] === undefined || worker.origins[name] === "set in wrangler.toml [vars]",
    ),
  );
}
