// The load generators of `npm run bench:ratelimit -- --hot`: autocannon (the default) or wrk (BENCH_HOT_TOOL=wrk, with
// BENCH_WRK_THREADS threads, 2 by default: issue 29 states its targets with 2 wrk threads). Both take the same options
// (url, method, body, connections, duration) and give the same result; decisions are the 2xx answers. wrk is a system
// program (`apt-get install wrk` on Debian); autocannon is an npm dependency.
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import autocannon from "autocannon";

/** wrk's threads; at most the connections (wrk refuses fewer connections than threads). */
const THREADS = Number(process.env.BENCH_WRK_THREADS ?? 2);

const UNIT_MS = { us: 0.001, ms: 1, s: 1000, m: 60_000 };

/** A wrk duration such as `812.00us`, `29.31ms` or `1.02s`, in milliseconds. */
export function wrkMs(text) {
  const match = /^([\d.]+)(us|ms|s|m)$/.exec(text);
  if (!match) throw new Error(`wrk: unreadable duration ${text}`);
  return Number(match[1]) * UNIT_MS[match[2]];
}

/** The figures of wrk's `--latency` summary, in the autocannon runner's shape. */
export function parseWrkSummary(output) {
  const number = (pattern) => {
    const match = pattern.exec(output);
    return match ? Number(match[1]) : 0;
  };
  const requests = /(\d+) requests in ([\d.]+\w+),/.exec(output);
  if (!requests) throw new Error(`wrk: no summary in its output:\n${output.slice(0, 500)}`);
  const percentile = (p) => wrkMs(new RegExp(`^\\s+${p}%\\s+(\\S+)$`, "m").exec(output)?.[1] ?? "0ms");
  const non2xx = number(/Non-2xx or 3xx responses: (\d+)/);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(output);
  const errors = socket ? socket.slice(1).reduce((sum, n) => sum + Number(n), 0) : 0;
  const answered = Number(requests[1]);
  return {
    seconds: wrkMs(requests[2]) / 1000,
    decisions: answered - non2xx,
    answered,
    p50: percentile(50),
    p99: percentile(99),
    bad: non2xx + errors,
    codes: (non2xx ? ` non-2xx×${non2xx}` : "") + (errors ? ` socket-errors×${errors}` : ""),
  };
}

/** One wrk run with `--latency`; POST bodies go through a Lua script in a temporary folder. */
export async function wrkRun({ url, method = "GET", body, connections, duration }) {
  const folder = mkdtempSync(path.join(tmpdir(), "bench-wrk-"));
  const script = path.join(folder, "request.lua");
  writeFileSync(
    script,
    `wrk.method = ${JSON.stringify(method)}\n` +
      (body === undefined
        ? ""
        : `wrk.body = ${JSON.stringify(body)}\nwrk.headers["Content-Type"] = "application/json"\n`),
  );
  const threads = Math.max(1, Math.min(THREADS, connections));
  const seconds = String(Math.max(1, Math.round(duration)));
  const args = ["-t", String(threads), "-c", String(connections), "-d", `${seconds}s`, "--latency", "-s", script, url];
  try {
    const output = await new Promise((resolve, reject) =>
      execFile("wrk", args, { maxBuffer: 1 << 20 }, (error, stdout, stderr) =>
        error ? reject(new Error(`wrk ${args.join(" ")}: ${error.message}\n${stderr}`)) : resolve(stdout),
      ),
    );
    return parseWrkSummary(output);
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

/** One autocannon run, in the same shape. */
export function autocannonRun(options) {
  return new Promise((resolve, reject) => {
    autocannon(options, (error, result) => {
      if (error) return reject(error);
      const codes = Object.entries(result.statusCodeStats ?? {})
        .filter(([code]) => !code.startsWith("2"))
        .map(([code, { count }]) => ` ${code}×${count}`)
        .join("");
      resolve({
        seconds: result.duration,
        decisions: result["2xx"],
        answered: result["2xx"] + result.non2xx,
        p50: result.latency.p50,
        p99: result.latency.p99,
        bad: result.non2xx + result.errors + result.timeouts,
        codes,
      });
    });
  });
}

/** The runner BENCH_HOT_TOOL names: autocannon (default) or wrk. */
export function loadRunner(tool = process.env.BENCH_HOT_TOOL ?? "autocannon") {
  if (tool === "autocannon") return autocannonRun;
  if (tool === "wrk") return wrkRun;
  throw new Error(`BENCH_HOT_TOOL must be autocannon or wrk, not ${tool}`);
}
