#!/usr/bin/env node
// `npm run bench:haproxy-regex`: what the costliest regexes the params vetting accepts cost a live HAProxy (the
// installed 2.6, PCRE2 with its JIT) on a request's longest texts. BENCH_CANDIDATES (default 20000) random patterns
// from a small grammar (bench/haproxy-regex-patterns.mjs, BENCH_SEED) go through the API's own vetBackendParams
// (bundled by esbuild) as ACLs on hdr(x) and path; of those accepted, the costliest by workOf that one backend accepts
// together (BENCH_PATTERNS, default 8: a backend's limit of regex runs), and a fixed list of hand-built patterns at the
// bound, are each a backend's 8 ACLs, each ACL used once by a rule that does not end the request, so every regex runs.
// Each pattern's costliest ~14 KB text is first picked on a backend of its own (repeats of characters its classes
// match, of a near-match, with and without its last literals; for hdr(x) also as many short or empty values); then
// BENCH_REQUESTS (default 200) requests a backend cycle through its patterns' texts, each followed by the same one to
// a backend without ACLs (the control). Printed: latency and, robust to the other programs of a shared machine,
// HAProxy's CPU time per request (its threads' schedstat). Exits 1 if a request went unanswered or took over 2 s
// (HAProxy's watchdog kills it about then) or HAProxy exited. One request at a time; HAProxy runs in its own process
// group in a temporary directory, both removed at the end.
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import path from "node:path";
import { build } from "esbuild";
import {
  canConnect,
  freePort,
  root,
  spawnGroup,
  stopAll,
  stopAllOnSignals,
  tempDir,
} from "../test/support/processes.mjs";
import { requireBinary } from "../test/support/system-programs.mjs";
import {
  KNOWN,
  aclParams,
  hurtingCandidates,
  randomPattern,
  seeded,
  textOf,
  valuesText,
} from "./haproxy-regex-patterns.mjs";
import { percentile } from "./samples.mjs";

const PATTERNS = Number(process.env.BENCH_PATTERNS ?? 8);
const CANDIDATES = Number(process.env.BENCH_CANDIDATES ?? 20_000);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 200);
const SEED = Number(process.env.BENCH_SEED ?? 1);
/** The text a request carries: 14 KB, leaving the request line and other headers room in HAProxy's 16 KB buffer. */
const TEXT_BYTES = 14 * 1024;
/** HAProxy's watchdog kills the process when one thread is held about this long. */
const WATCHDOG_MS = 2000;

/** The API's vetting and workOf, bundled for Node. */
async function bundleVetting(dir) {
  const outfile = path.join(dir, "vetting.mjs");
  await build({
    stdin: {
      contents: `
        export { vetBackendParams } from "./src/proxy/haproxy-params/index";
        export { MAX_WORK, workOf } from "./src/proxy/haproxy-params/regex-work";`,
      resolveDir: root,
      loader: "ts",
    },
    bundle: true,
    format: "esm",
    platform: "node",
    outfile,
    logLevel: "error",
  });
  return import(outfile);
}

/**
 * The costliest by workOf of BENCH_CANDIDATES random patterns the vetting accepts on hdr(x) and path: BENCH_PATTERNS
 * that one backend accepts together.
 */
function costliestAccepted({ vetBackendParams, workOf }) {
  const random = seeded(SEED);
  const accepted = new Map();
  for (let i = 0; i < CANDIDATES; i++) {
    const candidate = randomPattern(random);
    if (accepted.has(candidate.pattern)) continue;
    const ok = vetBackendParams(
      `${aclParams([candidate.pattern], "hdr(x)")}\n${aclParams([candidate.pattern], "path")}`,
    ).ok;
    if (!ok) continue;
    accepted.set(candidate.pattern, { ...candidate, work: workOf(candidate.pattern) });
  }
  // One backend holds them all: its patterns' counted repetitions share one budget (MAX_REPEATED_PER_BACKEND).
  const top = [];
  for (const candidate of [...accepted.values()].sort((a, b) => b.work - a.work)) {
    if (top.length === PATTERNS) break;
    const patterns = [...top, candidate].map((entry) => entry.pattern);
    if (vetBackendParams(aclParams(patterns, "hdr(x)")).ok && vetBackendParams(aclParams(patterns, "path")).ok) {
      top.push(candidate);
    }
  }
  return { top, accepted: accepted.size };
}

/** The request for `backend` carrying `text` in header x, or as the path (after its `/`). */
function requestOf(backend, target, text) {
  const pathText = target === "path" ? `/${text}` : "/";
  const header = target === "hdr" ? `X: ${text}\r\n` : "";
  return `GET ${pathText} HTTP/1.1\r\nHost: bench\r\nX-Backend: ${backend}\r\n${header}Connection: close\r\n\r\n`;
}

/** Sends one request on a new connection; its answer's status (0: none) and the milliseconds until HAProxy closed. */
function send(port, request) {
  return new Promise((resolve) => {
    const started = process.hrtime.bigint();
    const socket = connect({ host: "127.0.0.1", port });
    let answer = "";
    let settled = false;
    const done = () => {
      if (settled) return;
      settled = true;
      resolve({ ms: Number(process.hrtime.bigint() - started) / 1e6, status: Number(answer.slice(9, 12)) || 0 });
    };
    socket.setTimeout(3 * WATCHDOG_MS, () => socket.destroy());
    socket.on("connect", () => socket.write(request));
    socket.on("data", (chunk) => (answer += chunk));
    socket.on("error", done);
    socket.on("close", done);
  });
}

/** haproxy.cfg: a frontend choosing the backend by the X-Backend header, the control backend and `backends`. */
function haproxyConfig(port, backends) {
  const lines = [
    "global",
    "    maxconn 100",
    // A regex's result is cached by its text; an attacker would send a new text each time, so every run is measured.
    "    tune.pattern.cache-size 0",
    "defaults",
    "    mode http",
    "    timeout connect 5s",
    "    timeout client 30s",
    "    timeout server 30s",
    "    timeout http-request 10s",
    "frontend bench",
    `    bind 127.0.0.1:${port}`,
    "    use_backend %[req.hdr(x-backend)]",
    "    default_backend control",
    "backend control",
    "    http-request return status 200",
  ];
  for (const { name, lines: params } of backends) {
    lines.push(`backend ${name}`, ...params.map((line) => `    ${line}`), "    http-request return status 200");
  }
  return lines.join("\n") + "\n";
}

/** Starts HAProxy in its own process group on `backends`; `died()` tells whether it has exited since. */
async function startHaproxy(dir, backends) {
  const port = await freePort();
  const configPath = path.join(dir, "haproxy.cfg");
  writeFileSync(configPath, haproxyConfig(port, backends));
  const server = spawnGroup("haproxy", ["-db", "-f", configPath], { cwd: dir });
  for (let waited = 0; !(await canConnect(port)); waited += 50) {
    if (server.child.exitCode !== null || waited > 10_000)
      throw new Error(`haproxy did not start:\n${server.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    port,
    pid: server.pgid,
    output: server.output,
    died: () => server.child.exitCode !== null || server.child.signalCode !== null,
  };
}

/** What the requests found: those that failed (no answer, not 200, or over the watchdog's time), the slowest. */
const seen = { failures: [], slowest: { ms: 0, cpu: 0 } };

/**
 * The CPU time HAProxy's threads have run, in milliseconds (each thread's schedstat, in nanoseconds): unlike the
 * latency, it does not count the time other programs of this shared machine hold the cores. NaN once HAProxy is gone.
 */
function cpuMs(pid) {
  try {
    let ns = 0;
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0]);
    }
    return ns / 1e6;
  } catch {
    return NaN;
  }
}

/** One request's latency and the CPU time HAProxy spent on it, in milliseconds; a failure recorded. */
async function timed(haproxy, backend, target, text) {
  const before = cpuMs(haproxy.pid);
  const { ms, status } = await send(haproxy.port, requestOf(backend, target, text));
  const cpu = cpuMs(haproxy.pid) - before;
  seen.slowest = { ms: Math.max(seen.slowest.ms, ms), cpu: Math.max(seen.slowest.cpu, cpu || 0) };
  if (status === 200 && ms <= WATCHDOG_MS && !Number.isNaN(cpu)) return { ms, cpu };
  seen.failures.push(`${backend} (${target}, ${text.slice(0, 20)}...): status ${status} after ${ms.toFixed(0)} ms`);
  // Nothing more can be measured once HAProxy is gone.
  if (Number.isNaN(cpu) || haproxy.died()) throw new Error(`haproxy exited:\n${haproxy.output().slice(-3000)}`);
  return { ms, cpu };
}

/** Of `candidates`, the text that costs `backend` most CPU time (the least of two runs each). */
async function costliestText(haproxy, backend, target, candidates) {
  let worst;
  for (const candidate of candidates) {
    const runs = [
      await timed(haproxy, backend, target, candidate.text),
      await timed(haproxy, backend, target, candidate.text),
    ];
    const cpu = Math.min(...runs.map((run) => run.cpu));
    if (!worst || cpu > worst.cpu) worst = { ...candidate, cpu };
  }
  return worst;
}

/**
 * The costliest text of one pattern on its own backend for `target`; a header's also as many values of the costliest
 * candidate (or empty values), which each cost a run.
 */
async function worstFor(haproxy, entry, target) {
  const candidates = hurtingCandidates(entry).map((c) => ({ ...c, text: textOf(c, TEXT_BYTES) }));
  const worst = await costliestText(haproxy, entry.backends[target], target, candidates);
  if (target === "path") return worst;
  const split = [0, 1, 16, 128].map((size) => ({
    label: size === 0 ? "empty values" : `${worst.label}, values of ${size}`,
    text: valuesText(worst, size, TEXT_BYTES),
  }));
  const worstSplit = await costliestText(haproxy, entry.backends[target], target, split);
  return worstSplit.cpu > worst.cpu ? worstSplit : worst;
}

/** BENCH_REQUESTS to `backend`, cycling through `texts`, each followed by the same request to the control backend. */
async function measureBackend(haproxy, backend, target, texts) {
  const acl = [];
  const control = [];
  for (let i = 0; i < REQUESTS; i++) {
    const text = texts[i % texts.length];
    acl.push(await timed(haproxy, backend, target, text));
    control.push(await timed(haproxy, "control", target, text));
  }
  return { acl, control };
}

const ms = (value) => value.toFixed(2).padStart(7);
/** Median, p99 and max of the latency, then of HAProxy's CPU time. */
const figures = (runs) =>
  [runs.map((run) => run.ms), runs.map((run) => run.cpu)]
    .map((samples) => `${ms(percentile(samples, 50))}${ms(percentile(samples, 99))}${ms(Math.max(...samples))}`)
    .join(" |");

/** The vetted lines of an ACL of each pattern on `fetch`: the vetting must accept them, as the API would. */
function vettedLines(vetting, patterns, fetch) {
  const result = vetting.vetBackendParams(aclParams(patterns, fetch));
  if (!result.ok) throw new Error(`the vetting refused ${JSON.stringify(patterns)}: ${result.error.reason}`);
  return result.value.lines;
}

const TARGETS = [
  ["hdr", "hdr(x)"],
  ["path", "path"],
];

/** Every backend: one a pattern and target (to find its costliest text), and one of each set's patterns a target. */
function backendsOf(vetting, sets) {
  const backends = [];
  for (const [setName, entries] of Object.entries(sets)) {
    entries.forEach((entry, i) => {
      entry.backends = {};
      for (const [target, fetch] of TARGETS) {
        entry.backends[target] = `${setName}${i}_${target}`;
        backends.push({ name: entry.backends[target], lines: vettedLines(vetting, [entry.pattern], fetch) });
      }
    });
    const patterns = entries.map((entry) => entry.pattern);
    for (const [target, fetch] of TARGETS) {
      backends.push({ name: `${setName}_${target}`, lines: vettedLines(vetting, patterns, fetch) });
    }
  }
  return backends;
}

/** Finds and prints each pattern's costliest text for each target, on the pattern's own backend. */
async function findWorstTexts(haproxy, entries) {
  console.log(`\neach pattern alone, its costliest ${TEXT_BYTES}-byte text (HAProxy's CPU ms, the least of 2 runs):`);
  console.log(`${"pattern".padEnd(36)} ${"workOf".padStart(7)} ${"hdr(x)".padStart(7)} ${"path".padStart(7)}  texts`);
  for (const entry of entries) {
    entry.worst = { hdr: await worstFor(haproxy, entry, "hdr"), path: await worstFor(haproxy, entry, "path") };
    const { hdr, path: onPath } = entry.worst;
    const work = `${(entry.work / 1e6).toFixed(2)}M`;
    const name = JSON.stringify(entry.pattern).padEnd(36);
    console.log(`${name} ${work.padStart(7)} ${ms(hdr.cpu)} ${ms(onPath.cpu)}  hdr ${hdr.label}; path ${onPath.label}`);
  }
}

/** Measures and prints each set's backends of 8 ACLs against the control. */
async function measureSets(haproxy, sets) {
  console.log(
    `\n${REQUESTS} requests a backend of ${PATTERNS} ACLs, each pattern's costliest text in turn, each followed by`,
  );
  console.log(
    "the same request to the control backend (no ACL); ms, median p99 max of the latency | of HAProxy's CPU time:",
  );
  console.log(`${"backend".padEnd(12)} ${"with the ACLs".padStart(44)}   ${"control".padStart(44)}`);
  for (const [setName, entries] of Object.entries(sets)) {
    for (const [target] of TARGETS) {
      const texts = entries.map((entry) => entry.worst[target].text);
      const { acl, control } = await measureBackend(haproxy, `${setName}_${target}`, target, texts);
      console.log(`${`${setName}_${target}`.padEnd(12)} ${figures(acl)}   ${figures(control)}`);
    }
  }
}

async function main() {
  requireBinary("haproxy");
  stopAllOnSignals();
  const { dir } = tempDir("bench-haproxy-regex-");
  const vetting = await bundleVetting(dir);
  const found = costliestAccepted(vetting);
  const known = KNOWN.map((entry) => ({ ...entry, work: vetting.workOf(entry.pattern) }));
  console.log(`${CANDIDATES} random patterns (seed ${SEED}): ${found.accepted} distinct ones accepted by the vetting;`);
  console.log(
    `the ${found.top.length} costliest by workOf and ${known.length} hand-built ones (MAX_WORK ${vetting.MAX_WORK / 1e6}M)`,
  );
  const sets = { top: found.top, known };
  const haproxy = await startHaproxy(dir, backendsOf(vetting, sets));
  try {
    await findWorstTexts(haproxy, [...found.top, ...known]);
    await measureSets(haproxy, sets);
  } catch (error) {
    seen.failures.push(error instanceof Error ? error.message : String(error));
  }
  console.log(
    `\nslowest request: ${seen.slowest.ms.toFixed(1)} ms latency, ${seen.slowest.cpu.toFixed(1)} ms of HAProxy's CPU`,
  );
  if (haproxy.died() && !seen.failures.some((failure) => failure.startsWith("haproxy exited"))) {
    seen.failures.push(`haproxy exited:\n${haproxy.output().slice(-3000)}`);
  }
  await stopAll();
  if (seen.failures.length > 0) {
    console.error(`\nFAILED: ${seen.failures.length} request(s) unanswered or over ${WATCHDOG_MS} ms:`);
    console.error(seen.failures.slice(0, 20).join("\n"));
    process.exit(1);
  }
}

await main();
