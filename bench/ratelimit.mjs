#!/usr/bin/env node
// `npm run bench:ratelimit`: what a rate-limit decision costs in the Durable Object store when nothing is warm, for
// each counter layout (COUNTER_OBJECT_LAYOUT per_key, then sharded; `--layout per_key|sharded` runs one). Each layout
// gets a fresh wrangler dev (fresh state directory, so no counter object exists), the bench configuration (domain
// bench: key `client` with a limit never reached, key `limited` at 100 per hour) and nothing warmed but the floor
// route (2 s of GET /test/ping, which touches no counter). Then, autocannon at 32 connections (BENCH_CONNECTIONS)
// for 10 s (BENCH_DURATION), every key new to this run and to its round:
//   (a) GET /test/ping, the floor: the same Worker and dev server doing no rate-limit work;
//   (b) POST /json on one hot key (its first request creates its counter);
//   (c) POST /json over 1000 keys never seen before, cycled;
//   (d) long tail: POST /json, every request a new key, for 20 s (BENCH_TAIL_DURATION); its non-2xx and errors;
//   (e) new-key latency: 200 requests one at a time, each a new key, interleaved with 200 on one warm key (so both
//       see the same machine load): median and p90 of each, and new/warm of the medians;
//   (f) exactness: 600 concurrent POST /json on one new key of `limited`: exactly 100 must get 200 and 500 get 429,
//       or the process exits 1 at the end.
// Each figure is a ratio to the floor of the same run. For (b) to (d), the counter objects' own statistics on /stats
// (ratelimit.durable_object.rows_written, .commits, .objects_started) give rows written, commits and objects started
// per 1000 decisions (2xx answers): /stats is read before and after each workload; the objects flush theirs to the
// aggregate up to 5 s after the activity (and a write-behind may delay a row by up to 2 s), so after a workload the
// bench waits 8 s (BENCH_STATS_WAIT_MS), then until two reads a second apart agree; that wait is not measured.
// BENCH_ROUNDS (default 1) repeats (a) to (f) with new keys; each workload is then reported by its median run.
// The targets (issue 18), printed as met or missed after each layout: per_key: (c) >= 0.6, (d) >= 0.13, (e) new/warm
// <= 3; sharded: (c) >= 0.6, (d) >= 0.5, (e) <= 1.5; both: (b) >= 0.8, no non-2xx or error in 20 s of (d), (f) exact.
// BENCH_BASELINE_REF=<git ref>: the same workloads, per_key only, also on that commit (a `git worktree add` in a
// temporary directory, node_modules a symlink to this one's, removed at the end), printed as "before" figures beside
// the new ones; where that code does not count the objects' rows, those columns say n/a.
// `--backend redis` (a redis-server) or `--backend memcache` (a memcached), each started on a free port: (a) the
// floor, (b) 1000 distinct keys (warmed first) and (c) one hot key, with the counters in that store and in Durable
// Objects (two dev servers, each workload run on one then the other), the ratios to the floor and to the Durable
// Object store.
// `--stats`: statistics off (DISABLE_STATS=true) against on (the shipped settings: counted in the isolate, flushed
// to the aggregate every STATS_FLUSH_INTERVAL), two dev servers, each of those three warmed workloads run on both in
// turn, 4 times (BENCH_ROUNDS), which side goes first alternating; prints the on/off throughput ratio per workload.
// The target is 0.9 or more (statistics cost at most 10 %).
// `--algorithms`: the rule algorithms (fixed_window, sliding_window, token_bucket) on one fresh per_key server: for
// each, one hot key and 1000 cold keys (ratios to the floor, rows, commits and objects per 1000 decisions), then
// CONCURRENT requests on one new key of its rule limited to LIMIT, which must admit exactly LIMIT (else exit 1).
// `--hot`: one hot key per counter mode and the capacity run (issue 29), in bench/ratelimit-hot.mjs.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import autocannon from "autocannon";
import { stopAll, stopAllOnSignals } from "../test/support/processes.mjs";
import { startMemcached, startRedis } from "../test/support/local-servers.mjs";
import { refreshProxyConnection, startWranglerDev } from "../test/support/wrangler-dev.mjs";
import { baselineWorktree } from "./worktree.mjs";
import { median, percentile } from "./samples.mjs";

stopAllOnSignals();

const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const KEYS = 1000;
const TOKEN = "bench-admin-token";
const CONFIG = `domain: bench
descriptors:
  - key: client
    rate_limit:
      unit: hour
      requests_per_unit: 4000000000
`;

const jsonBody = (key) =>
  JSON.stringify({ domain: "bench", descriptors: [{ entries: [{ key: "client", value: key }] }] });
// Built once, so the client's own work per request is the same in (b) as in (c).
const KEY_BODIES = Array.from({ length: KEYS }, (_, i) => jsonBody(`key-${i}`));

function run(title, options) {
  return new Promise((resolve, reject) => {
    autocannon({ connections: CONNECTIONS, duration: DURATION, ...options }, (error, result) => {
      if (error) return reject(error);
      const statuses = Object.entries(result.statusCodeStats ?? {}).filter(([code]) => !code.startsWith("2"));
      const bad = result.non2xx + result.errors + result.timeouts;
      const codes = statuses.map(([code, { count }]) => ` ${code}×${count}`).join("");
      resolve({
        title,
        rps: result.requests.average,
        p50: result.latency.p50,
        p99: result.latency.p99,
        bad,
        codes,
        decisions: result["2xx"],
      });
    });
  });
}

const BACKENDS = ["durable-object", "redis", "memcache"];
const backendArg = process.argv.indexOf("--backend");
const BACKEND = backendArg >= 0 ? process.argv[backendArg + 1] : "durable-object";
if (!BACKENDS.includes(BACKEND)) throw new Error(`--backend must be one of ${BACKENDS.join(", ")}`);

/** The Worker's variables that put the counters in `backend`, starting its server. */
async function storeVars(backend) {
  if (backend === "redis") {
    const { port } = await startRedis();
    // BENCH_KVSTORE_POOL_SIZE=0 measures the pool-less design (a connection per request) for comparison.
    const poolSize = process.env.BENCH_KVSTORE_POOL_SIZE
      ? { KVSTORE_POOL_SIZE: process.env.BENCH_KVSTORE_POOL_SIZE }
      : {};
    return { BACKEND_TYPE: "redis", KVSTORE_URL: `127.0.0.1:${port}`, ...poolSize };
  }
  if (backend === "memcache") {
    const { port } = await startMemcached({ megabytes: 64 });
    return { BACKEND_TYPE: "memcache", OBJCACHE_HOST_PORT: `127.0.0.1:${port}` };
  }
  return {};
}

const STATS = process.argv.includes("--stats");
const ALGORITHMS = process.argv.includes("--algorithms");
/** Each dev server's process group (wrangler and its workerd), by origin. */
const processGroups = new Map();

/**
 * CPU time (ms, user + system) used so far by the processes of a group, from /proc. Throughput on a shared machine
 * moves with the other load; CPU per request barely does, so the statistics comparison prints both.
 */
function groupCpuMs(pgid) {
  let ticks = 0;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // The fields after the command name (which may hold spaces) start at state; pgrp is the 3rd, utime the 12th.
      const fields = readFileSync(`/proc/${entry}/stat`, "utf8").split(") ").pop().split(" ");
      if (Number(fields[2]) === pgid) ticks += Number(fields[11]) + Number(fields[12]);
    } catch {}
  }
  return ticks * 10;
}

async function main() {
  if (process.argv.includes("--hot")) return (await import("./ratelimit-hot.mjs")).hotBench(process.argv);
  if (STATS) return compareStats();
  if (ALGORITHMS) return compareAlgorithms();
  if (BACKEND === "durable-object") return compareLayouts();
  // Both servers up, each workload run on one then the other, so both sides see the same machine load.
  const sides = [
    { backend: "durable-object", runs: workloads(await prepare("ratelimit-durable-object", {})), results: [] },
    { backend: BACKEND, runs: workloads(await prepare(`ratelimit-${BACKEND}`, await storeVars(BACKEND))), results: [] },
  ];
  for (let i = 0; i < sides[0].runs.length; i++) for (const side of sides) side.results.push(await side.runs[i]());
  for (const side of sides) printResults(side.backend, side.results);
  const [durableObject, other] = sides.map((side) => side.results);
  console.log(`\n${BACKEND} against the Durable Object store (req/s ratio)`);
  for (let i = 1; i < other.length; i++) {
    console.log(`${other[i].title.padEnd(32)} ${(other[i].rps / durableObject[i].rps).toFixed(2).padStart(5)}`);
  }
}

/** Starts a dev server with these variables, installs the bench configuration and warms every key's counter. */
async function prepare(name, vars) {
  const { url, pgid } = await startWranglerDev(
    { RATELIMIT_ADMIN_TOKEN: TOKEN, ...vars },
    { name, inheritStderr: true },
  );
  processGroups.set(url, pgid);
  const put = await fetch(`${url}/rlconfig/files`, {
    method: "PUT",
    headers: { Authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ files: { "bench.yaml": CONFIG } }),
  });
  if (put.status !== 200) throw new Error(`config refused: ${await put.text()}`);

  await warmKeys(url);
  await run("warm-up", { url: `${url}/test/ping`, duration: 2 });
  return url;
}

/** One call to each key's object, 50 at a time, so each is created (or reloaded) before it is measured. */
async function warmKeys(url) {
  for (let i = 0; i < KEYS; i += 50) {
    await Promise.all(
      Array.from({ length: 50 }, (_, j) =>
        fetch(`${url}/json`, { method: "POST", body: KEY_BODIES[i + j] }).then((r) => r.text()),
      ),
    );
  }
}

/**
 * The three workloads against `url`, each a function that runs it and resolves to its result; `onStart`, if given,
 * is called right before the measured run (after any warm-up), e.g. to read CPU counters.
 */
function workloads(url) {
  let next = 0;
  const measured = (title, options) => async (onStart) => {
    onStart?.();
    return run(title, options);
  };
  return [
    measured("(a) GET /test/ping (floor)", { url: `${url}/test/ping` }),
    async (onStart) => {
      // workerd evicts an object that has had no call for a few seconds, so the previous workload's 10 s leave
      // all 1000 cold, and reloading one (its SQLite file, first read, alarm) costs milliseconds locally. Warming
      // them again first makes (b) measure objects in use, the steady state of a busy service.
      await warmKeys(url);
      return measured(`(b) POST /json, ${KEYS} keys`, {
        url: `${url}/json`,
        method: "POST",
        requests: [{ setupRequest: (request) => ({ ...request, body: KEY_BODIES[next++ % KEYS] }) }],
      })(onStart);
    },
    measured("(c) POST /json, one hot key", { url: `${url}/json`, method: "POST", body: jsonBody("hot") }),
  ];
}

// The default mode: the counter layouts, nothing warmed (see the top of the file).

const LAYOUTS = ["per_key", "sharded"];
const layoutArg = process.argv.indexOf("--layout");
const RUN_LAYOUTS = layoutArg >= 0 ? [process.argv[layoutArg + 1]] : LAYOUTS;
if (!RUN_LAYOUTS.every((layout) => LAYOUTS.includes(layout))) {
  throw new Error(`--layout must be one of ${LAYOUTS.join(", ")}`);
}
const TAIL_DURATION = Number(process.env.BENCH_TAIL_DURATION ?? 20);
const STATS_WAIT_MS = Number(process.env.BENCH_STATS_WAIT_MS ?? 8000);
const BASELINE_REF = process.env.BENCH_BASELINE_REF;
const SEQUENTIAL = 200;
const CONCURRENT = 600;
const LIMIT = 100;
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
/** The issue's targets, by layout: ratios to the floor (at least), new-key median over a warm key's (at most). */
const TARGETS = {
  per_key: { hot: 0.8, cold: 0.6, tail: 0.13, newKey: 3 },
  sharded: { hot: 0.8, cold: 0.6, tail: 0.5, newKey: 1.5 },
};
const COUNTER_STATS = ["rows_written", "commits", "objects_started"];

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Every test key's request body for the `client` rule (`key: limited` for the exactness check). */
const keyBody = (value, key = "client") =>
  JSON.stringify({ domain: "bench", descriptors: [{ entries: [{ key, value }] }] });

/**
 * The counter objects' statistics from /stats (`name: value` lines), or undefined where the Worker does not count
 * them (an older commit).
 */
async function counterStats(url) {
  const response = await fetch(`${url}/stats`, { headers: { Authorization: `Bearer ${TOKEN}` } });
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
 * The counter statistics once the objects have flushed what the last workload made them do: after STATS_WAIT_MS,
 * until two reads a second apart agree (at most 10 more reads).
 */
async function settledCounterStats(url) {
  await sleep(STATS_WAIT_MS);
  let last = await counterStats(url);
  for (let i = 0; i < 10; i++) {
    await sleep(1000);
    const next = await counterStats(url);
    if (JSON.stringify(next) === JSON.stringify(last)) return next;
    last = next;
  }
  console.error("warning: the counter object statistics did not settle; the per-1000 figures may be short");
  return last;
}

/**
 * Per 1000 decisions, each counter statistic's growth between two reads: undefined where the Worker does not count
 * them (nothing after the workload); a fresh server has no line before its first counter object reports.
 */
function perThousand(before = {}, after, decisions) {
  if (!after || !decisions) return undefined;
  return Object.fromEntries(
    COUNTER_STATS.map((stat) => [stat, (((after[stat] ?? 0) - (before[stat] ?? 0)) / decisions) * 1000]),
  );
}

/** A fresh dev server (fresh state) running `projectDir` with these variables, the bench configuration installed. */
async function startFresh(name, vars, projectDir) {
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

/** One POST /json, timed (ms) to the end of its body; throws unless 200. */
async function timedDecision(url, body) {
  const start = performance.now();
  const response = await fetch(`${url}/json`, { method: "POST", body });
  const text = await response.text();
  const ms = performance.now() - start;
  if (response.status !== 200) throw new Error(`POST /json answered ${response.status}: ${text.slice(0, 300)}`);
  return ms;
}

/** (e): SEQUENTIAL new keys, one at a time, each followed by one request on a warm key. */
async function newKeyLatency(url, prefix) {
  const warmBody = keyBody(`${prefix}-warm`);
  for (let i = 0; i < 5; i++) await timedDecision(url, warmBody);
  const fresh = [];
  const warm = [];
  for (let i = 0; i < SEQUENTIAL; i++) {
    fresh.push(await timedDecision(url, keyBody(`${prefix}-${i}`)));
    warm.push(await timedDecision(url, warmBody));
  }
  const result = {
    newP50: percentile(fresh, 50),
    newP90: percentile(fresh, 90),
    warmP50: percentile(warm, 50),
    warmP90: percentile(warm, 90),
  };
  return { ...result, ratio: result.newP50 / result.warmP50 };
}

/** (f): CONCURRENT requests at once on one new key of `rule`; how many were admitted, refused, neither. */
async function exactness(url, value, rule = "limited") {
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

/** One round of (a) to (f) on a server, every key prefixed with `prefix` (new to the run). */
async function layoutRound(server, prefix) {
  const { url } = server;
  const results = {};
  results.floor = await run("(a) GET /test/ping (floor)", { url: `${url}/test/ping` });
  // Nothing but the configuration and the floor has run since the last settled read (or the start).
  let before = await counterStats(url);
  const counted = async (name, title, options) => {
    await refreshProxyConnection(server);
    const result = await run(title, { url: `${url}/json`, method: "POST", ...options });
    const after = await settledCounterStats(url);
    result.perThousand = perThousand(before, after, result.decisions);
    before = after;
    results[name] = result;
  };
  await counted("hot", "(b) POST /json, one hot key", { body: keyBody(`${prefix}-hot`) });
  const coldBodies = Array.from({ length: KEYS }, (_, i) => keyBody(`${prefix}-cold-${i}`));
  let cold = 0;
  await counted("cold", `(c) POST /json, ${KEYS} cold keys`, {
    requests: [{ setupRequest: (request) => ({ ...request, body: coldBodies[cold++ % KEYS] }) }],
  });
  let tail = 0;
  await counted("tail", `(d) POST /json, long tail`, {
    duration: TAIL_DURATION,
    requests: [{ setupRequest: (request) => ({ ...request, body: keyBody(`${prefix}-tail-${tail++}`) }) }],
  });
  results.tail.keys = tail;
  await refreshProxyConnection(server);
  results.latency = await newKeyLatency(url, `${prefix}-seq`);
  results.exactness = await exactness(url, `${prefix}-exact`);
  return results;
}

/** Every round of one layout on a fresh server; each workload's median run (by req/s), all rounds' runs. */
async function measureLayout(label, vars, projectDir) {
  const server = await startFresh(`ratelimit-${label}`, vars, projectDir);
  const rounds = Number(process.env.BENCH_ROUNDS ?? 1);
  const runs = [];
  try {
    for (let round = 0; round < rounds; round++) runs.push(await layoutRound(server, `${label}-r${round}`));
  } finally {
    await server.stop();
  }
  const pick = (name) => {
    const sorted = runs.map((r) => r[name]).sort((a, b) => a.rps - b.rps);
    return sorted[Math.floor(sorted.length / 2)];
  };
  const latencies = runs.map((r) => r.latency);
  return {
    label,
    runs,
    floor: pick("floor"),
    hot: pick("hot"),
    cold: pick("cold"),
    tail: pick("tail"),
    latency: {
      newP50: median(latencies.map((l) => l.newP50)),
      newP90: median(latencies.map((l) => l.newP90)),
      warmP50: median(latencies.map((l) => l.warmP50)),
      warmP90: median(latencies.map((l) => l.warmP90)),
      ratio: median(latencies.map((l) => l.ratio)),
    },
    exactness: runs.map((r) => r.exactness),
  };
}

const fixed = (value, digits) => (value === undefined ? "n/a" : value.toFixed(digits));

function printLayout(title, m) {
  const floor = m.floor.rps;
  console.log(
    `\n${title}: ${CONNECTIONS} connections, ${DURATION} s per run, long tail ${TAIL_DURATION} s, ` +
      `${m.runs.length} round(s) (wrangler dev, --log-level error)`,
  );
  console.log(`floor (a): ${floor.toFixed(0)} req/s; each ratio is req/s over it\n`);
  console.log(
    "workload                          req/s   p50 ms   p99 ms   ratio   non-2xx/errors   rows/1000   commits/1000   objects/1000",
  );
  for (const r of [m.floor, m.hot, m.cold, m.tail]) {
    const per = r.perThousand;
    const counted = r !== m.floor;
    const cell = (stat, width) => (counted ? fixed(per?.[stat], 1) : "").padStart(width);
    console.log(
      `${r.title.padEnd(32)} ${r.rps.toFixed(0).padStart(6)}   ${String(r.p50).padStart(6)}   ${String(r.p99).padStart(6)}   ${(r.rps / floor).toFixed(2).padStart(5)}   ${`${r.bad}${r.codes}`.padStart(14)}   ${cell("rows_written", 9)}   ${cell("commits", 12)}   ${cell("objects_started", 12)}`.trimEnd(),
    );
  }
  console.log(
    `(d) long tail: ${m.tail.keys} keys, ${m.tail.decisions} decisions, non-2xx/errors/timeouts ${m.tail.bad}${m.tail.codes}`,
  );
  const l = m.latency;
  console.log(
    `(e) new-key latency, ${SEQUENTIAL} sequential: new key median ${l.newP50.toFixed(2)} ms, p90 ${l.newP90.toFixed(2)} ms; ` +
      `warm key median ${l.warmP50.toFixed(2)} ms, p90 ${l.warmP90.toFixed(2)} ms; new/warm ${l.ratio.toFixed(2)}`,
  );
  for (const e of m.exactness) {
    console.log(
      `(f) exactness, ${CONCURRENT} concurrent on a limit of ${LIMIT}: ${e.admitted} × 200, ${e.refused} × 429` +
        `${e.other ? `, other: ${e.other}` : ""} -> ${e.exact ? "exact" : "NOT EXACT"}`,
    );
  }
  if (m.runs.length > 1) {
    const ratios = (name) => m.runs.map((r) => (r[name].rps / r.floor.rps).toFixed(2)).join("/");
    console.log(`each round's ratios: (b) ${ratios("hot")}   (c) ${ratios("cold")}   (d) ${ratios("tail")}`);
  }
}

/** The targets of `layout`, each met or missed; returns whether (f) was exact in every round. */
function printTargets(layout, m) {
  const t = TARGETS[layout];
  const floor = m.floor.rps;
  const lines = [
    [`(b) hot key ratio >= ${t.hot}`, m.hot.rps / floor >= t.hot, (m.hot.rps / floor).toFixed(2)],
    [`(c) cold ${KEYS} keys ratio >= ${t.cold}`, m.cold.rps / floor >= t.cold, (m.cold.rps / floor).toFixed(2)],
    [`(d) long tail ratio >= ${t.tail}`, m.tail.rps / floor >= t.tail, (m.tail.rps / floor).toFixed(2)],
    [
      `(d) no non-2xx or error in the long tail${TAIL_DURATION < 20 ? ` (target is for 20 s; ran ${TAIL_DURATION} s)` : ""}`,
      m.runs.every((r) => r.tail.bad === 0),
      m.runs.map((r) => r.tail.bad).join("/"),
    ],
    [`(e) new-key median <= ${t.newKey} × a warm key's`, m.latency.ratio <= t.newKey, m.latency.ratio.toFixed(2)],
    [
      `(f) exactly ${LIMIT} of ${CONCURRENT} admitted`,
      m.exactness.every((e) => e.exact),
      m.exactness.map((e) => `${e.admitted}/${e.refused}`).join(" "),
    ],
  ];
  const met = lines.filter(([, ok]) => ok).length;
  console.log(`\ntargets, ${layout}: ${met} of ${lines.length} met`);
  for (const [what, ok, value] of lines) console.log(`  ${ok ? "met   " : "MISSED"}  ${what}: ${value}`);
  return m.exactness.every((e) => e.exact);
}

/** Before against now, per_key: each workload's ratio to the floor, and the new-key latency ratio. */
function printBeforeAfter(before, now) {
  console.log(`\nper_key, before (${BASELINE_REF}) -> now, ratio to the floor (req/s)`);
  for (const name of ["hot", "cold", "tail"]) {
    const ratio = (m) => `${(m[name].rps / m.floor.rps).toFixed(2)} (${m[name].rps.toFixed(0)})`;
    console.log(`${now[name].title.padEnd(32)} ${ratio(before).padStart(14)} -> ${ratio(now)}`);
  }
  console.log(
    `${"(e) new-key median / warm".padEnd(32)} ${before.latency.ratio.toFixed(2).padStart(14)} -> ${now.latency.ratio.toFixed(2)}` +
      `   (medians ${before.latency.newP50.toFixed(2)} -> ${now.latency.newP50.toFixed(2)} ms)`,
  );
  const exact = (m) => m.exactness.map((e) => `${e.admitted}/${e.refused}`).join(" ");
  console.log(`${"(f) 200/429 of 600".padEnd(32)} ${exact(before).padStart(14)} -> ${exact(now)}`);
}

async function compareLayouts() {
  let failed = false;
  const measured = {};
  for (const layout of RUN_LAYOUTS) {
    measured[layout] = await measureLayout(layout, { COUNTER_OBJECT_LAYOUT: layout });
    printLayout(`rate limit service, Durable Object counters, COUNTER_OBJECT_LAYOUT=${layout}`, measured[layout]);
    if (!printTargets(layout, measured[layout])) failed = true;
  }
  if (BASELINE_REF) {
    const worktree = baselineWorktree(BASELINE_REF);
    try {
      const before = await measureLayout("baseline", {}, worktree.dir);
      printLayout(`before: rate limit service at ${BASELINE_REF} (per_key, its only layout)`, before);
      console.log("(the exactness line above is the baseline's: it does not decide the exit code)");
      if (measured.per_key) printBeforeAfter(before, measured.per_key);
    } finally {
      worktree.remove();
    }
  }
  if (failed) {
    console.error(`\nFAILED: (f) did not admit exactly ${LIMIT} of ${CONCURRENT}`);
    process.exitCode = 1;
  }
}

function printResults(backend, results) {
  const floor = results[0].rps;
  console.log(
    `\nrate limit service, counters in ${backend}, ${CONNECTIONS} connections, ${DURATION} s per run (wrangler dev, --log-level error)\n`,
  );
  console.log("workload                         req/s     p50 ms   p99 ms   ratio   non-2xx/errors");
  for (const r of results) {
    console.log(
      `${r.title.padEnd(32)} ${r.rps.toFixed(0).padStart(6)}   ${String(r.p50).padStart(6)}   ${String(r.p99).padStart(6)}   ${(r.rps / floor).toFixed(2).padStart(5)}   ${r.bad}${r.codes}`,
    );
  }
}

/** Statistics off against on: the same workloads alternating between the two servers, BENCH_ROUNDS rounds each. */
async function compareStats() {
  const offUrl = await prepare("ratelimit-stats-off", { DISABLE_STATS: "true" });
  const onUrl = await prepare("ratelimit-stats-on", {});
  const off = workloads(offUrl);
  const on = workloads(onUrl);
  const groups = { off: processGroups.get(offUrl), on: processGroups.get(onUrl) };
  const rounds = Number(process.env.BENCH_ROUNDS ?? 4);
  const totals = off.map(() => ({
    title: "",
    off: 0,
    on: 0,
    bad: 0,
    runs: { off: [], on: [] },
    cpu: { off: 0, on: 0 },
    requests: { off: 0, on: 0 },
  }));
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < off.length; i++) {
      // Alternating which side goes first cancels a load that drifts during a pair of runs.
      const pair = [
        ["off", off[i]],
        ["on", on[i]],
      ];
      for (const [side, workload] of round % 2 === 0 ? pair : pair.reverse()) {
        let cpuBefore = 0;
        const result = await workload(() => (cpuBefore = groupCpuMs(groups[side])));
        totals[i].cpu[side] += groupCpuMs(groups[side]) - cpuBefore;
        totals[i].requests[side] += result.rps * DURATION;
        totals[i].title = result.title;
        totals[i][side] += result.rps / rounds;
        totals[i].bad += result.bad;
        totals[i].runs[side].push(result.rps.toFixed(0));
      }
    }
  }
  console.log(
    `\nstatistics on against off, ${CONNECTIONS} connections, ${DURATION} s per run, ${rounds} runs per side (wrangler dev, --log-level error)\n`,
  );
  console.log(
    "workload                         off req/s   on req/s   on/off   CPU µs/req off   on   on/off   non-2xx/errors   each run off | on",
  );
  for (const t of totals) {
    const cpuPerRequest = (side) => (t.cpu[side] * 1000) / t.requests[side];
    console.log(
      `${t.title.padEnd(32)} ${t.off.toFixed(0).padStart(9)}   ${t.on.toFixed(0).padStart(8)}   ${(t.on / t.off).toFixed(2).padStart(6)}   ${cpuPerRequest("off").toFixed(0).padStart(14)}   ${cpuPerRequest("on").toFixed(0).padStart(4)}   ${(cpuPerRequest("on") / cpuPerRequest("off")).toFixed(2).padStart(6)}   ${String(t.bad).padStart(14)}   ${t.runs.off.join("/")} | ${t.runs.on.join("/")}`,
    );
  }
}

// `--algorithms`: the rule algorithms of issue 20 on a fresh per_key server, nothing warmed but the floor.

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
async function compareAlgorithms() {
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

try {
  await main();
} finally {
  await stopAll();
}
