// The default mode of `npm run bench:ratelimit`: each counter layout on a fresh server, against the issue's targets.
import { refreshProxyConnection } from "../test/support/wrangler-dev.mjs";
import { baselineWorktree } from "./worktree.mjs";
import { median, percentile } from "./samples.mjs";
import { CONNECTIONS, DURATION, fixed, KEYS, keyBody, run } from "./ratelimit-shared.mjs";
import {
  CONCURRENT,
  counterStats,
  exactness,
  LIMIT,
  perThousand,
  settledCounterStats,
  startFresh,
} from "./ratelimit-counters.mjs";

const LAYOUTS = ["per_key", "sharded"];
const layoutArg = process.argv.indexOf("--layout");
const RUN_LAYOUTS = layoutArg >= 0 ? [process.argv[layoutArg + 1]] : LAYOUTS;
if (!RUN_LAYOUTS.every((layout) => LAYOUTS.includes(layout))) {
  throw new Error(`--layout must be one of ${LAYOUTS.join(", ")}`);
}
const TAIL_DURATION = Number(process.env.BENCH_TAIL_DURATION ?? 20);
const BASELINE_REF = process.env.BENCH_BASELINE_REF;
const SEQUENTIAL = 200;
/** The issue's targets, by layout: ratios to the floor (at least), new-key median over a warm key's (at most). */
const TARGETS = {
  per_key: { hot: 0.8, cold: 0.6, tail: 0.13, newKey: 3 },
  sharded: { hot: 0.8, cold: 0.6, tail: 0.5, newKey: 1.5 },
};

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

export async function compareLayouts() {
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
