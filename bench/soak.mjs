#!/usr/bin/env node
// `npm run bench:soak`: runs the real `npm start` (own ports, fresh --persist-to state, .dev.vars.example's values)
// and sends it a fixed mixed rate for SOAK_MINUTES (default 15): half POST /json over SOAK_KEYS (5000) client keys,
// a fifth ShouldRateLimit over gRPC through the gateway, the rest GET /news (a signed-up user) and GET /admin/projects.
// Every SOAK_SAMPLE_SECONDS (30) it records the resident memory (RSS) of each process `npm start` runs (npm, the
// supervisor, its watchdog, wrangler, both workerd, esbuild, the gateway), then prints the samples, each process's
// growth over the last 10 minutes (in a shorter run, its last two thirds) and the answers: each kind's count of right
// answers (200 or 429 for /json, OK for gRPC, 200 for the rest) and of the others. SOAK_RATE: requests per second (50).
// Arguments after `--` go to `npm start` (e.g. `npm run bench:soak -- --var COUNTER_OBJECT_LAYOUT:sharded`). If npm
// start exits early (it stops when a workerd crashes), the run ends there with exit code 1. Linux only (/proc).
// Beside it runs a control (bench/soak-control.mjs; SOAK_CONTROL=0 leaves it out): a Worker that only answers "ok",
// under its own wrangler dev, sent GET at the same rate; its two workerd are sampled and reported with the others, and
// each of npm start's workerd's growth is printed beside its control's.
// Storage work beside the memory: npm start runs with D1_USAGE_HEADER on, and each kind's D1 work per 1,000 right
// answers is summed from their Server-Timing headers (bench/d1-usage.mjs); the counter objects' calls, rows written and
// commits per 1,000 decisions (POST /json and gRPC) come from their statistics on /stats, read before the load and,
// settled, after it, as bench:ratelimit reads them.
import grpc from "@grpc/grpc-js";
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { loadProto } from "../grpc-gateway/proto.mjs";
import { commandLine, descendantsOf, residentKiB } from "../scripts/start/processes.mjs";
import { freePort, root, tempDir } from "../test/support/processes.mjs";
import { D1_FOOTNOTE, D1Tally, d1Header, d1Line, d1UsageOf } from "./d1-usage.mjs";
import { counterStats, perThousand, settledCounterStats } from "./ratelimit-counters.mjs";
import { startControl } from "./soak-control.mjs";
import { controlComparison, growth, growthWindowMs, sampleTable, soakOptions } from "./soak-figures.mjs";

const options = soakOptions(process.env);
const runMs = options.minutes * 60_000;
const varsFile = path.join(root, ".dev.vars.example");
const vars = Object.fromEntries(
  readFileSync(varsFile, "utf8")
    .split("\n")
    .filter((line) => /^[A-Z_]+=/.test(line))
    .map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]),
);

/** Starts `npm start` in its own process group and waits for its "ready". */
async function startNpm() {
  const [port, grpcPort, inspectorPort] = [await freePort(), await freePort(), await freePort()];
  const state = tempDir("soak-state-");
  const args = ["start", "--", "--ip", "127.0.0.1", "--port", String(port), "--inspector-port", String(inspectorPort)];
  // Each answer carries its D1 work (Server-Timing), which the report sums; the arguments after `--` come later.
  args.push("--var", "D1_USAGE_HEADER:true");
  const extra = process.argv.slice(2);
  const child = spawn("npm", [...args, "--persist-to", state.dir, "--env-file", varsFile, ...extra], {
    cwd: root,
    env: { ...process.env, GRPC_HOST: "127.0.0.1", GRPC_PORT: String(grpcPort) },
    stdio: ["ignore", "pipe", "inherit"],
    detached: true,
  });
  let output = "";
  await new Promise((resolve, reject) => {
    child.stdout.on("data", (chunk) => {
      output += chunk;
      if (output.includes("npm start: ready")) resolve(undefined);
    });
    child.once("exit", (code) => reject(new Error(`npm start exited with ${code}:\n${output}`)));
  });
  child.stdout.resume();
  return { child, port, grpcPort, state };
}

/** What each process of the tree is, from its command line. */
function label(entry, port) {
  const line = commandLine(entry.pid);
  if (entry.name === "workerd")
    return line.includes(`:${port} `) || line.endsWith(`:${port}`) ? "workerd proxy" : "workerd user";
  if (line.includes("scripts/start.mjs")) return "supervisor";
  if (line.includes("start/watchdog.mjs")) return "watchdog";
  if (line.includes("wrangler-dist")) return "wrangler";
  if (line.includes("bin/wrangler.js")) return "wrangler launcher";
  if (line.includes("gateway.mjs")) return "gateway";
  if (entry.name === "esbuild") return "esbuild";
  if (line.includes("npm")) return "npm";
  return entry.name;
}

/** @returns {Record<string, number | undefined>} RSS in KiB of every process of the tree, by label */
function memoryOf(npmPid, port) {
  const kib = { npm: residentKiB(npmPid) };
  for (const entry of descendantsOf([npmPid])) {
    let name = label(entry, port);
    while (name in kib) name += "+";
    kib[name] = residentKiB(entry.pid);
  }
  return kib;
}

const counts = {};
/** @type {Record<string, D1Tally>} each kind's D1 work, summed over its right answers */
const d1ByKind = {};
/** @param {string} kind @param {boolean} right @param {string} [what] the status or error of a wrong answer */
const tally = (kind, right, what = "") => {
  counts[kind] ??= { right: 0, other: 0, others: {} };
  counts[kind][right ? "right" : "other"]++;
  if (!right) counts[kind].others[what] = (counts[kind].others[what] ?? 0) + 1;
};

function makeLoad({ port, grpcPort, token }) {
  const origin = `http://127.0.0.1:${port}`;
  const { RateLimitService } = loadProto("envoy/service/ratelimit/v3/rls.proto").envoy.service.ratelimit.v3;
  const client = new RateLimitService(`127.0.0.1:${grpcPort}`, grpc.credentials.createInsecure());
  const basic = `Basic ${Buffer.from(`${vars.PROXY_ADMIN_USERNAME}:${vars.PROXY_ADMIN_PASSWORD}`).toString("base64")}`;
  const descriptors = (k) => [
    { entries: [{ key: "remote_address", value: `10.${(k >> 16) & 255}.${(k >> 8) & 255}.${k & 255}` }] },
    {
      entries: [
        { key: "plan", value: "free" },
        { key: "api_key", value: `key-${k}` },
      ],
    },
  ];
  const fetchKind = async (kind, url, init, ok) => {
    try {
      const response = await fetch(url, { ...init, signal: AbortSignal.timeout(10_000) });
      await response.arrayBuffer();
      tally(kind, ok(response.status), String(response.status));
      if (ok(response.status)) (d1ByKind[kind] ??= new D1Tally()).add(d1UsageOf(response));
    } catch (error) {
      tally(kind, false, error instanceof Error ? error.name : String(error));
    }
  };
  let sent = 0;
  return {
    client,
    send() {
      const i = sent++;
      const k = i % options.keys;
      const slot = i % 10;
      if (slot < 5) {
        const body = JSON.stringify({ domain: "example", descriptors: descriptors(k) });
        const init = { method: "POST", body, headers: { "content-type": "application/json" } };
        return fetchKind("POST /json", `${origin}/json`, init, (s) => s === 200 || s === 429);
      }
      if (slot < 7) {
        return new Promise((resolve) =>
          client.ShouldRateLimit(
            { domain: "example", descriptors: descriptors(k) },
            { deadline: Date.now() + 10_000 },
            (error) => resolve(tally("gRPC ShouldRateLimit", !error, error ? grpc.status[error.code] : "")),
          ),
        );
      }
      if (slot < 9) {
        const init = { headers: { authorization: `Bearer ${token}` } };
        return fetchKind("GET /news", `${origin}/news?limit=5`, init, (s) => s === 200);
      }
      return fetchKind(
        "GET /admin/projects",
        `${origin}/admin/projects`,
        { headers: { authorization: basic } },
        (s) => s === 200,
      );
    },
  };
}

async function signUp(port) {
  const response = await fetch(`http://127.0.0.1:${port}/users`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ access_token: vars.MASTER_KEY, email: "soak@example.com", password: "soak-password-1" }),
  });
  if (response.status !== 201) throw new Error(`sign-up answered ${response.status}: ${await response.text()}`);
  return (await response.json()).token;
}

async function main() {
  console.log(
    `soak: ${options.minutes} min at ${options.rate} requests/s over ${options.keys} keys, RSS every ${options.sampleSeconds} s`,
  );
  const server = await startNpm();
  /** @type {Awaited<ReturnType<typeof startControl>> | undefined} */
  let control;
  const stop = async () => {
    await control?.stop();
    try {
      process.kill(server.child.pid, "SIGTERM");
    } catch {}
    await new Promise((resolve) =>
      server.child.exitCode !== null ? resolve(undefined) : server.child.once("exit", resolve),
    );
    try {
      process.kill(-server.child.pid, "SIGKILL");
    } catch {}
    server.state.remove();
  };
  process.on("SIGINT", () => stop().then(() => process.exit(130)));
  try {
    // Inside the try: a control that fails to start stops npm start too.
    if (options.control) control = await startControl();
    await soak(server, control);
  } finally {
    await stop();
  }
}

/**
 * The mixed load at the fixed rate for the run's time, the processes' memory sampled, then the report. npm start
 * ending early (a crashed workerd stops it) ends the run: the figures so far, then exit code 1.
 * @param {Awaited<ReturnType<typeof startNpm>>} server @param {Awaited<ReturnType<typeof startControl>> | undefined} control
 */
async function soak(server, control) {
  const origin = `http://127.0.0.1:${server.port}`;
  const load = makeLoad({ ...server, token: await signUp(server.port) });
  const statsBefore = await counterStats(origin, vars.RATELIMIT_ADMIN_TOKEN);
  const samples = [];
  const started = Date.now();
  const sample = () => {
    const kib = { ...memoryOf(server.child.pid, server.port), ...control?.memory() };
    samples.push({ atMs: Date.now() - started, kib });
    const figures = Object.entries(kib).map(([name, value]) => `${name} ${((value ?? 0) / 1024).toFixed(1)}`);
    console.log(`t=${Math.round((Date.now() - started) / 1000)} s  RSS MiB: ${figures.join(", ")}`);
  };
  sample();
  const inFlight = new Set();
  const ticker = setInterval(() => {
    if (inFlight.size >= 500) return tally("skipped (500 in flight)", false);
    for (const pending of control ? [load.send(), control.send()] : [load.send()]) {
      inFlight.add(pending);
      pending.finally(() => inFlight.delete(pending));
    }
  }, 1000 / options.rate);
  const sampler = setInterval(sample, options.sampleSeconds * 1000);
  const ended = await runEnd(server, started);
  clearInterval(ticker);
  clearInterval(sampler);
  if (!ended) sample();
  await drain(inFlight);
  load.client.close();
  const statsAfter = ended ? undefined : await settledCounterStats(origin, 1500, vars.RATELIMIT_ADMIN_TOKEN);
  report(samples, Date.now() - started);
  printStorage(statsBefore, statsAfter);
  if (control)
    console.log(`  control GET /: ${control.counts().sent} sent, ${control.counts().failed} not answered 200`);
}

/** Resolves when the run's time is up (false) or npm start exited before (true, and the exit code becomes 1). */
async function runEnd(server, started) {
  let timer;
  const ended = await new Promise((resolve) => {
    timer = setTimeout(() => resolve(false), runMs);
    server.child.once("exit", () => resolve(true));
  });
  clearTimeout(timer);
  if (ended) {
    console.error(`soak: npm start exited after ${Math.round((Date.now() - started) / 1000)} s`);
    process.exitCode = 1;
  }
  return ended;
}

/**
 * Waits for the requests in flight. Every request has its own 10 s bound, but one stuck past it (seen once: the run
 * never printed its figures) must not hold the report: it is counted as not answered.
 * @param {Set<Promise<unknown>>} inFlight
 */
async function drain(inFlight) {
  const settled = await Promise.race([
    Promise.all(inFlight).then(() => true),
    new Promise((resolve) => setTimeout(() => resolve(false), 15_000)),
  ]);
  if (!settled) for (let i = 0; i < inFlight.size; i++) tally("still in flight 15 s after the end", false);
}

/**
 * The counter objects' work per 1,000 decisions (the right answers of POST /json and gRPC) between two reads of
 * /stats, and each kind's D1 work per 1,000 right answers.
 */
function printStorage(before, after) {
  const decisions = (counts["POST /json"]?.right ?? 0) + (counts["gRPC ShouldRateLimit"]?.right ?? 0);
  const objects = perThousand(before, after, decisions, ["calls", "rows_written", "commits"]);
  console.log(
    objects
      ? `\nCounter objects per 1,000 decisions (POST /json and gRPC, /stats): calls ${objects.calls.toFixed(1)}, ` +
          `rows written ${objects.rows_written.toFixed(1)}, commits ${objects.commits.toFixed(1)}`
      : "\nCounter objects per 1,000 decisions: n/a (npm start ended early, or no statistics on /stats)",
  );
  console.log(d1Header(24, "1,000 right answers"));
  for (const [kind, d1] of Object.entries(d1ByKind)) console.log(d1Line(`  ${kind}`, d1, 24));
  console.log(D1_FOOTNOTE);
}

function report(samples, ranMs) {
  const names = [...new Set(samples.flatMap((sample) => Object.keys(sample.kib)))];
  console.log(`\nRSS (MiB) of each process:\n${sampleTable(samples, names)}`);
  printAnswers();
  if (samples.length < 2) return;
  const { fromMs, toMs, growth: byName } = growth(samples, growthWindowMs(ranMs));
  console.log(`\nGrowth from t=${Math.round(fromMs / 1000)} s to t=${Math.round(toMs / 1000)} s:`);
  for (const [name, { from, to, percent }] of Object.entries(byName)) {
    console.log(
      `  ${name.padEnd(14)} ${(from / 1024).toFixed(1)} -> ${(to / 1024).toFixed(1)} MiB  (${signed(percent)} %)`,
    );
  }
  const compared = controlComparison(byName);
  if (compared.length > 0)
    console.log("\nAgainst the control (the same runtime and proxy with a Worker that holds nothing):");
  for (const { name, mib, percent, controlMib, controlPercent } of compared) {
    console.log(
      `  ${name.padEnd(14)} ${signed(mib)} MiB (${signed(percent)} %), its control ${signed(controlMib)} MiB (${signed(controlPercent)} %)`,
    );
  }
}

/** A figure with its sign and one decimal. @param {number} value */
const signed = (value) => `${value >= 0 ? "+" : ""}${value.toFixed(1)}`;

function printAnswers() {
  console.log("\nAnswers:");
  for (const [kind, { right, other, others }] of Object.entries(counts)) {
    const which = Object.entries(others).map(([what, count]) => `${what || "?"}: ${count}`);
    console.log(`  ${kind.padEnd(22)} ${right} right, ${other} other${which.length ? ` (${which.join(", ")})` : ""}`);
  }
}

await main();
