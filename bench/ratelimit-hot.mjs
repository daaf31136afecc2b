// `npm run bench:ratelimit -- --hot`: one hot key per counter mode (issue 29), each mode on a fresh wrangler dev
// (fresh state: no counter object exists), nothing warmed but the floor route:
//   modes: per_key and sharded (COUNTER_OBJECT_LAYOUT, coalescing as shipped) and leases (COUNTER_LEASES=true, each
//   rule also asking `lease: true` where the configuration accepts it); a mode the checkout does not know (no
//   COUNTER_LEASES in src/ratelimit) or that the Worker refuses is reported "not available" and skipped;
//   (a) for each of 8, 64 and 256 connections (BENCH_HOT_CONNECTIONS), autocannon (or wrk: BENCH_HOT_TOOL, see
//       load-runners.mjs) for 18 s (BENCH_HOT_DURATION) on
//       GET /test/ping, the floor, and 18 s on POST /json for one new key of a limit never reached, in 9 alternating
//       slices each (BENCH_HOT_SLICES; with 3 slices of 6 s one run's ratio moved from 0.70 to 0.91 between runs, with
//       9 of 18 s by 0.02 at most): decisions a second and their ratio to the floor at the same connections, p50
//       (the median slice's) and p99 (the worst slice's), non-2xx answers, and object calls per decision
//       (ratelimit.durable_object.calls on /stats, read before and once settled after), with its inverse, the mean
//       batch (decisions per call), and any lease statistics the objects count. Each slice also runs the same POST
//       /json on a key no rule names, the body floor: the request path without counting (its body, parse, lookup and
//       answer), so that the ratio to it shows what counting costs apart from the POST itself (not the issue's
//       target, which is against the ping floor). A slice ends with one request in flight per connection, which the
//       Worker still serves: decisions here are the answers plus those (which equals the hits the objects count,
//       ratelimit.durable_object.operations, in per_key and sharded);
//   (b) exactness: 600 concurrent POST /json (one connection each) on a new key limited to 100 an hour: per_key and
//       sharded must admit exactly 100, leases 95 to 100, else the process exits 1.
// The targets of the issue at 64 connections are printed as met or missed.
// Capacity run (after the above, or alone with `--only capacity`; `--only hot` skips it): the same hot key on the
// bench-only Worker of bench/capacity/ (BENCH_COUNTER_CALL_CPU_MS=1 by default: the counter object spends 1 ms of CPU
// per call, about Cloudflare's per-object rate), at 64 and 256 connections (BENCH_CAPACITY_CONNECTIONS), per mode:
// decisions a second against the object's ceiling (1000 / CPU ms calls a second), its call rate, the share of a core
// the CPU hook itself spent, and the ceiling that batch size gives one key. Rates are steady-state: the run lasts
// 6 + 4 s (BENCH_CAPACITY_DURATION + 4), and the capacity Worker's own counts (GET /bench/counts: decisions answered,
// object calls answered, so also where the checkout has no `calls` statistic) are read 2 s after its start and 2 s
// before its end. BENCH_BASELINE_REF=<git ref> runs the capacity run on that commit too (a temporary worktree with
// bench/capacity/ copied in) for "before" figures. `--modes per_key,leases` picks modes.
// wrangler dev's proxy answers a POST on a connection workerd is closing with 503 (workers-sdk issue 14641): before
// each POST run, as many simultaneous GETs as it has connections refresh them.
import { cpSync, readdirSync, readFileSync } from "node:fs";
import http from "node:http";
import path from "node:path";
import { root } from "../test/support/processes.mjs";
import { startWranglerDev } from "../test/support/wrangler-dev.mjs";
import { loadRunner } from "./load-runners.mjs";
import { counterStats, settledCounterStats } from "./ratelimit-counters.mjs";
import { TOKEN } from "./ratelimit-shared.mjs";
import { baselineWorktree } from "./worktree.mjs";

const DURATION = Number(process.env.BENCH_HOT_DURATION ?? 18);
const SLICES = Number(process.env.BENCH_HOT_SLICES ?? 9);
const list = (value) => value.split(",").map((item) => item.trim());
const POINTS = list(process.env.BENCH_HOT_CONNECTIONS ?? "8,64,256").map(Number);
const CAPACITY_POINTS = list(process.env.BENCH_CAPACITY_CONNECTIONS ?? "64,256").map(Number);
const CPU_MS = Number(process.env.BENCH_COUNTER_CALL_CPU_MS ?? 1);
const LIMIT = 100;
const CONCURRENT = 600;
const TARGET_CONNECTIONS = 64;

/** Each mode's Worker variables and the issue's targets (at 64 connections, in exactness, as a capacity batch). */
const target = (callsPerDecision, ratio, minAdmitted, batch) => ({ callsPerDecision, ratio, minAdmitted, batch });
const MODES = {
  per_key: { vars: { COUNTER_OBJECT_LAYOUT: "per_key" }, ...target(0.5, 0.8, LIMIT, 3) },
  sharded: { vars: { COUNTER_OBJECT_LAYOUT: "sharded" }, ...target(0.5, 0.8, LIMIT, 3) },
  leases: { vars: { COUNTER_LEASES: "true" }, setting: true, ...target(0.05, 0.9, 95, 10) },
};

const rule = (key, limit, lease) =>
  `  - key: ${key}\n    rate_limit:\n      unit: hour\n      requests_per_unit: ${limit}\n${lease ? "    lease: true\n" : ""}`;
const config = (lease) =>
  `domain: hot\ndescriptors:\n${rule("client", 4000000000, lease)}${rule("limited", LIMIT, lease)}`;
const body = (value, key = "client") => JSON.stringify({ domain: "hot", descriptors: [{ entries: [{ key, value }] }] });
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** One load run of DURATION seconds unless given (bench/load-runners.mjs); decisions are the 2xx answers. */
const loadRun = loadRunner();
const run = (options) => loadRun({ duration: DURATION, ...options });

/** As many simultaneous GETs as the next run has connections (see the top of the file). */
async function refresh(url, connections) {
  await Promise.all(Array.from({ length: connections }, () => fetch(`${url}/test/ping`).then((r) => r.arrayBuffer())));
}

/** Whether the checkout in `projectDir` declares the setting anywhere under src/ratelimit. */
function knowsSetting(projectDir, name) {
  const dir = path.join(projectDir, "src", "ratelimit");
  return readdirSync(dir, { recursive: true })
    .filter((file) => String(file).endsWith(".ts"))
    .some((file) => readFileSync(path.join(dir, String(file)), "utf8").includes(name));
}

/**
 * A fresh server for `mode`, its configuration installed and one decision answered 200, or why it is not available.
 * @returns {Promise<{ server?: any, lease?: boolean, unavailable?: string }>}
 */
async function startMode(mode, { projectDir = root, configPath, extraVars = {} } = {}) {
  const spec = MODES[mode];
  if (spec.setting && !knowsSetting(projectDir, "COUNTER_LEASES")) {
    return { unavailable: "this checkout has no COUNTER_LEASES setting" };
  }
  let server;
  try {
    server = await startWranglerDev(
      { RATELIMIT_ADMIN_TOKEN: TOKEN, ...spec.vars, ...extraVars },
      { name: `hot-${mode}`, inheritStderr: true, projectDir, configPath },
    );
  } catch (error) {
    return { unavailable: `refused at start: ${String(error.message).split("\n").slice(0, 3).join(" ")}` };
  }
  // Leases: rules asking `lease: true` where the configuration knows the field, else the setting alone.
  let refusal = "";
  for (const lease of spec.setting ? [true, false] : [false]) {
    const put = await fetch(`${server.url}/rlconfig/files`, {
      method: "PUT",
      headers: { Authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ files: { "hot.yaml": config(lease) } }),
    });
    const text = await put.text();
    if (put.status !== 200) {
      refusal = `configuration refused (${put.status}): ${text.slice(0, 300)}`;
      continue;
    }
    const first = await fetch(`${server.url}/json`, { method: "POST", body: body(`${mode}-first`) });
    const answer = await first.text();
    if (first.status === 200) {
      await run({ url: `${server.url}/test/ping`, connections: 8, duration: 2 });
      return { server, lease };
    }
    refusal = `POST /json answered ${first.status}: ${answer.slice(0, 300)}`;
  }
  await server.stop();
  return { unavailable: refusal };
}

/** What the capacity Worker counted so far: calls its counter objects answered, POST /json it answered. */
async function benchCounts(url) {
  const response = await fetch(`${url}/bench/counts`);
  if (response.status !== 200) throw new Error(`GET /bench/counts answered ${response.status}`);
  return response.json();
}

/** Runs of one side, added up: rate over their whole time, the median p50, the worst p99, every answer. */
function combine(runs) {
  const seconds = runs.reduce((sum, r) => sum + r.seconds, 0);
  const decisions = runs.reduce((sum, r) => sum + r.decisions, 0);
  const p50s = runs.map((r) => r.p50).sort((a, b) => a - b);
  return {
    rps: decisions / seconds,
    seconds,
    decisions,
    answered: runs.reduce((sum, r) => sum + r.answered, 0),
    p50: p50s[Math.floor((p50s.length - 1) / 2)],
    p99: Math.max(...runs.map((r) => r.p99)),
    bad: runs.reduce((sum, r) => sum + r.bad, 0),
    codes: runs.map((r) => r.codes).join(""),
  };
}

/**
 * One point at `connections`: SLICES runs of the floor, the body floor and one new hot key, in turn, so that all see
 * the same drift of the machine's load (after a hot slice, its last requests are let finish before the floor runs);
 * object calls per decision from /stats and the lease statistics. The load generator stops with one request in
 * flight on each connection, which the Worker still serves: those count as decisions for the calls they made.
 */
async function point(url, connections, key) {
  const floors = [];
  const bodyFloors = [];
  const hots = [];
  const before = (await counterStats(url)) ?? {};
  const slice = async (options) => {
    await refresh(url, connections);
    return run({ connections, duration: DURATION / SLICES, ...options });
  };
  const decide = (payload) => slice({ url: `${url}/json`, method: "POST", body: payload });
  for (let n = 0; n < SLICES; n++) {
    floors.push(await slice({ url: `${url}/test/ping` }));
    bodyFloors.push(await decide(body(key, "unlisted")));
    const hot = await decide(body(key));
    hots.push(hot);
    await sleep(Math.min(5000, hot.p99));
  }
  // The objects flush within a second of a call, so the first read need not wait out STATS_WAIT_MS.
  const after = (await settledCounterStats(url, 1500)) ?? {};
  const delta = (stat) => (after[stat] ?? 0) - (before[stat] ?? 0);
  const leases = Object.keys(after)
    .filter((stat) => stat.includes("lease"))
    .map((stat) => `${stat} ${delta(stat)}`)
    .join(", ");
  const hot = combine(hots);
  const calls = "calls" in after ? delta("calls") : undefined;
  const served = hot.answered + SLICES * connections;
  return { connections, floor: combine(floors), bodyFloor: combine(bodyFloors), hot, calls, served, leases };
}

/** Steady-state rates are read from RAMP_S after the start of a capacity run until RAMP_S before its end. */
const RAMP_S = 2;
/** Seconds of a capacity point's steady state (and of its floor), as the capacity figures were measured. */
const CAPACITY_DURATION = Number(process.env.BENCH_CAPACITY_DURATION ?? 6);

/**
 * One capacity point: the floor, then one new hot key for CAPACITY_DURATION + 2 × RAMP_S seconds, its decisions and
 * object calls a second counted by the capacity Worker over the middle CAPACITY_DURATION seconds (queues full).
 */
async function capacityPoint(url, connections, key) {
  await refresh(url, connections);
  const floor = combine([await run({ url: `${url}/test/ping`, connections, duration: CAPACITY_DURATION })]);
  await refresh(url, connections);
  const hotRun = run({
    url: `${url}/json`,
    method: "POST",
    body: body(key),
    connections,
    duration: CAPACITY_DURATION + 2 * RAMP_S,
  });
  await sleep(RAMP_S * 1000);
  const start = await benchCounts(url);
  const startedAt = performance.now();
  await sleep(CAPACITY_DURATION * 1000);
  const end = await benchCounts(url);
  const seconds = (performance.now() - startedAt) / 1000;
  const hot = await hotRun;
  await sleep(Math.min(5000, hot.p99));
  const decisions = end.decisions - start.decisions;
  const calls = end.calls - start.calls;
  return { connections, floor, hot, rate: decisions / seconds, callRate: calls / seconds, batch: decisions / calls };
}

/** One request over `agent`; its status, or the error's code. */
function send(agent, url, method, payload) {
  return new Promise((resolve) => {
    const request = http.request(url, { method, agent }, (response) => {
      response.resume();
      response.on("end", () => resolve(response.statusCode));
      response.on("error", (error) => resolve(`error ${error.code ?? error.message}`));
    });
    request.on("error", (error) => resolve(`error ${error.code ?? error.message}`));
    request.end(payload);
  });
}

/** (b): CONCURRENT hits at once on a new key of the limited rule, over as many connections, refreshed first. */
async function exactness(url, value) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENT });
  try {
    await Promise.all(Array.from({ length: CONCURRENT }, () => send(agent, `${url}/test/ping`, "GET")));
    const payload = body(value, "limited");
    const statuses = await Promise.all(
      Array.from({ length: CONCURRENT }, () => send(agent, `${url}/json`, "POST", payload)),
    );
    const counts = {};
    for (const status of statuses) counts[status] = (counts[status] ?? 0) + 1;
    const other = Object.entries(counts)
      .filter(([status]) => status !== "200" && status !== "429")
      .map(([status, count]) => `${status}×${count}`)
      .join(" ");
    return { admitted: counts[200] ?? 0, refused: counts[429] ?? 0, other };
  } finally {
    agent.destroy();
  }
}

const fixed = (value, digits) => (value === undefined || !Number.isFinite(value) ? "n/a" : value.toFixed(digits));
const pad = (value, width) => String(value).padStart(width);

/** (a)'s table for one mode. */
function printPoints(title, points) {
  console.log(
    `\n${title}: one hot key, ${DURATION} s per side in ${SLICES} slices, floor = GET /test/ping at the same connections`,
  );
  console.log(
    "conns   floor/s   decisions/s   ratio   body floor/s   ratio to it   p50 ms   p99 ms   floor p50/p99   " +
      "non-2xx   calls/decision   batch   calls/s",
  );
  for (const { connections, floor, bodyFloor, hot, calls, served } of points) {
    const perDecision = calls === undefined ? undefined : calls / served;
    console.log(
      `${pad(connections, 5)}   ${pad(floor.rps.toFixed(0), 7)}   ${pad(hot.rps.toFixed(0), 11)}   ` +
        `${pad((hot.rps / floor.rps).toFixed(2), 5)}   ${pad(bodyFloor.rps.toFixed(0), 12)}   ` +
        `${pad((hot.rps / bodyFloor.rps).toFixed(2), 11)}   ${pad(hot.p50, 6)}   ${pad(hot.p99, 6)}   ` +
        `${pad(`${floor.p50}/${floor.p99}`, 13)}   ${pad(`${hot.bad}${hot.codes}`, 7)}   ${pad(fixed(perDecision, 3), 14)}   ` +
        `${pad(fixed(1 / perDecision, 1), 5)}   ${pad(calls === undefined ? "n/a" : (calls / hot.seconds).toFixed(0), 7)}`,
    );
  }
  for (const { connections, leases } of points) if (leases) console.log(`  ${connections} connections: ${leases}`);
  const bodyFloorBad = points.filter((p) => p.bodyFloor.bad > 0).map((p) => `${p.connections}: ${p.bodyFloor.codes}`);
  if (bodyFloorBad.length > 0)
    console.log(`  body floor answers other than 2xx, by connections: ${bodyFloorBad.join(", ")}`);
}

/** The issue's targets for `mode` at 64 connections and on exactness; returns whether exactness held. */
function printTargets(mode, points, exact) {
  const spec = MODES[mode];
  const at = points.find((p) => p.connections === TARGET_CONNECTIONS);
  const exactOk =
    exact.admitted >= spec.minAdmitted && exact.admitted <= LIMIT && exact.admitted + exact.refused === CONCURRENT;
  console.log(
    `exactness: ${CONCURRENT} concurrent on a limit of ${LIMIT}: ${exact.admitted} × 200, ${exact.refused} × 429` +
      `${exact.other ? `, other: ${exact.other}` : ""} -> ${exactOk ? "within bounds" : "OUT OF BOUNDS"}`,
  );
  if (!at) return exactOk;
  const perDecision = at.calls === undefined ? undefined : at.calls / at.served;
  const lines = [
    [`calls per decision <= ${spec.callsPerDecision}`, perDecision <= spec.callsPerDecision, fixed(perDecision, 3)],
    [
      `hot key >= ${spec.ratio} x floor`,
      at.hot.rps / at.floor.rps >= spec.ratio,
      (at.hot.rps / at.floor.rps).toFixed(2),
    ],
    ["every answer 200", at.hot.bad === 0, `${at.hot.bad}${at.hot.codes}`],
    [
      `${spec.minAdmitted === LIMIT ? "exactly" : `${spec.minAdmitted} to`} ${LIMIT} of ${CONCURRENT} admitted`,
      exactOk,
      exact.admitted,
    ],
  ];
  console.log(`targets, ${mode}, at ${TARGET_CONNECTIONS} connections:`);
  for (const [what, ok, value] of lines) console.log(`  ${ok ? "met   " : "MISSED"}  ${what}: ${value}`);
  return exactOk;
}

/** The hot-key points and the exactness run of every chosen mode; returns whether every exactness held. */
async function hotRuns(modes) {
  let ok = true;
  for (const mode of modes) {
    const started = await startMode(mode);
    if (started.unavailable) {
      console.log(`\n${mode}: not available (${started.unavailable})`);
      continue;
    }
    const { server } = started;
    try {
      const points = [];
      for (const connections of POINTS) points.push(await point(server.url, connections, `${mode}-hot-${connections}`));
      const exact = await exactness(server.url, `${mode}-exact`);
      printPoints(`${mode}${started.lease ? " (rules with lease: true)" : ""}`, points);
      if (!printTargets(mode, points, exact)) ok = false;
    } finally {
      await server.stop();
    }
  }
  return ok;
}

/** The capacity run of every chosen mode on the checkout in `projectDir`; one row per mode and connection count. */
async function capacityRuns(modes, projectDir, label) {
  const configPath = path.join(projectDir, "bench", "capacity", "wrangler.toml");
  const rows = [];
  for (const mode of modes) {
    const started = await startMode(mode, {
      projectDir,
      configPath,
      extraVars: { BENCH_COUNTER_CALL_CPU_MS: String(CPU_MS) },
    });
    if (started.unavailable) {
      rows.push({ mode, unavailable: started.unavailable });
      continue;
    }
    try {
      for (const connections of CAPACITY_POINTS) {
        rows.push({ mode, ...(await capacityPoint(started.server.url, connections, `cap-${mode}-${connections}`)) });
      }
    } finally {
      await started.server.stop();
    }
  }
  printCapacity(label, rows);
  return rows;
}

function printCapacity(label, rows) {
  const ceiling = 1000 / CPU_MS;
  console.log(
    `\ncapacity, ${label}: the counter object spends ${CPU_MS} ms of CPU per call (ceiling ${ceiling.toFixed(0)} ` +
      `calls/s), rates over ${CAPACITY_DURATION} s of steady state`,
  );
  console.log(
    "mode      conns   floor/s   decisions/s   / ceiling   calls/s   hook CPU   batch   key ceiling/s   p50 ms   p99 ms   target   non-2xx",
  );
  for (const r of rows) {
    if (r.unavailable) {
      console.log(`${r.mode.padEnd(8)}  not available (${r.unavailable})`);
      continue;
    }
    console.log(
      `${r.mode.padEnd(8)}  ${pad(r.connections, 5)}   ${pad(r.floor.rps.toFixed(0), 7)}   ${pad(r.rate.toFixed(0), 11)}   ` +
        `${pad((r.rate / ceiling).toFixed(2), 9)}   ${pad(r.callRate.toFixed(0), 7)}   ` +
        `${pad(`${((r.callRate * CPU_MS) / 10).toFixed(0)} %`, 8)}   ${pad(fixed(r.batch, 1), 5)}   ` +
        `${pad(fixed(r.batch * ceiling, 0), 13)}   ${pad(r.hot.p50, 6)}   ${pad(r.hot.p99, 6)}   ` +
        `${r.batch >= MODES[r.mode].batch && r.hot.bad === 0 ? "met   " : "MISSED"}   ${r.hot.bad}${r.hot.codes}`,
    );
  }
  console.log(
    "(key ceiling: the object's ceiling times the mean batch, what one key could take with the object saturated;" +
      " target: a batch of at least 3, leases 10, the issue's multiples of the object's call rate, and every answer 200)",
  );
}

/** The capacity run on BENCH_BASELINE_REF, with this checkout's bench/capacity/ copied into its worktree. */
async function baselineCapacity(ref, modes) {
  const worktree = baselineWorktree(ref);
  try {
    cpSync(path.join(root, "bench", "capacity"), path.join(worktree.dir, "bench", "capacity"), { recursive: true });
    await capacityRuns(modes, worktree.dir, `before (${ref})`);
  } finally {
    worktree.remove();
  }
}

/** `--hot`: the hot-key runs, the capacity run, and the baseline's capacity run when BENCH_BASELINE_REF is set. */
export async function hotBench(argv) {
  const modesArg = argv.indexOf("--modes");
  const modes = modesArg >= 0 ? list(argv[modesArg + 1]) : Object.keys(MODES);
  const unknown = modes.filter((mode) => !(mode in MODES));
  if (unknown.length > 0) throw new Error(`--modes: unknown ${unknown.join(", ")} (${Object.keys(MODES).join(", ")})`);
  const onlyArg = argv.indexOf("--only");
  const only = onlyArg >= 0 ? argv[onlyArg + 1] : undefined;
  if (only !== undefined && only !== "hot" && only !== "capacity") throw new Error("--only must be hot or capacity");
  if (!(CPU_MS > 0 && CPU_MS <= 50)) throw new Error("BENCH_COUNTER_CALL_CPU_MS must be from 0 (excluded) to 50");
  let ok = true;
  if (only !== "capacity") ok = await hotRuns(modes);
  if (only !== "hot") {
    await capacityRuns(modes, root, "now");
    if (process.env.BENCH_BASELINE_REF) await baselineCapacity(process.env.BENCH_BASELINE_REF, modes);
  }
  if (!ok) {
    console.error("\nFAILED: an exactness run admitted outside its bounds");
    process.exitCode = 1;
  }
}
