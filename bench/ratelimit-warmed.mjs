// The warmed workloads of `--backend` and `--stats`: a floor, 1000 warm keys and a hot key on prepared dev servers.
import { readdirSync, readFileSync } from "node:fs";
import { startMemcached, startRedis } from "../test/support/local-servers.mjs";
import { startWranglerDev } from "../test/support/wrangler-dev.mjs";
import { CONFIG, CONNECTIONS, DURATION, KEYS, run, TOKEN } from "./ratelimit-shared.mjs";

const jsonBody = (key) =>
  JSON.stringify({ domain: "bench", descriptors: [{ entries: [{ key: "client", value: key }] }] });
// Built once, so the client's own work per request is the same in (b) as in (c).
const KEY_BODIES = Array.from({ length: KEYS }, (_, i) => jsonBody(`key-${i}`));

const BACKENDS = ["durable-object", "redis", "memcache"];
const backendArg = process.argv.indexOf("--backend");
export const BACKEND = backendArg >= 0 ? process.argv[backendArg + 1] : "durable-object";
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

/** `--backend`: each warmed workload on the Durable Object store, then on BACKEND; the ratios of the two. */
export async function compareBackends() {
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
export async function compareStats() {
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
