// The counter objects on a fresh dev server (layouts and algorithms modes): their /stats figures, and exactness.
import { startWranglerDev } from "../test/support/wrangler-dev.mjs";
import { CONFIG, keyBody, run, TOKEN } from "./ratelimit-shared.mjs";

const STATS_WAIT_MS = Number(process.env.BENCH_STATS_WAIT_MS ?? 8000);
export const CONCURRENT = 600;
export const LIMIT = 100;
const LAYOUT_CONFIG = `${CONFIG}  - key: limited
    rate_limit:
      unit: hour
      requests_per_unit: ${LIMIT}
  - key: sliding
    rate_limit:
      algorithm: sliding_window
      unit: minute
      requests_per_unit: 4000000000
  - key: bucket
    rate_limit:
      algorithm: token_bucket
      unit: second
      requests_per_unit: 100000
      burst: 1000000
  - key: limited_sliding
    rate_limit:
      algorithm: sliding_window
      unit: hour
      requests_per_unit: ${LIMIT}
  - key: limited_bucket
    rate_limit:
      algorithm: token_bucket
      unit: hour
      requests_per_unit: ${LIMIT}
`;
const COUNTER_STATS = ["rows_written", "commits", "objects_started"];

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The counter objects' statistics from /stats (`name: value` lines), or undefined where the Worker does not count
 * them (an older commit). `token`: the server's RATELIMIT_ADMIN_TOKEN, the bench servers' unless given.
 */
export async function counterStats(url, token = TOKEN) {
  const response = await fetch(`${url}/stats`, { headers: { Authorization: `Bearer ${token}` } });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`GET /stats answered ${response.status}: ${text.slice(0, 500)}`);
  const values = {};
  for (const line of text.split("\n")) {
    const match = /^ratelimit\.durable_object\.(\w+): (\d+)$/.exec(line);
    if (match) values[match[1]] = Number(match[2]);
  }
  return Object.keys(values).length > 0 ? values : undefined;
}

/**
 * The counter statistics once the objects have flushed what the last workload made them do: after `firstWaitMs`
 * (STATS_WAIT_MS unless the caller knows its objects flush sooner), until two reads a second apart agree (at most 10
 * more reads).
 */
export async function settledCounterStats(url, firstWaitMs = STATS_WAIT_MS, token = TOKEN) {
  await sleep(firstWaitMs);
  let last = await counterStats(url, token);
  for (let i = 0; i < 10; i++) {
    await sleep(1000);
    const next = await counterStats(url, token);
    if (JSON.stringify(next) === JSON.stringify(last)) return next;
    last = next;
  }
  console.error("warning: the counter object statistics did not settle; the figures read from them may be short");
  return last;
}

/**
 * Per 1000 decisions, each counter statistic's growth between two reads (rows_written, commits and objects_started
 * unless `stats` names others, `calls` say): undefined where the Worker does not count them (nothing after the
 * workload); a fresh server has no line before its first counter object reports.
 */
export function perThousand(before = {}, after, decisions, stats = COUNTER_STATS) {
  if (!after || !decisions) return undefined;
  return Object.fromEntries(
    stats.map((stat) => [stat, (((after[stat] ?? 0) - (before[stat] ?? 0)) / decisions) * 1000]),
  );
}

/** A fresh dev server (fresh state) running `projectDir` with these variables, the bench configuration installed. */
export async function startFresh(name, vars, projectDir) {
  const server = await startWranglerDev(
    { RATELIMIT_ADMIN_TOKEN: TOKEN, ...vars },
    { name, inheritStderr: true, projectDir },
  );
  const put = await fetch(`${server.url}/rlconfig/files`, {
    method: "PUT",
    headers: { Authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ files: { "bench.yaml": LAYOUT_CONFIG } }),
  });
  if (put.status !== 200) throw new Error(`${name}: config refused: ${await put.text()}`);
  // The floor route only: no counter is touched.
  await run("warm-up", { url: `${server.url}/test/ping`, duration: 2 });
  return server;
}

/** (f): CONCURRENT requests at once on one new key of `rule`; how many were admitted, refused, neither. */
export async function exactness(url, value, rule = "limited") {
  const body = keyBody(value, rule);
  const statuses = await Promise.all(
    Array.from({ length: CONCURRENT }, () =>
      fetch(`${url}/json`, { method: "POST", body }).then(
        async (response) => (await response.arrayBuffer(), response.status),
        (error) => `error ${error.cause?.code ?? error.message}`,
      ),
    ),
  );
  const counts = {};
  for (const status of statuses) counts[status] = (counts[status] ?? 0) + 1;
  const admitted = counts[200] ?? 0;
  const refused = counts[429] ?? 0;
  const other = Object.entries(counts)
    .filter(([status]) => status !== "200" && status !== "429")
    .map(([status, count]) => `${status}×${count}`)
    .join(" ");
  return { admitted, refused, other, exact: admitted === LIMIT && refused === CONCURRENT - LIMIT };
}
