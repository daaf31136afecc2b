// `npm run bench:ratelimit -- --algorithms` (issue 20): each rule algorithm's hot key, cold keys and exactness.
import { refreshProxyConnection } from "../test/support/wrangler-dev.mjs";
import { CONNECTIONS, DURATION, fixed, KEYS, keyBody, run } from "./ratelimit-shared.mjs";
import {
  CONCURRENT,
  counterStats,
  exactness,
  perThousand,
  settledCounterStats,
  startFresh,
} from "./ratelimit-counters.mjs";

/** Each algorithm's rule: one that never refuses (throughput) and one at LIMIT (exactness). */
const ALGORITHM_RULES = [
  { algorithm: "fixed_window", rule: "client", limited: "limited" },
  { algorithm: "sliding_window", rule: "sliding", limited: "limited_sliding" },
  { algorithm: "token_bucket", rule: "bucket", limited: "limited_bucket" },
];

/**
 * Per algorithm: one hot key, then 1000 cold keys, each new to the server, with rows, commits and objects per 1000
 * decisions from the counter objects' statistics; then CONCURRENT requests on one new key of the limited rule.
 */
export async function compareAlgorithms() {
  const server = await startFresh("ratelimit-algorithms", {});
  const { url } = server;
  const rows = [];
  const exact = [];
  try {
    const floor = await run("(a) GET /test/ping (floor)", { url: `${url}/test/ping` });
    let before = await counterStats(url);
    // BENCH_ALGORITHMS=token_bucket,fixed_window picks and orders them (each later one finds more objects open).
    const chosen = process.env.BENCH_ALGORITHMS?.split(",") ?? ALGORITHM_RULES.map((r) => r.algorithm);
    for (const { algorithm, rule, limited } of chosen.map((name) =>
      ALGORITHM_RULES.find((r) => r.algorithm === name),
    )) {
      for (const [workload, options] of [
        ["hot key", { body: keyBody(`${algorithm}-hot`, rule) }],
        ["1000 cold keys", coldKeys(algorithm, rule)],
      ]) {
        await refreshProxyConnection(server);
        const result = await run(`${algorithm}, ${workload}`, { url: `${url}/json`, method: "POST", ...options });
        const after = await settledCounterStats(url);
        rows.push({ algorithm, workload, result, perThousand: perThousand(before, after, result.decisions) });
        before = after;
      }
      exact.push({ algorithm, ...(await exactness(url, `${algorithm}-exact`, limited)) });
    }
    console.log(`\nalgorithms: ${CONNECTIONS} connections, ${DURATION} s per run; floor ${floor.rps.toFixed(0)} req/s`);
    console.log(
      "algorithm        workload          req/s   ratio   p50 ms   p99 ms   non-2xx   rows/1000   commits/1000   objects/1000",
    );
    for (const { algorithm, workload, result, perThousand: p } of rows) {
      console.log(
        `${algorithm.padEnd(16)} ${workload.padEnd(16)} ${result.rps.toFixed(0).padStart(6)}   ` +
          `${(result.rps / floor.rps).toFixed(2).padStart(5)}   ${String(result.p50).padStart(6)}   ` +
          `${String(result.p99).padStart(6)}   ${String(result.bad).padStart(7)}   ` +
          `${fixed(p?.rows_written, 1).padStart(9)}   ${fixed(p?.commits, 1).padStart(12)}   ` +
          `${fixed(p?.objects_started, 1).padStart(12)}`,
      );
    }
    for (const e of exact) {
      console.log(
        `exactness, ${e.algorithm}: ${e.admitted} admitted, ${e.refused} refused of ${CONCURRENT}${e.other ? `, ${e.other}` : ""}`,
      );
    }
  } finally {
    await server.stop();
  }
  if (exact.some((e) => !e.exact)) process.exitCode = 1;
}

/** 1000 keys of `rule` never seen before, cycled. */
function coldKeys(prefix, rule) {
  const bodies = Array.from({ length: KEYS }, (_, i) => keyBody(`${prefix}-cold-${i}`, rule));
  let next = 0;
  return { requests: [{ setupRequest: (request) => ({ ...request, body: bodies[next++ % KEYS] }) }] };
}
