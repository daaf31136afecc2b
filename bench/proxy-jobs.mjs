#!/usr/bin/env node
// `npm run bench:proxy-jobs`: GET /admin/gensynchaprx for an installation of 1000 backends (2000 containers) with
// 10 000 domains, against the time `haproxy -c` itself needs for the generated configuration, measured in the same run.
//   1. seeds a local D1 state with `wrangler d1 execute --file` and copies it, so that each wrangler dev has its own;
//   2. "Worker only": wrangler dev without an agent: load from D1, generate, check, store the version (the warning
//      says no load balancer was updated);
//   3. "with agent": wrangler dev pushing to the real haproxy-agent (reload command `true`), which writes the bundle,
//      runs `haproxy -c`, swaps the files in (one backend's timeout changes before each round, so every bundle is new
//      and the agent never skips the check as "unchanged");
//   4. the floor: `haproxy -c -f haproxy.cfg` on the agent's applied files, run directly.
// Sequential requests (c=1); prints p50 and mean wall time in milliseconds and the ratios to the floor, and beside
// them the D1 work of the timed gensynchaprx calls per 1,000 calls, from their Server-Timing header (both wrangler
// dev run with D1_USAGE_HEADER on; bench/d1-usage.mjs). The administrator's call generates inline, in the request,
// so the header holds the whole run (its job-run row, the load, the stored version); the floor touches no D1.
// Env: BENCH_PROXY_JOBS_ROUNDS (default 15) timed rounds per side, after 2 warm-ups.
import { spawn, spawnSync } from "node:child_process";
import { cpSync, writeFileSync } from "node:fs";
import path from "node:path";
import { freePort, root, stopAll, stopAllOnSignals, tempDir } from "../test/support/processes.mjs";
import { startWranglerDev, wranglerSync } from "../test/support/wrangler-dev.mjs";
import { D1_FOOTNOTE, D1Tally, d1Header, d1Line, d1UsageOf } from "./d1-usage.mjs";
import { mean, percentile } from "./samples.mjs";

stopAllOnSignals();

const ROUNDS = Number(process.env.BENCH_PROXY_JOBS_ROUNDS ?? 15);
const WARMUP = 2;
const PROJECTS = 10;
const BACKENDS = 1000;
const DOMAINS_PER_BACKEND = 10;
const ADMIN = { PROXY_ADMIN_USERNAME: "bench-admin", PROXY_ADMIN_PASSWORD: "bench-admin-password" };
/** Each answer carries its D1 work (Server-Timing), which the report sums. */
const COUNTED = { D1_USAGE_HEADER: "true" };
const AGENT_TOKEN = "bench-agent-token";
const auth = `Basic ${Buffer.from(`${ADMIN.PROXY_ADMIN_USERNAME}:${ADMIN.PROXY_ADMIN_PASSWORD}`).toString("base64")}`;

const pad = (n, width) => String(n).padStart(width, "0");

function seedSql() {
  const lines = [];
  const projects = Array.from({ length: PROJECTS }, (_, i) => `(${i + 1}, 'bench${pad(i, 2)}', 'Bench project ${i}')`);
  lines.push(`INSERT INTO projects (id, label, fullname) VALUES ${projects.join(", ")};`);
  const hosts = Array.from(
    { length: 10 },
    (_, i) => `(${i + 1}, 'node${pad(i, 2)}.bench.example', '2001:db8:1::${(i + 1).toString(16)}')`,
  );
  lines.push(`INSERT INTO hosts (id, hostname, ipv6) VALUES ${hosts.join(", ")};`);
  const perProject = BACKENDS / PROJECTS;
  const chunk = (rows, head) => {
    for (let i = 0; i < rows.length; i += 500) lines.push(`${head} ${rows.slice(i, i + 500).join(", ")};`);
  };
  const backends = [];
  const containers = [];
  const references = [];
  const domains = [];
  for (let b = 1; b <= BACKENDS; b++) {
    const project = Math.ceil(b / perProject);
    backends.push(`(${b}, ${project}, 'b${pad(b, 4)}', 8080, 'balance roundrobin')`);
    for (const c of [2 * b - 1, 2 * b]) {
      containers.push(`(${c}, ${project}, 'c${pad(c, 4)}', ${(c % 10) + 1}, '2001:db8:2::${c.toString(16)}')`);
      references.push(`(${b}, ${c}, ${c % 2 ? "'check'" : "NULL"})`);
    }
    for (let d = 0; d < DOMAINS_PER_BACKEND; d++) {
      domains.push(`('d${pad((b - 1) * DOMAINS_PER_BACKEND + d, 5)}.bench${pad(project - 1, 2)}.example', ${b})`);
    }
  }
  chunk(backends, "INSERT INTO backends (id, project_id, label, port, params) VALUES");
  chunk(containers, "INSERT INTO containers (id, project_id, label, host_id, ipv6) VALUES");
  chunk(references, "INSERT INTO backend_containers (backend_id, container_id, params) VALUES");
  chunk(domains, "INSERT INTO domains (domain_name, backend_id) VALUES");
  return lines.join("\n");
}

async function timedGensync(url) {
  const start = performance.now();
  const response = await fetch(`${url}/admin/gensynchaprx`, { headers: { Authorization: auth } });
  const text = await response.text();
  const ms = performance.now() - start;
  if (response.status !== 200) throw new Error(`gensynchaprx answered ${response.status}: ${text.slice(0, 500)}`);
  return { ms, warnings: JSON.parse(text), usage: d1UsageOf(response) };
}

async function touchBackend(url, round) {
  const response = await fetch(`${url}/backends/bench00`, {
    method: "POST",
    headers: { Authorization: auth, "content-type": "application/json" },
    // A comment would not do: params are stored vetted and comments are not written to haproxy.cfg.
    body: JSON.stringify({ label: "b0001", params: `balance roundrobin\ntimeout server ${10 + round}s` }),
  });
  if (response.status !== 200) throw new Error(`POST /backends answered ${response.status}: ${await response.text()}`);
}

function timedHaproxyCheck(configFile) {
  const start = performance.now();
  const result = spawnSync("haproxy", ["-c", "-f", configFile], { encoding: "utf8" });
  const ms = performance.now() - start;
  if (result.status !== 0) throw new Error(`haproxy -c failed: ${result.stdout}${result.stderr}`);
  return ms;
}

const fmt = (ms) => ms.toFixed(1).padStart(9);

/** The real HAProxy agent, writing into `configDir`, with a reload command that does nothing. */
async function startAgent(configDir) {
  const agentPort = await freePort();
  const child = spawn(
    process.execPath,
    [
      path.join(root, "haproxy-agent", "agent.mjs"),
      "--config-dir",
      configDir,
      "--reload-cmd",
      "true",
      "--port",
      String(agentPort),
    ],
    {
      cwd: root,
      env: { ...process.env, HAPROXY_AGENT_TOKEN: AGENT_TOKEN },
      detached: true,
      stdio: ["ignore", "ignore", "inherit"],
    },
  );
  return { child, port: agentPort };
}

async function report(pushingUrl, samples) {
  const version = await (await fetch(`${pushingUrl}/admin/haproxy`, { headers: { Authorization: auth } })).json();
  const sizes = Object.entries(version.files).map(
    ([name, content]) => `${name} ${(content.length / 1024).toFixed(0)} KiB`,
  );

  const floor = percentile(samples.check, 50);
  console.log("");
  console.log(
    `bench:proxy-jobs (${BACKENDS} backends, ${2 * BACKENDS} servers, ${BACKENDS * DOMAINS_PER_BACKEND} domains; ${ROUNDS} rounds after ${WARMUP} warm-ups; c=1; wall ms)`,
  );
  console.log(`bundle: ${sizes.join(", ")}`);
  console.log("                                                     p50      mean   p50 / floor");
  console.log(
    `GET /admin/gensynchaprx, Worker only (no agent)  ${fmt(percentile(samples.alone, 50))} ${fmt(mean(samples.alone))} ${(percentile(samples.alone, 50) / floor).toFixed(2).padStart(9)}x`,
  );
  console.log(
    `GET /admin/gensynchaprx, with agent (haproxy -c) ${fmt(percentile(samples.pushing, 50))} ${fmt(mean(samples.pushing))} ${(percentile(samples.pushing, 50) / floor).toFixed(2).padStart(9)}x`,
  );
  console.log(`haproxy -c -f haproxy.cfg alone (floor)          ${fmt(floor)} ${fmt(mean(samples.check))}`);
  console.log("");
  console.log(d1Header(48, "1,000 calls"));
  console.log(d1Line("GET /admin/gensynchaprx, Worker only (no agent)", samples.d1.alone, 48));
  console.log(d1Line("GET /admin/gensynchaprx, with agent (haproxy -c)", samples.d1.pushing, 48));
  console.log("haproxy -c alone (floor): no D1");
  console.log(D1_FOOTNOTE);
}

async function main() {
  if (spawnSync("sh", ["-c", "command -v haproxy"]).status !== 0)
    throw new Error("haproxy is not installed (apt-get install haproxy)");
  const seeded = tempDir("bench-proxy-jobs-seed-").dir;
  console.log(
    `bench:proxy-jobs: seeding ${BACKENDS} backends, ${2 * BACKENDS} containers, ${BACKENDS * DOMAINS_PER_BACKEND} domains ...`,
  );
  wranglerSync(["d1", "migrations", "apply", "DB", "--local", "--persist-to", seeded], "migrations");
  const seedFile = path.join(tempDir("bench-proxy-jobs-sql-").dir, "seed.sql");
  writeFileSync(seedFile, seedSql());
  wranglerSync(["d1", "execute", "DB", "--local", "--persist-to", seeded, "--file", seedFile], "seeding");
  const withAgentState = tempDir("bench-proxy-jobs-agent-state-").dir;
  cpSync(seeded, withAgentState, { recursive: true });

  const configDir = tempDir("bench-proxy-jobs-haproxy-").dir;
  const agent = await startAgent(configDir);
  try {
    console.log("bench:proxy-jobs: starting wrangler dev without and with an agent ...");
    const alone = await startWranglerDev(
      { ...ADMIN, ...COUNTED },
      { name: "proxy-jobs-alone", persistTo: seeded, migrate: false, inheritStderr: true },
    );
    const pushing = await startWranglerDev(
      { ...ADMIN, ...COUNTED, HAPROXY_AGENT_URL: `http://127.0.0.1:${agent.port}`, HAPROXY_AGENT_TOKEN: AGENT_TOKEN },
      { name: "proxy-jobs-agent", persistTo: withAgentState, migrate: false, inheritStderr: true },
    );

    const samples = { alone: [], pushing: [], check: [], d1: { alone: new D1Tally(), pushing: new D1Tally() } };
    for (let round = 0; round < WARMUP + ROUNDS; round++) {
      // One changed line per round: an unchanged bundle would let the agent skip `haproxy -c` and the reload.
      for (const { url } of [alone, pushing]) await touchBackend(url, round);
      const a = await timedGensync(alone.url);
      const p = await timedGensync(pushing.url);
      if (p.warnings.length !== 0) throw new Error(`unexpected warnings with the agent: ${p.warnings.join("; ")}`);
      const c = timedHaproxyCheck(path.join(configDir, "haproxy.cfg"));
      if (round >= WARMUP) {
        samples.alone.push(a.ms);
        samples.pushing.push(p.ms);
        samples.check.push(c);
        samples.d1.alone.add(a.usage);
        samples.d1.pushing.add(p.usage);
      }
    }
    await report(pushing.url, samples);
  } finally {
    try {
      process.kill(-agent.child.pid, "SIGTERM");
    } catch {}
  }
}

try {
  await main();
  await stopAll();
} catch (error) {
  console.error(`bench:proxy-jobs failed: ${error instanceof Error ? error.message : error}`);
  await stopAll();
  process.exit(1);
}
