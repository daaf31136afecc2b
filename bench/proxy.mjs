#!/usr/bin/env node
// `npm run bench:proxy`: latency of the proxy API's two heavy calls against a floor measured in the same run.
//   1. POST /domains/massupdate with 1000 operations (500 updates that move existing domains, 500 creates);
//   2. GET /domains/{p} on a project holding 5000 domains.
// Each runs through `wrangler dev` (the real Worker, local D1) as an API user with HTTP Basic. The floor is
// bench/d1-floor: a bare Worker doing the same D1 writes and reads as plain batches (no auth, validation,
// lookups or framework), on its own database built from the same migrations, in its own `wrangler dev`.
// Prints p50 (and p90) in milliseconds and the ratio API / floor, and what HTTP Basic alone costs: the user's first
// request (the PBKDF2 check) and later ones (credentials remembered by the isolate). Beside them, the D1 work of the
// timed requests per 1,000 (a mass update: per 1,000 domain operations, so per request) on each side, from the
// Server-Timing header: the API runs with D1_USAGE_HEADER on, the floor always answers it (bench/d1-usage.mjs).
// Env: BENCH_MASS_ROUNDS (default 20) and BENCH_GET_ROUNDS (default 40) set how many timed rounds each part runs.
import path from "node:path";
import { root, stopAll, stopAllOnSignals } from "../test/support/processes.mjs";
import { startWranglerDev } from "../test/support/wrangler-dev.mjs";
import { D1_FOOTNOTE, D1Tally, d1Header, d1Line, d1UsageOf } from "./d1-usage.mjs";
import { percentile } from "./samples.mjs";

stopAllOnSignals();

const floorConfig = path.join(root, "bench", "d1-floor", "wrangler.toml");

const ADMIN = { username: "bench-admin", password: "bench-admin-password" };
const USER = { username: "bencher", password: "bencher-password" };
const MASS_ROUNDS = Number(process.env.BENCH_MASS_ROUNDS ?? 20);
const GET_ROUNDS = Number(process.env.BENCH_GET_ROUNDS ?? 40);
const WARMUP = 3;

const basic = ({ username, password }) => `Basic ${Buffer.from(`${username}:${password}`).toString("base64")}`;

/** Sends a request; answers its body and the D1 work its Server-Timing reports, or throws on a status not 2xx. */
async function request(base, pathName, { method = "GET", body, auth } = {}) {
  const response = await fetch(`${base}${pathName}`, {
    method,
    headers: {
      ...(auth && { Authorization: auth }),
      ...(body !== undefined && { "content-type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${pathName} answered ${response.status}: ${text.slice(0, 300)}`);
  return { text, usage: d1UsageOf(response) };
}

/** How long `fn` took, and the answer it returned. */
async function timed(fn) {
  const start = performance.now();
  const answer = await fn();
  return { ms: performance.now() - start, answer };
}

const fmt = (ms) => ms.toFixed(1).padStart(8);

// Same projects and backends, in the same order, so both databases get the same ids.
const LAYOUT = [
  { label: "mass", backends: ["web", "api"] },
  { label: "big", backends: ["web", "api"] },
];

/** Two `wrangler dev`s, the API's and the floor's, with the same projects and backends under the same ids. */
async function startStands() {
  console.log("bench:proxy: starting wrangler dev for the API and for the D1 floor ...");
  const api = await startWranglerDev(
    {
      PROXY_ADMIN_USERNAME: ADMIN.username,
      PROXY_ADMIN_PASSWORD: ADMIN.password,
      // The rounds leave 11 500 domains (with public CA certificates) in one project: past the default quotas, whose
      // checks still run on every write.
      PROXY_MAX_DOMAINS_PER_PROJECT: "20000",
      PROXY_MAX_INSTALLATION_PUBLIC_CA_DOMAINS: "20000",
      // Each answer carries its D1 work (Server-Timing), which the report sums.
      D1_USAGE_HEADER: "true",
    },
    { name: "proxy-api", inheritStderr: true },
  );
  const floor = await startWranglerDev(
    {},
    { name: "proxy-floor", configPath: floorConfig, readyPath: "/ping", inheritStderr: true },
  );
  const admin = basic(ADMIN);
  for (const project of LAYOUT) {
    await request(api.url, "/admin/projects", { method: "POST", body: { label: project.label }, auth: admin });
    for (const backend of project.backends)
      await request(api.url, `/backends/${project.label}`, { method: "POST", body: { label: backend }, auth: admin });
  }
  await request(api.url, "/admin/apiusers", {
    method: "POST",
    body: { ...USER, projectPatterns: ["mass", "big"] },
    auth: admin,
  });
  const seeded = await request(floor.url, "/seed", { method: "POST", body: { projects: LAYOUT } });
  const floorBackends = JSON.parse(seeded.text);
  const backendId = (projectLabel, backendLabel) => {
    const projectIndex = LAYOUT.findIndex((p) => p.label === projectLabel) + 1;
    return floorBackends.find((b) => b.project_id === projectIndex && b.label === backendLabel).id;
  };
  const toFloor = (operations) => ({
    domains: operations.map((o) => ({
      domainName: o.domainName,
      backendId: backendId(o.projectLabel, o.backendLabel),
      publicCaCertificate: o.enableSSL === true,
      redirectToUrl: o.redirectToUrl ?? null,
    })),
  });
  return { api, floor, toFloor };
}

/** Runs `rounds` timed pairs of (API, floor) after the warm-ups and keeps the timed ones' times and D1 work. */
async function pairedRounds(rounds, apiCall, floorCall) {
  const samples = { api: [], floor: [], d1: { api: new D1Tally(), floor: new D1Tally() } };
  for (let round = 0; round < WARMUP + rounds; round++) {
    const api = await timed(() => apiCall(round));
    const floor = await timed(() => floorCall(round));
    if (round >= WARMUP) {
      samples.api.push(api.ms);
      samples.floor.push(floor.ms);
      samples.d1.api.add(api.answer.usage);
      samples.d1.floor.add(floor.answer.usage);
    }
  }
  return samples;
}

/** Round r updates (moves) the 500 domains created by round r-1 and creates 500 new ones. */
const massOperationsOf = (round) => [
  ...Array.from({ length: 500 }, (_, i) => ({
    operation: "UPDATE",
    domainName: `r${round - 1}-${i}.mass.example`,
    projectLabel: "mass",
    backendLabel: round % 2 ? "api" : "web",
    enableSSL: round % 2 === 0,
  })),
  ...Array.from({ length: 500 }, (_, i) => ({
    operation: "CREATE",
    domainName: `r${round}-${i}.mass.example`,
    projectLabel: "mass",
    backendLabel: "web",
    enableSSL: true,
    ...(i % 10 === 0 && { redirectToUrl: `https://target.example/r${round}/*` }),
  })),
];

/** Seeds 5000 domains into project "big" on both sides with one mass update each. */
async function seedBigProject({ api, floor, toFloor }) {
  const seed = Array.from({ length: 5000 }, (_, i) => ({
    operation: "CREATE",
    domainName: `d${i}.big.example`,
    projectLabel: "big",
    backendLabel: i % 3 ? "web" : "api",
    enableSSL: i % 2 === 0,
  }));
  const body = { domainOperations: seed };
  await request(api.url, "/domains/massupdate", { method: "POST", body, auth: basic(ADMIN) });
  await request(floor.url, "/massupdate", { method: "POST", body: toFloor(seed) });
  const count = Object.keys(JSON.parse((await request(api.url, "/domains/big", { auth: basic(USER) })).text)).length;
  if (count !== 5000) throw new Error(`expected 5000 domains, the API listed ${count}`);
  return LAYOUT.findIndex((p) => p.label === "big") + 1;
}

function report({ mass, list, auth, authCold }) {
  console.log("");
  console.log(
    `bench:proxy (${MASS_ROUNDS} mass updates, ${GET_ROUNDS} reads after ${WARMUP} warm-ups each; wall time per request, ms)`,
  );
  console.log("                                          API p50  API p90  floor p50  ratio p50");
  const line = (name, apiP50, apiP90, floorP50) =>
    console.log(
      `${name.padEnd(40)} ${fmt(apiP50)} ${apiP90 === null ? "".padStart(8) : fmt(apiP90)} ${fmt(floorP50).padStart(10)} ${(apiP50 / floorP50).toFixed(2).padStart(9)}x`,
    );
  const row = (name, samples) =>
    line(name, percentile(samples.api, 50), percentile(samples.api, 90), percentile(samples.floor, 50));
  row("POST /domains/massupdate (1000 ops)", mass);
  row("GET /domains/{p} (5000 domains)", list);
  row("GET /test/authping (Basic, warm)", auth);
  line("GET /test/authping (Basic, first request)", authCold, null, percentile(auth.floor, 50));
  console.log("");
  const width = 44;
  // A mass update is 1000 domain operations: its figures per 1,000 operations are those of one request.
  console.log(d1Header(width, "1,000 operations"));
  for (const [name, samples, operations] of [
    ["POST /domains/massupdate (1000 ops)", mass, 1000],
    ["GET /domains/{p} (5000 domains)", list, 1],
    ["GET /test/authping (Basic, warm)", auth, 1],
  ]) {
    console.log(d1Line(`${name}, API`, samples.d1.api, width, operations));
    console.log(d1Line(`${name}, floor`, samples.d1.floor, width, operations));
  }
  console.log("(an operation: a domain operation of a mass update, else a request)");
  console.log(D1_FOOTNOTE);
}

async function main() {
  const stands = await startStands();
  const { api, floor, toFloor } = stands;
  const user = basic(USER);
  // The user's first request finds no remembered credentials in the isolate: it pays the PBKDF2 check.
  const authCold = (await timed(() => request(api.url, "/test/authping", { auth: user }))).ms;
  const mass = await pairedRounds(
    MASS_ROUNDS,
    (round) =>
      request(api.url, "/domains/massupdate", {
        method: "POST",
        body: { domainOperations: massOperationsOf(round) },
        auth: user,
      }),
    (round) => request(floor.url, "/massupdate", { method: "POST", body: toFloor(massOperationsOf(round)) }),
  );
  const floorProjectId = await seedBigProject(stands);
  const list = await pairedRounds(
    GET_ROUNDS,
    () => request(api.url, "/domains/big", { auth: user }),
    () => request(floor.url, `/domains/${floorProjectId}`),
  );
  // What HTTP Basic alone costs an API user once the isolate remembers the credentials (PROXY_AUTH_CACHE_TTL), against
  // the floor's bare request.
  const auth = await pairedRounds(
    GET_ROUNDS,
    () => request(api.url, "/test/authping", { auth: user }),
    () => request(floor.url, "/ping"),
  );
  report({ mass, list, auth, authCold });
}

try {
  await main();
  await stopAll();
} catch (error) {
  console.error(`bench:proxy failed: ${error instanceof Error ? error.message : error}`);
  await stopAll();
  process.exit(1);
}
