#!/usr/bin/env node
// `npm run bench:grpc`: ShouldRateLimit over real gRPC through the Node gateway against POST /json (the floor),
// both to the same `wrangler dev` in the same run, at 32 calls in flight (closed loop) over 1000 keys.
// BENCH_DURATION seconds per path (default 16), in 2-second slices alternating between the paths so that both see
// the same machine; prints calls/s, p50 and p99 per path and the ratio gRPC / JSON (target: 0.7 or more).
// BENCH_CONCURRENCY changes the 32. Beside the ratio: the counter objects' calls, rows written and commits per 1,000
// decisions of both paths, from their statistics on /stats (ratelimit.durable_object.*, read once settled before and
// after the timed slices, as bench:ratelimit does), and the D1 work of POST /json per 1,000 requests from its
// Server-Timing header (the Worker runs with D1_USAGE_HEADER on; the gateway does not pass the header on, and its
// calls run the same decision). A decision reads D1 only when the isolate's view of the rules is due.
import { spawn } from "node:child_process";
import http from "node:http";
import http2 from "node:http2";
import path from "node:path";
import { loadProto } from "../grpc-gateway/proto.mjs";
import { freePort, root, stopAll, stopAllOnSignals } from "../test/support/processes.mjs";
import { startWranglerDev, wranglerEnv } from "../test/support/wrangler-dev.mjs";
import { D1_FOOTNOTE, D1Tally, d1Header, d1Line, d1UsageOf } from "./d1-usage.mjs";
import { perThousand, settledCounterStats } from "./ratelimit-counters.mjs";

stopAllOnSignals();

const DURATION_MS = Number(process.env.BENCH_DURATION ?? 16) * 1000;
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
const SLICE_MS = 2000;
const ROUNDS = Math.max(1, Math.round(DURATION_MS / SLICE_MS));
const KEYS = 1000;
const TARGET = 0.7;
const TOKEN = "bench-admin-token";
const CONFIG = `domain: bench
descriptors:
  - key: client
    rate_limit:
      unit: day
      requests_per_unit: 4000000000
`;

const request = (i) => ({ domain: "bench", descriptors: [{ entries: [{ key: "client", value: `key-${i % KEYS}` }] }] });

/** @type {import("node:child_process").ChildProcess | undefined} */
let gatewayChild;
process.on("exit", () => gatewayChild?.kill("SIGKILL"));

async function startGateway(upstream) {
  const port = await freePort();
  gatewayChild = spawn(process.execPath, [path.join(root, "grpc-gateway", "gateway.mjs")], {
    cwd: root,
    env: {
      ...wranglerEnv(),
      RATELIMIT_UPSTREAM_URL: upstream,
      GRPC_HOST: "127.0.0.1",
      GRPC_PORT: String(port),
      GRPC_GATEWAY_DRAIN_TIME: "0s",
    },
    stdio: ["ignore", "pipe", "inherit"],
  });
  await new Promise((resolve, reject) => {
    let output = "";
    gatewayChild.stdout.on("data", (chunk) => {
      output += chunk;
      if (output.includes('"grpc-gateway: serving"')) resolve(undefined);
    });
    gatewayChild.once("exit", (code) => reject(new Error(`gateway exited with ${code}`)));
  });
  return `127.0.0.1:${port}`;
}

/** Distinct failure reasons, printed at the end; always answers false. */
const failureReasons = new Map();
function noteFailure(reason) {
  failureReasons.set(reason, (failureReasons.get(reason) ?? 0) + 1);
  return false;
}

/**
 * POST /json over keep-alive sockets, one per call in flight; resolves true on 200. Each 200's D1 work is added to the
 * caller's `d1` tally once one is set (bench/d1-usage.mjs).
 */
function jsonCaller(origin) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const bodies = Array.from({ length: KEYS }, (_, i) => Buffer.from(JSON.stringify(request(i))));
  const url = new URL("/json", origin);
  /** @type {((i: number) => Promise<boolean>) & { d1?: D1Tally }} */
  const call = (i) =>
    new Promise((resolve) => {
      const body = bodies[i % KEYS];
      const headers = { "content-type": "application/json", "content-length": body.length };
      const sent = http.request(url, { method: "POST", agent, headers });
      sent.on("response", (response) => {
        response.resume();
        if (response.statusCode === 200)
          call.d1?.add(d1UsageOf({ headers: { get: (name) => String(response.headers[name] ?? "") } }));
        response.on("end", () =>
          resolve(response.statusCode === 200 || noteFailure(`/json status ${response.statusCode}`)),
        );
      });
      sent.on("error", (error) => resolve(noteFailure(`/json: ${error.message}`)));
      sent.end(body);
    });
  return call;
}

/**
 * ShouldRateLimit as a gRPC client sends it (one HTTP/2 connection, a stream per call, the length-prefixed message,
 * grpc-status in the trailers), over node:http2 directly: as lean as the HTTP/1.1 client of /json, so the
 * figures compare the two server sides rather than two client libraries. Resolves true on grpc-status 0.
 */
function grpcCaller(target) {
  const { RateLimitService } = loadProto("envoy/service/ratelimit/v3/rls.proto").envoy.service.ratelimit.v3;
  const method = RateLimitService.service.ShouldRateLimit;
  const frames = Array.from({ length: KEYS }, (_, i) => {
    const message = method.requestSerialize(request(i));
    const frame = Buffer.alloc(5 + message.length);
    frame.writeUInt32BE(message.length, 1);
    message.copy(frame, 5);
    return frame;
  });
  let session;
  const connected = () => {
    if (!session || session.closed || session.destroyed) {
      session = http2.connect(`http://${target}`);
      session.on("error", (error) => noteFailure(`gRPC connection: ${error.message}`));
    }
    return session;
  };
  return (i) =>
    new Promise((resolve) => {
      let status;
      const stream = connected().request({
        ":method": "POST",
        ":path": method.path,
        "content-type": "application/grpc",
        te: "trailers",
        "grpc-timeout": "10S",
      });
      stream.on("response", (headers) => (status = headers["grpc-status"] ?? status));
      stream.on("trailers", (trailers) => (status = trailers["grpc-status"]));
      stream.on("data", () => {});
      stream.on("end", () => resolve(status === "0" || noteFailure(`gRPC status ${status}`)));
      stream.on("error", (error) => resolve(noteFailure(`gRPC stream: ${error.message}`)));
      stream.end(frames[i % KEYS]);
    });
}

/** Runs CONCURRENCY callers back to back for `durationMs`; answers the latencies of the successful calls. */
async function closedLoop(call, durationMs) {
  const latencies = [];
  let failures = 0;
  const started = performance.now();
  const end = started + durationMs;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async (_, worker) => {
      for (let i = worker; performance.now() < end; i += CONCURRENCY) {
        const t = performance.now();
        if (await call(i)) latencies.push(performance.now() - t);
        else failures++;
      }
    }),
  );
  return { seconds: (performance.now() - started) / 1000, latencies, failures };
}

function summary(runs) {
  const latencies = runs.flatMap((run) => run.latencies).sort((a, b) => a - b);
  const at = (p) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))];
  const seconds = runs.reduce((sum, run) => sum + run.seconds, 0);
  const failures = runs.reduce((sum, run) => sum + run.failures, 0);
  return { rate: latencies.length / seconds, p50: at(0.5), p99: at(0.99), calls: latencies.length, failures };
}

/** The counter objects' statistics once settled (the objects flush theirs within a second of a call). */
const settledStats = (url) => settledCounterStats(url, 1500, TOKEN);

async function main() {
  console.log("bench:grpc: starting wrangler dev and the gRPC gateway ...");
  const { url } = await startWranglerDev(
    { RATELIMIT_ADMIN_TOKEN: TOKEN, D1_USAGE_HEADER: "true" },
    { name: "grpc", inheritStderr: true },
  );
  const put = await fetch(`${url}/rlconfig/files`, {
    method: "PUT",
    headers: { Authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ files: { "bench.yaml": CONFIG } }),
  });
  if (put.status !== 200) throw new Error(`config refused: ${put.status} ${await put.text()}`);
  const target = await startGateway(url);
  const paths = { json: jsonCaller(url), grpc: grpcCaller(target) };

  // Warm every key's Durable Object, the isolate and both paths' connections.
  for (const call of Object.values(paths)) {
    const warm = await closedLoop(call, 3000);
    if (warm.failures > 0.005 * warm.latencies.length) {
      throw new Error(`${warm.failures} failed calls while warming up: ${[...failureReasons.keys()].join("; ")}`);
    }
  }
  const before = await settledStats(url);
  paths.json.d1 = new D1Tally();
  const runs = { json: [], grpc: [] };
  for (let round = 0; round < ROUNDS; round++) {
    for (const name of ["json", "grpc"]) runs[name].push(await closedLoop(paths[name], SLICE_MS));
  }
  const after = await settledStats(url);
  report(summary(runs.json), summary(runs.grpc), { before, after, d1: paths.json.d1 });
}

/** The figures of both paths; throws when more than 0.5 % of the calls failed. */
function report(json, grpcResult, { before, after, d1 }) {
  const ratio = grpcResult.rate / json.rate;
  const columns = (label, cells) => `${label.padEnd(46)} ${cells.map((cell) => String(cell).padStart(8)).join(" ")}`;
  const row = (label, s) => columns(label, [s.rate.toFixed(0), s.p50.toFixed(1), s.p99.toFixed(1), s.failures]);
  console.log("");
  const slices = `${ROUNDS} x ${SLICE_MS / 1000} s per path, alternating`;
  console.log(`bench:grpc (${CONCURRENCY} calls in flight, ${KEYS} keys, ${slices})`);
  console.log(columns("path", ["calls/s", "p50 ms", "p99 ms", "failed"]));
  console.log(row("POST /json (floor)", json));
  console.log(row("gRPC ShouldRateLimit via the gateway", grpcResult));
  console.log(
    `ratio gRPC / JSON: ${ratio.toFixed(2)} (target ${TARGET} or more: ${ratio >= TARGET ? "met" : "NOT met"})`,
  );
  const decisions = json.calls + grpcResult.calls;
  const objects = perThousand(before, after, decisions, ["calls", "rows_written", "commits"]);
  console.log(
    objects
      ? `counter objects per 1,000 decisions (both paths, /stats): calls ${objects.calls.toFixed(1)}, ` +
          `rows written ${objects.rows_written.toFixed(1)}, commits ${objects.commits.toFixed(1)}`
      : "counter objects per 1,000 decisions: n/a (no ratelimit.durable_object statistics on /stats)",
  );
  console.log(d1Header(46));
  console.log(d1Line("POST /json (floor)", d1, 46));
  console.log(D1_FOOTNOTE);
  // A rebuild of the shared tree restarts wrangler dev's Worker and fails the calls in flight (503); more than that
  // is a fault.
  const failures = json.failures + grpcResult.failures;
  if (failures > 0)
    console.log(`failed calls: ${[...failureReasons].map(([reason, n]) => `${n} x ${reason}`).join("; ")}`);
  if (failures > 0.005 * (json.calls + grpcResult.calls)) throw new Error("more than 0.5 % of the calls failed");
}

try {
  await main();
  gatewayChild?.kill("SIGTERM");
  await stopAll();
} catch (error) {
  console.error(`bench:grpc failed: ${error instanceof Error ? error.message : error}`);
  gatewayChild?.kill("SIGKILL");
  await stopAll();
  process.exit(1);
}
