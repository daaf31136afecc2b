// What a starting agent settles of a run of it that stopped or died mid-push: a swap cut short (its journal: the
// previous files put back whole, as they are when the reload of new files found whole fails, then reloaded, HAProxy
// having maybe loaded a mix), pushes still received or reloading (settled from the files in place, a reload run first
// for those in place, so that none answers in progress for good and none applied unreloaded) and the scratch
// directories of its pushes and checks (private keys).
import { readdir, readFile, rm } from "node:fs/promises";
import path from "node:path";
import { restored } from "./apply-errors.mjs";
import { presentEntries, putBack, SWAP_JOURNAL } from "./config-files.mjs";
import { liveDigest } from "./live-digest.mjs";
import { tail } from "./programs.mjs";

/**
 * A push's staging directory or a check's scratch one (apply.mjs), or the temporary file of a swap's journal whose
 * write a crash cut short (write-whole.mjs): none is in use before the agent listens.
 */
const isScratch = (/** @type {string} */ entry) =>
  /^\.(?:staging|check)-/.test(entry) || entry === `${SWAP_JOURNAL}.tmp`;

/**
 * @typedef {(level: string, message: string, fields?: object) => void} Log
 * @typedef {{ pushId: string | null, unrestored: string[] }} Undone a swap cut short, its previous files put back
 * @typedef {{ pushId: string | null, before: string[] }} Whole a swap whose new files are all in place, whole: the
 *   entries live before it (its journal's), to put back should their reload fail
 * @typedef {Undone | Whole} Recovered the swap journal a start found
 * @typedef {() => Promise<{ code: number, output: string, timedOut: boolean }>} Reload the agent's reload command
 */

/**
 * Removes the scratch directories a previous run left, and its swap journal's temporary file.
 * @param {string} configDir @returns {Promise<string[]>} their names
 */
export async function removeScratch(configDir) {
  /** @type {string[]} */
  let entries = [];
  try {
    entries = await readdir(configDir);
  } catch (error) {
    if (/** @type {NodeJS.ErrnoException} */ (error).code !== "ENOENT") throw error;
  }
  const scratch = entries.filter(isScratch);
  for (const entry of scratch) await rm(path.join(configDir, entry), { recursive: true, force: true });
  return scratch;
}

/**
 * Finishes a swap a crash cut short (its journal is still there): unless the new files are all in place, whole, the
 * previous ones are put back as after a failed swap (those in .previous moved back, those the bundle added removed).
 * Undefined when there was no journal. The journal stays until settlePushes has settled its push: a crash before then
 * finds it again, and a reload at start that fails puts the previous files back from it.
 * @param {string} configDir @param {Log} log @param {typeof liveDigest} [digestOf] the agent's, which keeps what it
 *   read for the next call @returns {Promise<Recovered | undefined>}
 */
export async function recoverSwap(configDir, log, digestOf = liveDigest) {
  /** @type {import("./config-files.mjs").SwapJournal} */
  let journal;
  try {
    journal = JSON.parse(await readFile(path.join(configDir, SWAP_JOURNAL), "utf8"));
  } catch {
    return undefined;
  }
  if ((await digestOf(configDir)) === journal.digest) return { pushId: journal.pushId, before: journal.live };
  const unrestored = await putBack(
    configDir,
    path.join(configDir, ".previous"),
    await swapped(configDir, journal.live),
  );
  log("warn", "haproxy-agent: a swap cut short by the previous run was undone", { ...journal, unrestored });
  return { pushId: journal.pushId, unrestored };
}

/**
 * What a swap a crash cut short moved, for putBack: the entries in .previous went away, and those in place that are
 * among them or were not live before it (`before`, its journal's) came in.
 * @param {string} configDir @param {string[]} before
 */
async function swapped(configDir, before) {
  const movedAway = await presentEntries(path.join(configDir, ".previous"));
  const live = await presentEntries(configDir);
  return { movedAway, movedIn: live.filter((entry) => movedAway.includes(entry) || !before.includes(entry)) };
}

/**
 * What became of a push a previous run left in progress. Received: it never reached its reload. Reloading: its swap
 * had started; the files in place tell the rest. Its own, whole: they are reloaded now (the run may have died before
 * its reload ran) and it is applied once that reload ends; its reload not ending in time, it stays reloading (as a
 * reload timed out in a run does); its reload failing, it is refused and the previous files go back when its swap's
 * journal tells which (putBackRefused). Others: its swap was undone (recovered), or its reload failed and the previous
 * files went back.
 * @param {import("./pushes.mjs").StoredRecord} known
 * @param {{ configDir: string, live: string | null, recovered?: Recovered, undoneReload?: string, reload: Reload,
 *   log: Log }} start `live` the digest of the files in place; `undoneReload` what the reload after an undone swap
 *   did (reloadUndone)
 * @returns {Promise<{ state: "applied" | "refused" | "abandoned" | "reloading", error: string | null }>}
 */
async function outcomeAtStart(known, { configDir, live, recovered, undoneReload, reload, log }) {
  const notApplied = `version ${known.version} was not applied: `;
  if (known.state === "received")
    return { state: "abandoned", error: `${notApplied}the agent stopped before the reload` };
  if (recovered && "unrestored" in recovered && recovered.pushId === known.pushId) {
    const unrestored = recovered.unrestored.length ? ` except ${recovered.unrestored.join(", ")}` : "";
    const error = `the agent stopped during its swap and, restarted, put the previous files back${unrestored}`;
    return { state: "refused", error: `${notApplied}${error}; ${undoneReload}` };
  }
  if (known.digest && known.digest === live) {
    const result = await reload();
    if (result.code === 0) return { state: "applied", error: null };
    if (result.timedOut) return { state: "reloading", error: null };
    const failed = `restarted, the agent reloaded its files, which are in place, and the reload failed (exit ${result.code})`;
    const putBack = await putBackRefused(configDir, known, recovered, log);
    return { state: "refused", error: `${notApplied}${failed}: ${tail(result.output)}${putBack}` };
  }
  const error = known.digest
    ? `${notApplied}the agent stopped during its reload and, restarted, found other files in place`
    : `the agent stopped during the reload of version ${known.version} and, restarted, cannot tell whether it is in ` +
      "force (its record is from an older agent; GET /v1/status tells the files in place)";
  return { state: "refused", error };
}

/**
 * After a push's files failed their reload at start: when its swap's journal found them whole, the previous files go
 * back, as reloadSwapped (apply.mjs) puts them back after a run's failed reload, and, as there, are not reloaded (a
 * failed reload leaves HAProxy on what it ran). Says what is in force then, for its error. Without its journal (a run
 * whose reload timed out ended the swap) nothing tells which entries were its: "", its files left in place.
 * @param {string} configDir @param {import("./pushes.mjs").StoredRecord} known
 * @param {Recovered | undefined} recovered @param {Log} log
 */
async function putBackRefused(configDir, known, recovered, log) {
  if (!recovered || !("before" in recovered) || recovered.pushId !== known.pushId) return "";
  const moved = await swapped(configDir, recovered.before);
  const unrestored = await putBack(configDir, path.join(configDir, ".previous"), moved);
  log("error", "haproxy-agent: restarted, the reload failed, previous files put back", {
    pushId: known.pushId,
    version: known.version,
    unrestored,
  });
  return `; ${restored(unrestored)}`;
}

/**
 * Reloads the previous files a start put back after a swap cut short: HAProxy may have loaded a mix of old and new
 * files meanwhile (at boot it can start before the agent), and only a reload brings it back to the files in place.
 * Says what the reload did, for the push's error.
 * @param {() => ReturnType<Reload>} reload @param {Log} log @returns {Promise<string>}
 */
async function reloadUndone(reload, log) {
  const result = await reload();
  if (result.code === 0) {
    log("info", "haproxy-agent: the previous files put back at start were reloaded");
    return "haproxy was reloaded on them";
  }
  const why = result.timedOut ? "did not finish in time" : `failed (exit ${result.code}): ${tail(result.output)}`;
  log("error", `haproxy-agent: the reload of the previous files put back at start ${why}`);
  return `their reload ${why}`;
}

/**
 * Settles each push a previous run left received or reloading (outcomeAtStart), recording a version found in force
 * as the one the status reports. The reload runs once at most, whatever number of pushes have their files in place.
 * The swap's journal is removed once they are settled: a crash before finds it again. The files on disk are hashed
 * only when a push is left to settle: at 5,000 certificates that takes a second of every start.
 * @param {{ configDir: string, pushes: ReturnType<typeof import("./pushes.mjs").createPushLog>,
 *   record: ReturnType<typeof import("./state.mjs").createStateRecord>, log: Log,
 *   recovered?: Recovered, reload: Reload, digestOf?: typeof liveDigest }} agent
 */
export async function settlePushes({ configDir, pushes, record, log, recovered, reload, digestOf = liveDigest }) {
  const inProgress = pushes.inProgress();
  const live = inProgress.length > 0 ? await digestOf(configDir) : null;
  /** @type {ReturnType<Reload> | undefined} */
  let reloaded;
  const reloadOnce = () => (reloaded ??= reload());
  const undoneReload = recovered && "unrestored" in recovered ? await reloadUndone(reloadOnce, log) : undefined;
  for (const known of inProgress) {
    const start = { configDir, live, recovered, undoneReload, reload: reloadOnce, log };
    const { state, error } = await outcomeAtStart(known, start);
    if (state === "reloading") {
      log("error", "haproxy-agent: restarted, the reload of a push's files did not finish in time", known);
      continue;
    }
    if (state === "applied" && known.digest && known.version !== null) {
      const recorded = await record.readState();
      if (recorded?.version !== known.version || recorded?.digest !== known.digest)
        await record.recordSuccess({ version: known.version, digest: known.digest, appliedAt: known.at });
    }
    await pushes.record(known.pushId, known.version, state, error);
    log("info", "haproxy-agent: a push left in progress by the previous run is settled", {
      pushId: known.pushId,
      version: known.version,
      was: known.state,
      state,
      error,
    });
  }
  await rm(path.join(configDir, SWAP_JOURNAL), { force: true });
}
