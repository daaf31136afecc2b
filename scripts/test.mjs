#!/usr/bin/env node
// `npm test`: type check, then every suite (the pure core in plain Node, the rest inside the Workers runtime),
// and the integration suite against a real `wrangler dev`, ending with the line "N passed, M failed".
// Each type check counts as one test.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

const root = path.join(import.meta.dirname, "..");
const env = { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false" };
const bin = (name) => path.join(root, "node_modules", ".bin", name);
const run = (command, args) => spawnSync(command, args, { cwd: root, env, stdio: "inherit" }).status;

let passed = 0;
let failed = 0;

run(process.execPath, [path.join(root, "scripts", "bundle-ratelimit-config.mjs")]);

// The Worker's TypeScript, then the Node programs beside it (plain ESM checked through their JSDoc types).
for (const project of [".", "grpc-gateway", "haproxy-agent"]) {
  console.log(`> tsc --noEmit -p ${project}`);
  if (run(bin("tsc"), ["--noEmit", "-p", project]) === 0) passed++;
  else failed++;
}

const reportDir = mkdtempSync(path.join(tmpdir(), "vitest-"));
const extra = process.argv.slice(2);
for (const project of ["core", "workers", "integration"]) {
  const report = path.join(reportDir, `${project}.json`);
  console.log(`> vitest (${project})`);
  run(bin("vitest"), [
    "run",
    "--config",
    `test/vitest.${project}.config.ts`,
    "--reporter=default",
    "--reporter=json",
    `--outputFile.json=${report}`,
    ...extra,
  ]);
  try {
    const results = JSON.parse(readFileSync(report, "utf8"));
    passed += results.numPassedTests;
    failed += results.numFailedTests;
    // A test file that fails to load, or whose beforeAll/afterAll fails (its tests then count as skipped), has no
    // failed test but must still fail the run.
    failed += results.testResults.filter(
      (file) => file.status === "failed" && !file.assertionResults.some((test) => test.status === "failed"),
    ).length;
  } catch {
    console.error(`npm test: vitest (${project}) wrote no report`);
    failed++;
  }
}

console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
