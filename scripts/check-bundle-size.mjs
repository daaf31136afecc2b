#!/usr/bin/env node
// `npm run check:bundle`: bundles the Worker as `wrangler deploy` would (--dry-run, so nothing is uploaded), prints
// its gzip size and the inputs that weigh most (esbuild metafile), and fails above the size ceiling. It then builds
// the web console's static assets and fails when their JavaScript and CSS are over 100 KiB gzip (console-size.mjs).
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { spawnSync } from "node:child_process";
import { consoleAssetSizes, reportConsoleSize } from "./console-size.mjs";
import { buildWorkerBundle } from "./worker-bundle.mjs";

// Far below the platform's limits (3 MB gzip on the free plan, 10 MB paid): the budget keeps cold starts (the whole
// script is parsed and its top level run: `npm run bench:startup`) and deploys small, and makes every dependency added
// felt. The target is 256 KiB, which the Worker does not meet (docs/benchmarks.md "Bundle size" says what weighs and
// what it would take). Until it does, the ceiling stops it growing unnoticed: above it the check fails, and raising it
// is a decision recorded here. 420 → 440 KiB with issues 20 and 21 (rate-limit algorithms, the proxy's preview,
// rollback, status, metrics, audit log and ARI, about 20 KiB together); 440 → 372 KiB when zod's unused parts left the
// bundle (wrangler.toml [alias], 425 → 361 KiB); 372 → 384 KiB with issue 27 (361 → 378 KiB: HAProxy 2.6's keyword
// table the params vetting checks samples against, 4.9 KiB; the tenancy rules, guards and zones; the blast radius,
// the write-time check, debouncing and the SNI-filtered crt-list). The keyword table could shrink to the entries the
// tenant policy can name (about 4 KiB), at the price of a generator that reads the policy. 384 → 396 KiB with issue
// 28 (378.3 → 388.3 KiB: the bundled news sample NEWS_DEMO ingests, 2.4 KiB; an example for every request body,
// 2.4 KiB; the one-file /rlconfig routes and their overlay; the unknown-field walk; the metadata parity), and room for
// issue 29's coalescing. 396 → 408 KiB with issues 31 and 32 (394.8 → 406.3 KiB: several windows per descriptor in
// the limiter, the Durable Object table and the Redis script, explain, validate, the IETF headers and store health,
// about 5 KiB; push outcomes, run claims, heartbeats and the sweeps, slave attempts, about 6 KiB). The web console of
// issue 33 adds nothing: its assets are static files, held to their own 100 KiB below. Back to 396 KiB when esbuild's
// keepNames went (wrangler.toml keep_names = false: 406.3 → 382.2 KiB; its __name() wrapper around every named
// function and class was 24 KiB gzip), so that issue 33's "the ceiling stays" holds. 396 → 390 KiB when the settings'
// meanings left the bundle for the docs generator's *-meanings.ts modules (395.8 → 385.2 KiB), so that most of that
// gain stays won. 390 → 394 KiB with the fixes of a review of every service (389.7 → 391.9 KiB): the bound on what a
// tenant's fetches and ACL matches may cost HAProxy a request, the SSH configuration in force filtered by what is still
// granted, one agent token per load balancer, the master's push fenced by its lock, the bounded statistics keys, and
// the news search's word bound. Security fixes, not features; the next feature needs a trim.
const TARGET_BYTES = 256 * 1024;
const LIMIT_BYTES = 394 * 1024;
const TOP_INPUTS = 15;

const outdir = mkdtempSync(path.join(tmpdir(), "worker-bundle-"));
const metafile = path.join(outdir, "meta.json");
/** @param {number} bytes */
const kib = (bytes) => `${(bytes / 1024).toFixed(1)} KiB`;

/** Exit status: 0 within the ceiling, 1 over it or when the build fails. */
function check() {
  const bundle = buildWorkerBundle({ outdir, metafile });
  if (!bundle.ok) {
    console.error(bundle.output);
    return 1;
  }
  const { gzip } = bundle;

  const meta = JSON.parse(readFileSync(metafile, "utf8"));
  const inputs = Object.values(meta.outputs)
    .flatMap((output) => Object.entries(output.inputs ?? {}))
    .map(([input, { bytesInOutput }]) => ({ input, bytes: bytesInOutput }))
    .sort((a, b) => b.bytes - a.bytes);
  const packages = new Map();
  for (const { input, bytes } of inputs) {
    const name = input.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/)?.[1] ?? input.split("/").slice(0, 2).join("/");
    packages.set(name, (packages.get(name) ?? 0) + bytes);
  }

  console.log(`${path.basename(bundle.scriptPath)}: ${kib(bundle.bytes)}, gzip ${kib(gzip)}`);
  console.log(`\nLargest inputs (bytes in the bundle, before gzip):`);
  for (const { input, bytes } of inputs.slice(0, TOP_INPUTS)) console.log(`${kib(bytes).padStart(11)}  ${input}`);
  console.log(`\nBy package or source folder:`);
  const byPackage = [...packages].sort((a, b) => b[1] - a[1]).slice(0, TOP_INPUTS);
  for (const [name, bytes] of byPackage) console.log(`${kib(bytes).padStart(11)}  ${name}`);

  if (gzip > LIMIT_BYTES) {
    console.error(`\nThe Worker is ${kib(gzip)} gzip, over the ${kib(LIMIT_BYTES)} ceiling.`);
    return 1;
  }
  const target =
    gzip > TARGET_BYTES ? `over the ${kib(TARGET_BYTES)} target` : `within the ${kib(TARGET_BYTES)} target`;
  console.log(`\nThe Worker is ${kib(gzip)} gzip: within the ${kib(LIMIT_BYTES)} ceiling, ${target}.`);
  return 0;
}

/** Exit status: 0 when the console's script and styles are within their budget. */
function checkConsole() {
  const build = spawnSync(process.execPath, [path.join(import.meta.dirname, "build-console.mjs")], {
    stdio: "inherit",
  });
  if (build.status !== 0) return 1;
  return reportConsoleSize(consoleAssetSizes()) ? 0 : 1;
}

try {
  process.exitCode = check() || checkConsole();
} finally {
  rmSync(outdir, { recursive: true, force: true });
}
