#!/usr/bin/env node
// `npm run bench:ratelimit`: throughput of POST /json against a floor measured in the same run, with autocannon
// at 32 connections for 10 s each (BENCH_DURATION, BENCH_CONNECTIONS override):
//   (a) GET /test/ping, the floor: the same Worker and dev server doing no rate-limit work;
//   (b) POST /json over 1000 distinct keys (1000 Durable Objects, warmed first);
//   (c) POST /json on one hot key (one Durable Object).
// Prints req/s, p50 and p99 for each and the ratios (b)/(a) and (c)/(a); the target is 0.6 or more.
import autocannon from "autocannon";
import { startDev, stopAll } from "./lib/dev-server.mjs";

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

const jsonBody = (key) => JSON.stringify({ domain: "bench", descriptors: [{ entries: [{ key: "client", value: key }] }] });

function run(title, options) {
  return new Promise((resolve, reject) => {
    autocannon({ connections: CONNECTIONS, duration: DURATION, ...options }, (error, result) => {
      if (error) return reject(error);
      const bad = result.non2xx + result.errors + result.timeouts;
      resolve({ title, rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, bad });
    });
  });
}

async function main() {
  const { url } = await startDev({ name: "ratelimit", vars: { RATELIMIT_ADMIN_TOKEN: TOKEN }, readyPath: "/test/ping" });
  const put = await fetch(`${url}/rlconfig/files`, {
    method: "PUT",
    headers: { Authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ files: { "bench.yaml": CONFIG } }),
  });
  if (put.status !== 200) throw new Error(`config refused: ${await put.text()}`);

  // Warm every key's object so (b) measures steady state, not first-touch creation.
  for (let i = 0; i < KEYS; i += 50) {
    await Promise.all(
      Array.from({ length: 50 }, (_, j) => fetch(`${url}/json`, { method: "POST", body: jsonBody(`key-${i + j}`) }).then((r) => r.text())),
    );
  }
  await run("warm-up", { url: `${url}/test/ping`, duration: 2 });

  let next = 0;
  const results = [
    await run("(a) GET /test/ping (floor)", { url: `${url}/test/ping` }),
    await run(`(b) POST /json, ${KEYS} keys`, {
      url: `${url}/json`,
      method: "POST",
      requests: [{ setupRequest: (request) => ({ ...request, body: jsonBody(`key-${next++ % KEYS}`) }) }],
    }),
    await run("(c) POST /json, one hot key", { url: `${url}/json`, method: "POST", body: jsonBody("hot") }),
  ];
  const floor = results[0].rps;
  console.log(`\nrate limit service, ${CONNECTIONS} connections, ${DURATION} s each (wrangler dev, --log-level error)\n`);
  console.log("workload                         req/s     p50 ms   p99 ms   ratio   non-2xx/errors");
  for (const r of results) {
    console.log(
      `${r.title.padEnd(32)} ${r.rps.toFixed(0).padStart(6)}   ${String(r.p50).padStart(6)}   ${String(r.p99).padStart(6)}   ${(r.rps / floor).toFixed(2).padStart(5)}   ${r.bad}`,
    );
  }
}

try {
  await main();
} finally {
  await stopAll();
}
