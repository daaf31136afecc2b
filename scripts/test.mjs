#!/usr/bin/env node
// `npm test`: type check, then every suite (the pure core in plain Node, the rest inside the Workers runtime),
// and the integration suite against a real `wrangler dev`, ending with the line "N passed, M failed".
// Each type check counts as one test. First it makes sure of the system programs the suites start (redis,
// memcached, haproxy, openssl, chromium, promtool, dpkg-deb, wrk): it installs the missing ones with apt-get when it
// may (root, or sudo without a password), else stops at once naming them and the apt-get line; then it fetches the
// pinned pebble (Debian trixie's 2.6.0, test/support/pebble.mjs) into node_modules/.cache once, or stops saying why it
// could not.
// `npm run test:fast` (--fast): the plain Node and Workers unit suites only, without the suites that need a server
// (TEST_NO_SERVERS: test/global-setup.ts starts none and test/vitest.workers.config.ts leaves their files out),
// no type checks and no system program: the inner loop.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { aptInstallLine, missingBinaries, SYSTEM_PACKAGES } from "../test/support/system-programs.mjs";
import { wranglerEnv } from "../test/support/wrangler-dev.mjs";
import { ensurePebble } from "../test/support/pebble.mjs";

const root = path.join(import.meta.dirname, "..");
const fast = process.argv.includes("--fast");
const extra = process.argv.slice(2).filter((arg) => arg !== "--fast");
const env = { ...wranglerEnv(), ...(fast ? { TEST_NO_SERVERS: "1" } : {}) };
/** @param {string} name */
const bin = (name) => path.join(root, "node_modules", ".bin", name);
/**
 * @param {string} command
 * @param {string[]} args
 */
const run = (command, args) => spawnSync(command, args, { cwd: root, env, stdio: "inherit" }).status;
/** @param {number} ms */
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

let passed = 0;
let failed = 0;

function finish() {
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(failed === 0 ? 0 : 1);
}

/** How apt-get runs here without a prompt (as root, or through sudo without a password); undefined if it cannot. */
function aptCommand() {
  if (spawnSync("sh", ["-c", "command -v apt-get"], { stdio: "ignore" }).status !== 0) return undefined;
  const noninteractive = ["env", "DEBIAN_FRONTEND=noninteractive", "apt-get"];
  if (process.getuid?.() === 0) return noninteractive;
  if (spawnSync("sudo", ["-n", "true"], { stdio: "ignore" }).status === 0) return ["sudo", "-n", ...noninteractive];
  return undefined;
}

/**
 * Installs the missing system programs with apt-get (retrying while another install holds apt's lock);
 * returns those still missing.
 * @param {string[]} missing
 */
async function installWithApt(missing) {
  const command = /** @type {string[]} */ (aptCommand());
  const packages = [...new Set(missing.map((name) => SYSTEM_PACKAGES[name]))];
  console.log(`npm test: installing ${packages.join(" ")} with apt-get (missing: ${missing.join(", ")})`);
  /** @param {string[]} args */
  const apt = (args) =>
    spawnSync(command[0], [...command.slice(1), "-o", "DPkg::Lock::Timeout=60", ...args], {
      encoding: "utf8",
      maxBuffer: 64 * 1024 * 1024,
    });
  const attempts = 10;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    const update = apt(["update"]);
    const install = update.status === 0 ? apt(["install", "-y", ...packages]) : update;
    if (install.status === 0) break;
    const output = `${install.stdout ?? ""}${install.stderr ?? ""}`.trim();
    if (attempt === attempts) {
      console.error(output);
      break;
    }
    console.error(`npm test: apt-get failed (attempt ${attempt} of ${attempts}): ${output.split("\n").at(-1)}`);
    console.error("npm test: retrying in 15 s (another install may hold apt's lock)");
    await sleep(15_000);
  }
  return missingBinaries(missing);
}

/** Makes sure every system program the suites run is installed; on failure says which and how, and stops. */
async function ensureSystemPrograms() {
  const missing = missingBinaries(Object.keys(SYSTEM_PACKAGES));
  if (missing.length === 0) return;
  const aptRuns = aptCommand() !== undefined;
  const stillMissing = aptRuns ? await installWithApt(missing) : missing;
  if (stillMissing.length === 0) return;
  const list = stillMissing.map((name) => `${name} (package ${SYSTEM_PACKAGES[name]})`).join(", ");
  console.error(
    aptRuns
      ? `npm test: after apt-get, these system programs the suites run are still not found on PATH: ${list}.\n` +
          `PATH is ${process.env.PATH}`
      : `npm test: missing system programs the suites run: ${list}.\n` +
          `Install them (Debian/Ubuntu) with:\n  ${aptInstallLine(stillMissing, "sudo ")}\n` +
          "or run npm test as root (or with passwordless sudo), which installs them itself.\n" +
          "npm run test:fast needs none of them.",
  );
  failed++;
  finish();
}

/** Fetches and unpacks the pinned pebble (apt's lacks ACME Renewal Information) unless cached; else says why, stops. */
async function ensurePinnedPebble() {
  try {
    await ensurePebble();
  } catch (error) {
    console.error(`npm test: ${error instanceof Error ? error.message : error}`);
    failed++;
    finish();
  }
}

// Refused rules leave the last bundle in place: the suites would pass against rules `npm run deploy` refuses.
if (run(process.execPath, [path.join(root, "scripts", "bundle-ratelimit-config.mjs")]) !== 0) {
  console.error("npm test: the rate limit configuration under config/ratelimit/ is refused (above); nothing was run.");
  failed++;
  finish();
}
// First, so that a machine without them stops in seconds rather than after the type checks.
if (!fast) {
  await ensureSystemPrograms();
  await ensurePinnedPebble();
}

// The Worker's TypeScript, then the Node programs beside it (plain ESM checked through their JSDoc types).
if (!fast) {
  for (const project of [".", "grpc-gateway", "haproxy-agent", "scripts"]) {
    console.log(`> tsc --noEmit -p ${project}`);
    if (run(bin("tsc"), ["--noEmit", "-p", project]) === 0) passed++;
    else failed++;
  }
}

const reportDir = mkdtempSync(path.join(tmpdir(), "vitest-"));
for (const project of fast ? ["core", "workers"] : ["core", "workers", "integration"]) {
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
    /**
     * The part of vitest's JSON report read here.
     * @type {{ numPassedTests: number, numFailedTests: number,
     *   testResults: { status: string, assertionResults: { status: string }[] }[] }}
     */
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

finish();
