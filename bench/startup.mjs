#!/usr/bin/env node
// `npm run bench:startup`: what the Worker's size costs a cold start. The Worker is built as `wrangler deploy` would
// upload it (--dry-run), then each round starts a fresh workerd (Miniflare) per script, so nothing is warm: the time
// until the runtime is ready (its start, then the script's compilation and top-level evaluation) and the first request
// after it (GET /). The floor is a Worker of one line answering "ok", started the same way in the same rounds; the
// figures that matter are the ratios to it, since the floor itself moves between runs on these shared machines.
// BENCH_ROUNDS (default 15) rounds, the scripts' order rotating each round; medians are printed.
// BENCH_BASELINE_REF=<git ref>: that commit's Worker too (a git worktree, bench/worktree.mjs), as "before".
// No storage is touched: the writes per 1000 operations are 0 by construction, and not measured.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Miniflare } from "miniflare";
import { unstable_readConfig } from "wrangler";
import { buildWorkerBundle } from "../scripts/worker-bundle.mjs";
import { root } from "../test/support/processes.mjs";
import { baselineWorktree } from "./worktree.mjs";
import { median } from "./samples.mjs";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 15);
const BASELINE_REF = process.env.BENCH_BASELINE_REF;
const { compatibility_date: compatibilityDate, compatibility_flags: compatibilityFlags } = unstable_readConfig({
  config: path.join(root, "wrangler.toml"),
});

const scratch = mkdtempSync(path.join(tmpdir(), "bench-startup-"));
process.on("exit", () => rmSync(scratch, { recursive: true, force: true }));

/** @param {string} name @param {string} [cwd] */
function build(name, cwd) {
  const bundle = buildWorkerBundle({ cwd, outdir: path.join(scratch, name) });
  if (!bundle.ok) throw new Error(`${name}: ${bundle.output}`);
  return { name, ...bundle, contents: readFileSync(bundle.scriptPath, "utf8") };
}

/** One cold start of a script (read once, before the rounds): a new workerd, ready, one request, stopped. Milliseconds. */
async function coldStart({ scriptPath, contents }) {
  const started = performance.now();
  const runtime = new Miniflare({
    // Given as contents so that Miniflare does not scan the module for imports (Node-side work, not the runtime's).
    modules: [{ type: "ESModule", path: scriptPath, contents }],
    modulesRoot: path.dirname(scriptPath),
    compatibilityDate,
    compatibilityFlags,
  });
  try {
    await runtime.ready;
    const ready = performance.now();
    const response = await runtime.dispatchFetch("http://localhost/");
    await response.arrayBuffer();
    if (!response.ok) throw new Error(`GET / answered ${response.status}`);
    return { ready: ready - started, firstRequest: performance.now() - ready };
  } finally {
    await runtime.dispose();
  }
}

async function main() {
  const floorDir = path.join(scratch, "floor");
  mkdirSync(floorDir);
  const floorPath = path.join(floorDir, "index.js");
  const floorCode = `export default { fetch() { return new Response("ok"); } };\n`;
  writeFileSync(floorPath, floorCode);
  const scripts = [{ name: "floor", scriptPath: floorPath, contents: floorCode }, build("now")];
  if (BASELINE_REF) {
    const worktree = baselineWorktree(BASELINE_REF);
    try {
      scripts.push(build(`before (${BASELINE_REF})`, worktree.dir));
    } finally {
      worktree.remove();
    }
  }

  const samples = new Map(scripts.map((s) => [s.name, { ready: [], firstRequest: [] }]));
  for (let round = 0; round < ROUNDS; round++) {
    for (let i = 0; i < scripts.length; i++) {
      const script = scripts[(round + i) % scripts.length];
      const sample = await coldStart(script);
      samples.get(script.name).ready.push(sample.ready);
      samples.get(script.name).firstRequest.push(sample.firstRequest);
    }
  }

  const floor = samples.get("floor");
  const floorReady = median(floor.ready);
  const floorFirst = median(floor.firstRequest);
  console.log(`cold starts, ${ROUNDS} rounds, medians (ms) and ratio to the floor`);
  console.log(
    `${"script".padEnd(26)} ${"gzip KiB".padStart(9)} ${"ready".padStart(8)} ${"ratio".padStart(6)} ${"1st GET".padStart(8)} ${"ratio".padStart(6)}`,
  );
  for (const script of scripts) {
    const { ready, firstRequest } = samples.get(script.name);
    const gzip = script.gzip === undefined ? "" : (script.gzip / 1024).toFixed(1);
    console.log(
      `${script.name.padEnd(26)} ${gzip.padStart(9)} ${median(ready).toFixed(0).padStart(8)} ${(median(ready) / floorReady).toFixed(2).padStart(6)} ` +
        `${median(firstRequest).toFixed(1).padStart(8)} ${(median(firstRequest) / floorFirst).toFixed(2).padStart(6)}`,
    );
  }
}

await main();
