// How `npm start` runs its children: in its own process group (not detached, so Ctrl-C and a closed terminal reach
// them all), every process below it known (wrangler's workerd and esbuild included) and stopped when it stops, a
// child or a workerd that dies noticed and said, and a watchdog (./watchdog.mjs) that stops them all if `npm start`
// itself is killed with SIGKILL. Its own parent going away (npm killed) stops it too.
import { spawn } from "node:child_process";
import path from "node:path";
import { descendantsOf, processTable, signalEach, stillRunning, STOP_GRACE_MS } from "./processes.mjs";

/** How often the process tree is read: how soon a dead workerd or a dead parent is noticed. */
const POLL_MS = 1000;
/** Polls a workerd may stay missing: wrangler replaces its workerd on a reload within a moment. */
const MISSING_POLLS = 3;

/**
 * One `npm start`'s children, the processes below them and its watchdog; its methods are what createSupervisor hands
 * out, plus the polling and the surveys behind them.
 */
class Supervisor {
  /** @type {import("node:child_process").ChildProcess[]} */
  children = [];
  /**
   * Every process seen below this one (not the watchdog), by pid: a child's child whose parent died is still here.
   * @type {Map<number, import("./processes.mjs").ProcessInfo>}
   */
  known = new Map();
  stopping = false;
  parent = process.ppid;
  /** @type {{ pids: Set<number>, expected: number, missingFor: number } | undefined} */
  runtimes;

  /** @param {string} cwd @param {(line: string) => void} log */
  constructor(cwd, log) {
    this.cwd = cwd;
    this.log = log;
    this.watchdog = spawn(process.execPath, [path.join(import.meta.dirname, "watchdog.mjs")], {
      cwd,
      stdio: ["pipe", "ignore", "inherit"],
    });
    this.watchdog.stdin.on("error", () => {});
    this.watchdog.on("exit", (code, signal) => this.died("its watchdog", code, signal));
    this.poller = setInterval(() => this.poll(), POLL_MS);
  }

  /** Records the processes below this one, telling the watchdog of each new one. */
  survey() {
    const table = processTable();
    const below = descendantsOf([process.pid], table).filter((entry) => entry.pid !== this.watchdog.pid);
    const watchdogTree = new Set(descendantsOf([this.watchdog.pid ?? -1], table).map((entry) => entry.pid));
    for (const entry of below) {
      if (watchdogTree.has(entry.pid) || this.known.get(entry.pid)?.start === entry.start) continue;
      this.known.set(entry.pid, entry);
      if (!this.watchdog.stdin.destroyed) this.watchdog.stdin.write(`${entry.pid} ${entry.start}\n`);
    }
    return below;
  }

  /** Notices a workerd gone for good (wrangler dev does not restart one that crashed) and a parent gone. */
  poll() {
    if (this.stopping) return;
    if (process.ppid !== this.parent) {
      this.log(`npm start: its parent process (${this.parent}) exited; stopping`);
      return this.stop(1);
    }
    const below = this.survey();
    const runtimes = this.runtimes;
    if (!runtimes) return;
    const now = new Set(below.filter((entry) => entry.name === "workerd").map((entry) => entry.pid));
    runtimes.expected = Math.max(runtimes.expected, now.size);
    runtimes.missingFor = now.size < runtimes.expected ? runtimes.missingFor + 1 : 0;
    if (runtimes.missingFor >= MISSING_POLLS) {
      const gone = [...runtimes.pids].filter((pid) => !now.has(pid));
      this.log(
        `npm start: workerd (the Worker runtime of wrangler dev, pid ${gone.join(", ")}) exited and was not ` +
          "restarted; stopping the others",
      );
      return this.stop(1);
    }
    if (runtimes.missingFor === 0) runtimes.pids = now;
  }

  /**
   * A child that exits while nothing asked it to: said, then everything stops with a non-zero code.
   * @param {string} name @param {number | null} code @param {NodeJS.Signals | null} signal
   */
  died(name, code, signal) {
    if (this.stopping) return;
    this.log(`npm start: ${name} exited (${signal ?? `code ${code}`}); stopping the others`);
    this.stop(code || 1);
  }

  /**
   * Starts a child in this process group.
   * @param {string} name @param {string} command @param {string[]} args
   * @param {{ env: NodeJS.ProcessEnv, stdout?: "inherit" | "pipe" }} options
   */
  start(name, command, args, { env, stdout = "inherit" }) {
    const child = spawn(command, args, { cwd: this.cwd, env, stdio: ["inherit", stdout, "inherit"] });
    child.on("exit", (code, signal) => this.died(name, code, signal));
    this.children.push(child);
    this.survey();
    return child;
  }

  /**
   * Stops every child and everything below them: SIGTERM to the children, then after STOP_GRACE_MS SIGKILL to whatever
   * of the known processes still runs; then tells the watchdog it may go, and exits with `exitCode`.
   * @param {number} exitCode
   */
  async stop(exitCode) {
    if (this.stopping) return;
    this.stopping = true;
    clearInterval(this.poller);
    this.survey();
    signalEach(
      this.children
        .filter((child) => child.exitCode === null && child.signalCode === null)
        // A child whose spawn failed has no pid and nothing to stop.
        .flatMap((child) => (child.pid === undefined ? [] : [{ pid: child.pid }])),
      "SIGTERM",
    );
    const deadline = Date.now() + STOP_GRACE_MS;
    // Read again while waiting: a child may still start a process (wrangler mid-start) before it exits.
    while (Date.now() < deadline && stillRunning([...this.known.values()]).length > 0) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      this.survey();
    }
    signalEach(stillRunning([...this.known.values()]), "SIGKILL");
    this.watchdog.stdin.end();
    process.exit(exitCode);
  }

  /** From now on a workerd below wrangler dev that disappears for good stops everything (call once it answers). */
  watchRuntimes() {
    const pids = new Set(
      this.survey()
        .filter((entry) => entry.name === "workerd")
        .map((entry) => entry.pid),
    );
    this.runtimes = { pids, expected: pids.size, missingFor: 0 };
  }
}

/**
 * @param {{ cwd: string, log?: (line: string) => void }} options
 */
export function createSupervisor({ cwd, log = (line) => console.error(line) }) {
  const supervisor = new Supervisor(cwd, log);
  // Not the instance itself: callers get these four only, `stopping` read-only, and functions that need no `this`.
  return {
    /** @type {Supervisor["start"]} */
    start: (name, command, args, options) => supervisor.start(name, command, args, options),
    /** @param {number} exitCode */
    stop: (exitCode) => supervisor.stop(exitCode),
    get stopping() {
      return supervisor.stopping;
    },
    watchRuntimes: () => supervisor.watchRuntimes(),
  };
}
