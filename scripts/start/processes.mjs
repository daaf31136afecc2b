// The local process table (Linux /proc, else `ps`): whose child each process is, so that `npm start` can stop every
// process it started (wrangler's workerd and esbuild included) and notice a workerd that died, and the soak can read
// the memory of each.
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";

/** @typedef {{ pid: number, ppid: number, pgid: number, name: string, start: string, zombie: boolean }} ProcessInfo */

/** @returns {ProcessInfo | undefined} one /proc/<pid>/stat, undefined when the process is gone */
function procEntry(/** @type {string} */ pid) {
  let stat;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return undefined;
  }
  // pid (comm) state ppid pgrp ...: comm may hold spaces, so the fields after it are read from its closing ")".
  const close = stat.lastIndexOf(")");
  const fields = stat.slice(close + 2).split(" ");
  return {
    pid: Number(pid),
    ppid: Number(fields[1]),
    pgid: Number(fields[2]),
    name: stat.slice(stat.indexOf("(") + 1, close),
    start: fields[19],
    zombie: fields[0] === "Z",
  };
}

/** The same from `ps` (macOS): its lstart is five words. */
function psTable() {
  const text = execFileSync("ps", ["-A", "-o", "pid=,ppid=,pgid=,stat=,lstart=,comm="], { encoding: "utf8" });
  return text
    .split("\n")
    .filter((line) => line.trim())
    .map((line) => {
      const words = line.trim().split(/\s+/);
      const name = words.slice(9).join(" ");
      return {
        pid: Number(words[0]),
        ppid: Number(words[1]),
        pgid: Number(words[2]),
        name: name.slice(name.lastIndexOf("/") + 1),
        start: words.slice(4, 9).join(" "),
        zombie: words[3].startsWith("Z"),
      };
    });
}

/** @returns {ProcessInfo[]} every process of the machine now */
export function processTable() {
  if (!existsSync("/proc/self/stat")) return psTable();
  return readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .map(procEntry)
    .filter((entry) => entry !== undefined);
}

/**
 * The live descendants of `roots` (children, their children, ...), roots excluded.
 * @param {number[]} roots @param {ProcessInfo[]} [table]
 */
export function descendantsOf(roots, table = processTable()) {
  const childrenOf = new Map();
  for (const entry of table) {
    if (!childrenOf.has(entry.ppid)) childrenOf.set(entry.ppid, []);
    childrenOf.get(entry.ppid).push(entry);
  }
  const found = [];
  const queue = [...roots];
  while (queue.length > 0) {
    for (const child of childrenOf.get(queue.shift()) ?? []) {
      if (child.zombie) continue;
      found.push(child);
      queue.push(child.pid);
    }
  }
  return found;
}

/**
 * Those of `known` still running: same pid and same start time (a pid reused meanwhile is another process).
 * @param {ProcessInfo[]} known
 */
export function stillRunning(known) {
  const now = new Map(processTable().map((entry) => [entry.pid, entry]));
  return known.filter((entry) => {
    const current = now.get(entry.pid);
    return current !== undefined && !current.zombie && current.start === entry.start;
  });
}

/** Sends `signal` to each process, ignoring those gone already. @param {{ pid: number }[]} entries */
export function signalEach(entries, /** @type {NodeJS.Signals} */ signal) {
  for (const { pid } of entries) {
    try {
      process.kill(pid, signal);
    } catch {}
  }
}

/** How long `npm start`'s processes get between SIGTERM and SIGKILL, from the supervisor or from its watchdog. */
export const STOP_GRACE_MS = 5000;

/**
 * Stops `roots` and every process below them: a snapshot of the tree first (a child whose parent exits is re-parented,
 * and could no longer be found), SIGTERM to the roots so that each stops its own as it means to, then after `graceMs`
 * SIGKILL to whatever of the snapshot still runs (wrangler's workerd when wrangler did not stop it).
 * @param {number[]} roots @param {number} graceMs
 */
export async function stopTree(roots, graceMs) {
  const table = processTable();
  const rootEntries = table.filter((entry) => roots.includes(entry.pid) && !entry.zombie);
  const tree = [...rootEntries, ...descendantsOf(roots, table)];
  signalEach(rootEntries, "SIGTERM");
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline && stillRunning(tree).length > 0) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  signalEach(stillRunning(tree), "SIGKILL");
}

/** Resident memory of a process in KiB (Linux), undefined when it is gone. @param {number} pid */
export function residentKiB(pid) {
  try {
    const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** The command line of a process (Linux), "" when it is gone. @param {number} pid */
export function commandLine(pid) {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim();
  } catch {
    return "";
  }
}
