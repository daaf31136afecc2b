// The agent's work on a load balancer: write a bundle beside the live configuration, check it with `haproxy -c`,
// swap it in and reload; put the previous files back when the swap or the reload fails. One bundle at a time. Also:
// check a bundle without applying it, and tell what is on disk (its digest recomputed, so that hand edits show).
import { randomBytes } from "node:crypto";
import { mkdir, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { alertLines } from "./alerts.mjs";
import { agentStopping, endState, reloadTimedOut, restored, stagedUnflushed, swapFailed } from "./apply-errors.mjs";
import { ApplyError } from "./bundle.mjs";
import { putBack, SWAP_JOURNAL, SwapError, swapIn } from "./config-files.mjs";
import { createLiveDigest } from "./live-digest.mjs";
import { childEnvironment, run, tail } from "./programs.mjs";
import { createPushLog, settleReloading } from "./pushes.mjs";
import { recoverSwap, removeScratch, settlePushes } from "./restart.mjs";
import { createStateRecord } from "./state.mjs";
import { syncPath, syncStaged } from "./sync-to-disk.mjs";

export { ApplyError, bundleDigest, parseBundle, parseCheck } from "./bundle.mjs";
export { childEnvironment } from "./programs.mjs";

/**
 * @typedef {import("./bundle.mjs").Bundle} Bundle
 * @typedef {import("./bundle.mjs").AgentState} AgentState
 */

/**
 * @typedef {object} ApplierOptions
 * @property {string} configDir
 * @property {string} reloadCmd
 * @property {string} haproxy
 * @property {number} timeoutMs
 * @property {(level: string, message: string, fields?: object) => void} log
 * @property {typeof import("node:fs/promises").rename} [rename] how the swap moves an entry (a test makes one fail)
 * @property {(target: string) => Promise<void>} [sync] how a staged file or a directory is flushed (a test watches it)
 * @property {(bundle: Bundle) => unknown} [beforeUnchanged] called as an unchanged push is about to commit (a test
 *   abandons it there)
 * @typedef {{ signal?: AbortSignal, receivedAt: number }} PushContext
 */

/**
 * What createApplier hands out works on this: the agent's settings, its push log and state record, and the queue
 * that applies one bundle at a time.
 */
class Applier {
  /** @param {ApplierOptions} options */
  constructor({ configDir, reloadCmd, haproxy, timeoutMs, log, rename, sync = syncPath, beforeUnchanged }) {
    this.configDir = configDir;
    this.move = rename;
    this.sync = sync;
    this.beforeUnchanged = beforeUnchanged;
    /** The status's digest of the files on disk, which reads again only the files that changed since. */
    this.liveDigest = createLiveDigest();
    /** The operator's reload command, run by a push and by a start that finds a push's files swapped in. */
    this.reload = () => run("/bin/sh", ["-c", reloadCmd], timeoutMs, this.env);
    this.haproxy = haproxy;
    this.timeoutMs = timeoutMs;
    this.log = log;
    this.env = childEnvironment(process.env);
    this.pushes = createPushLog({ configDir, log });
    this.record = createStateRecord({ configDir, log });
    /** @type {Promise<unknown>} */
    this.queue = Promise.resolve();
    /** Settles when the last commit has ended; status and outcome queries wait for it. */
    this.committing = Promise.resolve();
    /** @type {Map<string, Promise<{ outcome: string, version: number }>>} the pushes under way, by id */
    this.running = new Map();
    /** Aborted when the agent stops (SIGTERM): pushes not yet reloading stop, their check killed. */
    this.stopping = new AbortController();
  }

  /** Before the agent listens: what a previous run left in progress is settled, its scratch directories removed. */
  async start() {
    await this.pushes.load();
    const removed = await removeScratch(this.configDir);
    if (removed.length) this.log("info", "haproxy-agent: scratch directories of the previous run removed", { removed });
    const { configDir, pushes, record, log, reload, liveDigest: digestOf } = this;
    const recovered = await recoverSwap(configDir, log, digestOf);
    await settlePushes({ configDir, pushes, record, log, recovered, reload, digestOf });
  }

  /**
   * Takes no more pushes: each one not yet reloading stops (410), and the one whose reload has started ends, within
   * the reload's own time limit. Settles when the last has ended and its outcome is recorded.
   */
  stop() {
    this.stopping.abort();
    return this.queue;
  }

  /**
   * Records a success as one step: the state GET /v1/status reads, no last error, and the push's outcome. It never
   * fails: a disk that refuses the state leaves the version in force and reported (see state.mjs). Queries wait for a
   * commit under way, so that none sees the new version while the push still says reloading (the control plane would
   * then settle it as unknown) or the push applied while the status still shows the old version.
   * @param {Bundle} bundle @param {AgentState} next @param {"applied" | "unchanged"} outcome
   */
  commit(bundle, next, outcome) {
    const done = (async () => {
      await this.record.recordSuccess(next);
      if (bundle.pushId) await this.pushes.record(bundle.pushId, bundle.version, outcome);
      await settleReloading(this.pushes, bundle.digest, bundle.version);
    })();
    this.committing = done.catch(() => undefined);
    return done;
  }

  /**
   * What GET /v1/status answers: the version last applied and its digest as recorded then, the digest of the files
   * on disk now (they differ when someone edited them by hand), and the last failed apply since the last success.
   */
  async status() {
    await this.committing;
    const [state, error, diskDigest] = await Promise.all([
      this.record.readState(),
      this.record.readFailure(),
      this.liveDigest(this.configDir),
    ]);
    return {
      version: state?.version ?? null,
      digest: state?.digest ?? null,
      appliedAt: state?.appliedAt ?? null,
      diskDigest,
      lastError: error,
    };
  }

  /**
   * Writes the bundle's files into `dir` (created; the caller removes it) and runs `haproxy -c` on them: valid, or
   * the check's output (its tail), its ALERT lines and the error that quotes it; or timedOut, no verdict at all.
   * @param {string} dir @param {Record<string, string>} files @param {AbortSignal} [signal]
   * @returns {Promise<
   *   | { valid: true, timedOut?: undefined }
   *   | { valid: false, timedOut: true }
   *   | { valid: false, timedOut?: undefined, output: string, error: string, alerts: string[] }
   * >}
   */
  async stageAndCheck(dir, files, signal) {
    await mkdir(path.join(dir, "certs"), { recursive: true, mode: 0o700 });
    for (const [name, content] of Object.entries(files)) {
      await writeFile(path.join(dir, name), content, { mode: name.endsWith(".pem") ? 0o600 : 0o644 });
    }
    const configFile = path.join(dir, "haproxy.cfg");
    const result = await run(this.haproxy, ["-c", "-f", configFile], this.timeoutMs, this.env, signal);
    if (result.code === 0) return { valid: true };
    if (result.timedOut) return { valid: false, timedOut: true };
    const output = tail(result.output);
    const alerts = alertLines(result.output, files["haproxy.cfg"]);
    return { valid: false, output, error: `haproxy -c failed (exit ${result.code}): ${output}`, alerts };
  }

  /**
   * A `haproxy -c` that did not end within --timeout (killed, with what it started) gave no verdict: the bundle is not
   * refused (422), the agent could not check it (504, `checkTimedOut`), as when it could not be reached.
   * @param {number} [version] the push's, which was not applied
   */
  checkTimedOut(version) {
    const what = `haproxy -c did not finish within ${this.timeoutMs} ms`;
    this.log("error", "haproxy-agent: haproxy -c did not finish in time, killed", {
      version,
      timeoutMs: this.timeoutMs,
    });
    const message = version === undefined ? what : `version ${version} was not applied: ${what}`;
    return new ApplyError(504, message, { checkTimedOut: true });
  }

  /**
   * `haproxy -c` on a bundle in a scratch directory, nothing applied: valid, or the check's output and ALERT lines.
   * @param {Record<string, string>} files
   * @returns {Promise<
   *   | { valid: true, version: number | null }
   *   | { valid: false, error: string, alerts: string[], version: number | null }
   * >}
   */
  async check(files) {
    const scratch = path.join(this.configDir, `.check-${randomBytes(4).toString("hex")}`);
    try {
      // The version it runs comes along: after a D1 reset the control plane numbers its next version past it.
      // Stopped with the agent (SIGTERM), which then exits without waiting out a check nobody will act on.
      const checking = this.stageAndCheck(scratch, files, this.stopping.signal);
      const [result, state] = await Promise.all([checking, this.record.readState()]);
      if (this.stopping.signal.aborted) throw agentStopping();
      const version = state?.version ?? null;
      if (result.timedOut) throw this.checkTimedOut();
      return result.valid
        ? { valid: true, version }
        : { valid: false, error: result.error, alerts: result.alerts, version };
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  }

  /**
   * Why a push must stop before its reload (undefined: it may go on): the client went away, the control plane gave
   * it up (POST /v1/pushes/{id}/abandon), or a reload started now could not end before the control plane stops
   * waiting (`reload`: one is to start). After the reload has started nothing stops it.
   * @param {Bundle} bundle @param {PushContext} context @param {boolean} [reload]
   */
  stopReason(bundle, context, reload = true) {
    if (this.stopping.signal.aborted) return "the agent stopped before the reload";
    if (context.signal?.aborted) return "the control plane went away before the reload";
    if (bundle.pushId && this.pushes.get(bundle.pushId)?.state === "abandoned")
      return "the control plane gave it up before the reload";
    // A control plane that waits no longer than one reload (misaligned time limits) gets no deadline: every push
    // would stop. The client that goes away, and the abandon, still hold; apply() warns.
    if (
      reload &&
      bundle.timeoutMs &&
      bundle.timeoutMs > this.timeoutMs &&
      Date.now() > context.receivedAt + bundle.timeoutMs - this.timeoutMs
    )
      return `a reload started now could not end within the control plane's ${bundle.timeoutMs} ms`;
    return undefined;
  }

  /**
   * Throws the 410 of a push stopped before its reload, when it must stop.
   * @param {Bundle} bundle @param {PushContext} context @param {boolean} [reload] whether a reload is to start
   */
  stopIfAsked(bundle, context, reload = true) {
    const reason = this.stopReason(bundle, context, reload);
    if (reason) throw new ApplyError(410, `version ${bundle.version} was not applied: ${reason}`, { abandoned: true });
  }

  /** @param {Bundle} bundle @param {PushContext} context */
  async applyNow(bundle, context) {
    this.stopIfAsked(bundle, context);
    const state = await this.record.readState();
    if (bundle.onlyIfNewer && state && bundle.version < state.version) {
      throw new ApplyError(409, `this load balancer runs version ${state.version}, newer than ${bundle.version}`, {
        version: state.version,
      });
    }
    // Compared with what is on disk, so that a push repairs files edited by hand, and with what was recorded: files
    // whose reload did not end in time are on disk but were never recorded, and are reloaded again.
    if (state?.digest === bundle.digest && (await this.liveDigest(this.configDir)) === bundle.digest) {
      await this.beforeUnchanged?.(bundle);
      // An abandon that came while the files were read wins: checked and committed with no await between, so that
      // one coming later finds the commit under way and waits for it (agent.mjs); no reload starts, no deadline.
      this.stopIfAsked(bundle, context, false);
      await this.commit(
        bundle,
        { ...state, digest: bundle.digest, version: Math.max(state.version, bundle.version) },
        "unchanged",
      );
      this.log("info", "haproxy-agent: bundle unchanged, no reload", { version: bundle.version });
      return { outcome: "unchanged", version: bundle.version };
    }

    const staging = path.join(this.configDir, `.staging-${bundle.version}-${randomBytes(4).toString("hex")}`);
    try {
      const stop = context.signal ? AbortSignal.any([context.signal, this.stopping.signal]) : this.stopping.signal;
      const checked = await this.stageAndCheck(staging, bundle.files, stop);
      // On the disk whole before the swap counts on them; a check, or a bundle refused, is not worth the flush.
      if (checked.valid) await this.flushStaged(bundle, staging);
      this.stopIfAsked(bundle, context);
      if (checked.timedOut) throw this.checkTimedOut(bundle.version);
      if (!checked.valid) {
        this.log("error", "haproxy-agent: haproxy -c refused the bundle", {
          version: bundle.version,
          output: checked.output,
        });
        throw new ApplyError(422, checked.error, { alerts: checked.alerts });
      }
      // From here on the push goes through: an abandon asked now is told it is reloading.
      // Its digest is kept with it: a restart after a stop during the reload compares it with the files in place.
      if (bundle.pushId) await this.pushes.record(bundle.pushId, bundle.version, "reloading", null, bundle.digest);
      return await this.swapAndReload(bundle, staging);
    } finally {
      await rm(staging, { recursive: true, force: true });
    }
  }

  /**
   * Flushes a checked bundle's staged files to the disk; a disk that refuses ends the push before the swap, nothing
   * live touched.
   * @param {Bundle} bundle @param {string} staging
   */
  async flushStaged(bundle, staging) {
    try {
      await syncStaged(staging, Object.keys(bundle.files), this.sync);
    } catch (error) {
      this.log("error", "haproxy-agent: the staged files could not be flushed to disk, no swap", {
        version: bundle.version,
        error: String(error),
      });
      throw stagedUnflushed(bundle.version, error);
    }
  }

  /**
   * Moves the live entries to .previous and the staged ones in, then reloads; puts the previous files back when the
   * swap or the reload fails, and says so, or which could not be put back.
   * @param {Bundle} bundle @param {string} staging
   */
  async swapAndReload(bundle, staging) {
    const previous = path.join(this.configDir, ".previous");
    const journal = { pushId: bundle.pushId ?? null, version: bundle.version, digest: bundle.digest };
    try {
      return await this.reloadSwapped(bundle, await this.swapped(bundle, staging, previous, journal), previous);
    } finally {
      // The push has ended, committed or answered: a start has nothing of this swap left to finish.
      await rm(path.join(this.configDir, SWAP_JOURNAL), { force: true });
    }
  }

  /**
   * Swaps the bundle in (config-files.mjs), its journal written first; a swap that fails is put back and answered.
   * @param {Bundle} bundle @param {string} staging @param {string} previous
   * @param {Omit<import("./config-files.mjs").SwapJournal, "live">} journal
   */
  async swapped(bundle, staging, previous, journal) {
    try {
      return await swapIn(this.configDir, staging, previous, this.move, this.sync, journal, this.log);
    } catch (error) {
      const unrestored = error instanceof SwapError ? error.unrestored : [];
      const cause = error instanceof Error ? error.message : String(error);
      this.log("error", "haproxy-agent: the swap failed, no reload", { version: bundle.version, cause, unrestored });
      throw swapFailed(bundle.version, error);
    }
  }

  /**
   * Reloads a bundle swapped in: commits it, or puts the previous files back when the reload fails, or leaves it in
   * place when the reload did not end in time.
   * @param {Bundle} bundle @param {{ movedAway: string[], movedIn: string[] }} swapped @param {string} previous
   */
  async reloadSwapped(bundle, swapped, previous) {
    const reload = await this.reload();
    if (reload.timedOut) {
      this.log("error", "haproxy-agent: the reload did not finish in time, killed; its files stay in place", {
        version: bundle.version,
        timeoutMs: this.timeoutMs,
      });
      throw reloadTimedOut(bundle.version, this.timeoutMs);
    }
    if (reload.code !== 0) {
      const unrestored = await putBack(this.configDir, previous, swapped, this.move, this.sync);
      this.log("error", "haproxy-agent: reload failed, previous files put back", {
        version: bundle.version,
        output: tail(reload.output),
        unrestored,
      });
      throw new ApplyError(500, `reload failed (exit ${reload.code}): ${tail(reload.output)}; ${restored(unrestored)}`);
    }
    /** @type {AgentState} */
    const next = { version: bundle.version, digest: bundle.digest, appliedAt: new Date().toISOString() };
    await this.commit(bundle, next, "applied");
    this.log("info", "haproxy-agent: applied", { version: bundle.version, digest: bundle.digest });
    return { outcome: "applied", version: bundle.version };
  }

  /**
   * Remembers a failed apply for GET /v1/status; a later success forgets it. A stale version (409) or a push stopped
   * before its reload (410) is no failure of the configuration.
   * @param {Bundle} bundle @param {unknown} error
   */
  async recordFailure(bundle, error) {
    if (error instanceof ApplyError && (error.status === 409 || error.status === 410)) return;
    const message = error instanceof ApplyError ? error.message : "unexpected error (see the agent's log)";
    await this.record.recordFailure({ at: new Date().toISOString(), version: bundle.version, message });
  }

  /**
   * A push whose id already ended applied, unchanged or abandoned answers that again (a repeated request applies
   * nothing twice, an abandoned one never applies), and one still under way (received or reloading) its outcome once
   * it ends: its record stays as it is, so an abandon tells the truth; undefined when it is to be applied.
   * @param {Bundle} bundle
   */
  replay(bundle) {
    const running = bundle.pushId ? this.running.get(bundle.pushId) : undefined;
    if (running) return running;
    const known = bundle.pushId ? this.pushes.get(bundle.pushId) : undefined;
    if (known?.state === "applied" || known?.state === "unchanged")
      return { outcome: known.state, version: bundle.version };
    if (known?.state === "abandoned") {
      throw new ApplyError(410, `version ${bundle.version} was not applied: ${known.error}`, { abandoned: true });
    }
    return undefined;
  }

  /**
   * Applies bundles one after the other, in arrival order. `signal` aborts when the client goes away: the push
   * then stops unless its reload has started.
   * @param {Bundle} bundle @param {AbortSignal} [signal] @param {number} [receivedAt] when the push began to arrive
   * @returns {Promise<{ outcome: string, version: number }>}
   */
  apply(bundle, signal, receivedAt = Date.now()) {
    const context = { signal, receivedAt };
    let replayed;
    try {
      replayed = this.replay(bundle);
    } catch (error) {
      return Promise.reject(error);
    }
    if (replayed) return Promise.resolve(replayed);
    if (bundle.pushId) void this.pushes.record(bundle.pushId, bundle.version, "received");
    if (bundle.timeoutMs && bundle.timeoutMs <= 2 * this.timeoutMs) {
      this.log("warn", "haproxy-agent: the control plane waits no longer than a check and a reload may take", {
        controlPlaneMs: bundle.timeoutMs,
        checkPlusReloadMs: 2 * this.timeoutMs,
        advice: "set HAPROXY_AGENT_TIMEOUT above twice --timeout",
      });
    }
    const result = this.queue.then(async () => {
      try {
        return await this.applyNow(bundle, context);
      } catch (error) {
        await this.recordFailure(bundle, error);
        const message = error instanceof Error ? error.message : String(error);
        const state = endState(error);
        if (bundle.pushId && state) await this.pushes.record(bundle.pushId, bundle.version, state, message);
        throw error;
      }
    });
    this.queue = result.catch(() => undefined);
    const pushId = bundle.pushId;
    if (pushId) {
      this.running.set(pushId, result);
      void this.queue.then(() => this.running.delete(pushId));
    }
    return result;
  }
}

/**
 * The agent's state: the configuration directory, how to check and reload, and the version it runs. Plain functions
 * over one Applier, so that callers may pass them around or spread the object without losing their `this`.
 * @param {ApplierOptions} options
 */
export function createApplier(options) {
  const applier = new Applier(options);
  return {
    /** Before the agent listens (see Applier.start). */
    start: () => applier.start(),
    /** SIGTERM: no more pushes; settles once the one reloading has ended (see Applier.stop). */
    stop: () => applier.stop(),
    readState: applier.record.readState,
    status: () => applier.status(),
    check: (/** @type {Record<string, string>} */ files) => applier.check(files),
    pushes: applier.pushes,
    /** Settles when no commit is under way: a push's outcome read then agrees with GET /v1/status. */
    committed: () => applier.committing,
    /**
     * Applies bundles one after the other, in arrival order (see Applier.apply).
     * @param {Bundle} bundle @param {AbortSignal} [signal] @param {number} [receivedAt] when the push began to arrive
     */
    apply: (bundle, signal, receivedAt) => applier.apply(bundle, signal, receivedAt),
  };
}
