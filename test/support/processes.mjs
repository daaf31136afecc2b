// Where the local servers run: the project root, free loopback ports, temporary directories, and process groups.
// @ts-check
// Plain ESM with JSDoc types, so the .mjs benchmarks and scripts share it with the TypeScript tests. Every server runs
// in its own process group and is stopped by group; stopAll() stops whatever is still running and removes every
// temporary directory made here, and the process's exit kills what is left.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { connect, createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { bindError } from "../../scripts/start/ports.mjs";

/** The project root. */
export const root = path.join(import.meta.dirname, "..", "..");

/** @typedef {{ stop(): Promise<void> }} Stoppable */

/** Servers still running, stopped by stopAll() and (by SIGKILL) when the process exits. */
/** @type {Set<Stoppable & { pgid: number }>} */
const running = new Set();
/** @type {Set<string>} */
const tempDirs = new Set();

process.on("exit", () => {
  for (const server of running) killGroup(server.pgid, "SIGKILL");
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});

/** Stops every server still running and removes every temporary directory made here. */
export async function stopAll() {
  await Promise.all([...running].map((server) => server.stop()));
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
  tempDirs.clear();
}

/** For a script (the benchmarks): on SIGINT or SIGTERM, stop everything, then exit. */
export function stopAllOnSignals() {
  process.on("SIGINT", () => stopAll().then(() => process.exit(130)));
  process.on("SIGTERM", () => stopAll().then(() => process.exit(143)));
}

/** The lowest port freePort hands out: above the well-known services a machine may run. */
const PORT_FLOOR = 10_000;
/** Ports this process has handed out: each once, so that two servers of one run never get the same one. */
const handedOut = new Set();

/**
 * Where the kernel picks the ports of a bind to port 0 and of outgoing connections (Linux's ip_local_port_range);
 * undefined where it cannot be read.
 * @returns {{ low: number, high: number } | undefined}
 */
function ephemeralRange() {
  try {
    const [low, high] = readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/).map(Number);
    return Number.isInteger(low) && Number.isInteger(high) ? { low, high } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The range freePort picks from: below the ephemeral range. A port found free there stays free until its server
 * binds it, whatever binds to port 0 meanwhile. wrangler dev's workerd binds about five ports so between the moment
 * a HAProxy suite chooses its ports and the moment haproxy binds them, and a port taken there makes every reload of
 * that suite fail (as proxy-sni.test.ts once failed in CI). Undefined where the ephemeral range is unknown or leaves
 * no room below it.
 * @returns {{ low: number, high: number } | undefined}
 */
export function freePortRange() {
  const ephemeral = ephemeralRange();
  if (!ephemeral || ephemeral.low - PORT_FLOOR < 1000) return undefined;
  return { low: PORT_FLOOR, high: ephemeral.low - 1 };
}

/** How many disjoint parts of freePortRange the processes of one run pick from: vitest's main process and workers. */
const PORT_SLICES = 3;

/**
 * The part of a port range this process picks from. vitest's main process (no VITEST_POOL_ID) and its test workers
 * (VITEST_POOL_ID 1, 2, ...; the suites run at most two at once) each have their own, so that two test files running
 * at once never choose the same port between checking that it is free and binding it.
 * @param {{ low: number, high: number }} range
 * @param {string | undefined} poolId VITEST_POOL_ID
 * @returns {{ low: number, high: number }}
 */
export function portSlice(range, poolId) {
  const id = Number(poolId);
  const slice = poolId !== undefined && Number.isInteger(id) && id > 0 ? 1 + ((id - 1) % (PORT_SLICES - 1)) : 0;
  const size = Math.floor((range.high - range.low + 1) / PORT_SLICES);
  const low = range.low + slice * size;
  return { low, high: low + size - 1 };
}

/**
 * A loopback port free right now, chosen at random below the kernel's ephemeral range (see freePortRange), in this
 * process's part of it (portSlice), and never handed out before by this process; where that range is unknown,
 * whatever port the kernel picks.
 * @returns {Promise<number>}
 */
export async function freePort() {
  const whole = freePortRange();
  if (!whole) return kernelPickedPort();
  const range = portSlice(whole, process.env.VITEST_POOL_ID);
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = range.low + Math.floor(Math.random() * (range.high - range.low + 1));
    if (handedOut.has(port) || (await bindError("127.0.0.1", port)) !== undefined) continue;
    handedOut.add(port);
    return port;
  }
  throw new Error(`no free loopback port found in ${range.low}-${range.high} after 200 tries`);
}

/** @returns {Promise<number>} a loopback port the kernel picked, free right now */
function kernelPickedPort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = /** @type {import("node:net").AddressInfo} */ (server.address());
      server.close(() => resolve(port));
    });
  });
}

/**
 * A temporary directory, removed by the returned function (or by stopAll()).
 * @param {string} prefix
 * @returns {{ dir: string, remove: () => void }}
 */
export function tempDir(prefix) {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  tempDirs.add(dir);
  return {
    dir,
    remove: () => {
      rmSync(dir, { recursive: true, force: true });
      tempDirs.delete(dir);
    },
  };
}

/**
 * @param {number} port
 * @returns {Promise<boolean>} whether a TCP connection to 127.0.0.1:port succeeds
 */
export function canConnect(port) {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

/**
 * @param {number} pgid
 * @param {NodeJS.Signals} signal
 */
function killGroup(pgid, signal) {
  try {
    process.kill(-pgid, signal);
  } catch {}
}

/**
 * Spawns a process in its own group with its output collected, and returns how to stop it (the whole group:
 * SIGTERM, then SIGKILL after `graceMs`; then `cleanup`).
 * @param {string} command
 * @param {string[]} args
 * @param {{ cwd?: string, env?: NodeJS.ProcessEnv, inheritStderr?: boolean, graceMs?: number, cleanup?: () => void }} [options]
 */
export function spawnGroup(command, args, { cwd, env, inheritStderr = false, graceMs = 3000, cleanup } = {}) {
  const child = spawn(command, args, {
    cwd,
    env,
    detached: true,
    stdio: ["ignore", inheritStderr ? "ignore" : "pipe", inheritStderr ? "inherit" : "pipe"],
  });
  let output = "";
  child.stdout?.on("data", (chunk) => (output += chunk));
  child.stderr?.on("data", (chunk) => (output += chunk));
  const pgid = /** @type {number} */ (child.pid);
  const entry = {
    pgid,
    async stop() {
      running.delete(entry);
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once("exit", resolve));
        killGroup(pgid, "SIGTERM");
        await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, graceMs))]);
      }
      // The group may outlive its leader (wrangler's workerd), so it is always killed.
      killGroup(pgid, "SIGKILL");
      cleanup?.();
    },
  };
  running.add(entry);
  return { child, pgid, stop: entry.stop, output: () => output };
}
