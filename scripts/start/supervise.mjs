// How `npm start` runs its children: in its own process group (not detached, so Ctrl-C and a closed terminal reach
// them all), every process below it known (wrangler's workerd and esbuild included) and stopped when it stops, a
// child or a workerd that dies noticed and said, and a watchdog (./watchdog.mjs) that stops them all if `npm start`
// itself is killed with SIGKILL. Its own parent going away (npm killed) stops it too.
import { spawn } from "node:child_process";
import path from "node:path";
import { descendantsOf, processTable, signalEach, stillRunning } from "./processes.mjs";

/** How long children get between SIGTERM and SIGKILL. */
const GRACE_MS = 5000;
/** How often the process tree is read: how soon a dead workerd or a dead parent is noticed. */
const POLL_MS = 1000;
/** Polls a workerd may stay missing: wrangler replaces its workerd on a reload within a moment. */
const MISSING_POLLS = 3;

/**
 * @param {{ cwd: string, log?: (line: string) => void }} options
 */
export function createSupervisor({ cwd, log = (line) => console.error(line) }) {
  /** @type {import("node:child_process").ChildProcess[]} */
  const children = [];
  /** Every process seen below this one (not the watchdog), by pid: a child's child whose parent died is still here. */
  const known = new Map();
  let stopping = false;
  const parent = process.ppid;
  /** @type {{ pids: Set<number>, expected: number, missingFor: number } | undefined} */
  let runtimes;

  const watchdog = spawn(process.execPath, [path.join(import.meta.dirname, "watchdog.mjs")], {
    cwd,
    stdio: ["pipe", "ignore", "inherit"],
  });
  watchdog.stdin.on("error", () => {});
  watchdog.on("exit", (code, signal) => died("its watchdog", code, signal));

  /** Records the processes below this one, telling the watchdog of each new one. */
  function survey() {
    const table = processTable();
    const below = descendantsOf([process.pid], table).filter((entry) => entry.pid !== watchdog.pid);
    const watchdogTree = new Set(descendantsOf([watchdog.pid ?? -1], table).map((entry) => entry.pid));
    for (const entry of below) {
      if (watchdogTree.has(entry.pid) || known.get(entry.pid)?.start === entry.start) continue;
      known.set(entry.pid, entry);
      if (!watchdog.stdin.destroyed) watchdog.stdin.write(`${entry.pid} ${entry.start}\n`);
    }
    return below;
  }

  /** Notices a workerd gone for good (wrangler dev does not restart one that crashed) and a parent gone. */
  function poll() {
    if (stopping) return;
    if (process.ppid !== parent) {
      log(`npm start: its parent process (${parent}) exited; stopping`);
      return stop(1);
    }
    const below = survey();
    if (!runtimes) return;
    const now = new Set(below.filter((entry) => entry.name === "workerd").map((entry) => entry.pid));
    runtimes.expected = Math.max(runtimes.expected, now.size);
    runtimes.missingFor = now.size < runtimes.expected ? runtimes.missingFor + 1 : 0;
    if (runtimes.missingFor >= MISSING_POLLS) {
      const gone = [...runtimes.pids].filter((pid) => !now.has(pid));
      log(
        `npm start: workerd (the Worker runtime of wrangler dev, pid ${gone.join(", ")}) exited and was not ` +
          "restarted; stopping the others",
      );
      return stop(1);
    }
    if (runtimes.missingFor === 0) runtimes.pids = now;
  }
  const poller = setInterval(poll, POLL_MS);

  /** A child that exits while nothing asked it to: said, then everything stops with a non-zero code. */
  function died(name, code, signal) {
    if (stopping) return;
    log(`npm start: ${name} exited (${signal ?? `code ${code}`}); stopping the others`);
    stop(code || 1);
  }

  /**
   * Starts a child in this process group.
   * @param {string} name @param {string} command @param {string[]} args
   * @param {{ env: NodeJS.ProcessEnv, stdout?: "inherit" | "pipe" }} options
   */
  function start(name, command, args, { env, stdout = "inherit" }) {
    const child = spawn(command, args, { cwd, env, stdio: ["inherit", stdout, "inherit"] });
    child.on("exit", (code, signal) => died(name, code, signal));
    children.push(child);
    survey();
    return child;
  }

  /**
   * Stops every child and everything below them: SIGTERM to the children, then after GRACE_MS SIGKILL to whatever
   * of the known processes still runs; then tells the watchdog it may go, and exits with `exitCode`.
   * @param {number} exitCode
   */
  async function stop(exitCode) {
    if (stopping) return;
    stopping = true;
    clearInterval(poller);
    survey();
    signalEach(
      children
        .filter((child) => child.exitCode === null && child.signalCode === null)
        .map((child) => ({ pid: child.pid })),
      "SIGTERM",
    );
    const deadline = Date.now() + GRACE_MS;
    // Read again while waiting: a child may still start a process (wrangler mid-start) before it exits.
    while (Date.now() < deadline && stillRunning([...known.values()]).length > 0) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      survey();
    }
    signalEach(stillRunning([...known.values()]), "SIGKILL");
    watchdog.stdin.end();
    process.exit(exitCode);
  }

  return {
    start,
    stop,
    get stopping() {
      return stopping;
    },
    /** From now on a workerd below wrangler dev that disappears for good stops everything (call once it answers). */
    watchRuntimes() {
      const pids = new Set(
        survey()
          .filter((entry) => entry.name === "workerd")
          .map((entry) => entry.pid),
      );
      runtimes = { pids, expected: pids.size, missingFor: 0 };
    },
  };
}
