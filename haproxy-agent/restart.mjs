// What a starting agent settles of a run of it that stopped or died mid-push: a swap cut short (its journal: the
// previous files put back whole), pushes still received or reloading (settled from the files in place, a reload run
// first for those in place, so that none answers in progress for good and none applied unreloaded) and the scratch
// directories of its pushes and checks, which can hold private keys.
import { readdir, readFile, rm } from "node:fs/promises";
import path from "node:path";
import { presentEntries, putBack, SWAP_JOURNAL } from "./config-files.mjs";
import { liveDigest } from "./live-digest.mjs";
import { tail } from "./programs.mjs";

/** A push's staging directory or a check's scratch one (apply.mjs): none is in use before the agent listens. */
const SCRATCH = /^\.(?:staging|check)-/;

/**
 * @typedef {(level: string, message: string, fields?: object) => void} Log
 * @typedef {{ pushId: string | null, unrestored: string[] }} Recovered a swap cut short, its previous files put back
 * @typedef {() => Promise<{ code: number, output: string, timedOut: boolean }>} Reload the agent's reload command
 */

/**
 * Removes the scratch directories a previous run left.
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
  const scratch = entries.filter((entry) => SCRATCH.test(entry));
  for (const entry of scratch) await rm(path.join(configDir, entry), { recursive: true, force: true });
  return scratch;
}

/**
 * Finishes a swap a crash cut short (its journal is still there): unless the new files are all in place, whole, the
 * previous ones are put back as after a failed swap (those in .previous moved back, those the bundle added removed).
 * Undefined when there was none to undo; the journal is removed either way.
 * @param {string} configDir @param {Log} log @returns {Promise<Recovered | undefined>}
 */
export async function recoverSwap(configDir, log) {
  const file = path.join(configDir, SWAP_JOURNAL);
  /** @type {import("./config-files.mjs").SwapJournal} */
  let journal;
  try {
    journal = JSON.parse(await readFile(file, "utf8"));
  } catch {
    return undefined;
  }
  let recovered;
  if ((await liveDigest(configDir)) !== journal.digest) {
    const previous = path.join(configDir, ".previous");
    const movedAway = await presentEntries(previous);
    const live = await presentEntries(configDir);
    const movedIn = live.filter((entry) => movedAway.includes(entry) || !journal.live.includes(entry));
    const unrestored = await putBack(configDir, previous, { movedAway, movedIn });
    log("warn", "haproxy-agent: a swap cut short by the previous run was undone", { ...journal, unrestored });
    recovered = { pushId: journal.pushId, unrestored };
  }
  await rm(file, { force: true });
  return recovered;
}

/**
 * What became of a push a previous run left in progress. Received: it never reached its reload. Reloading: its swap
 * had started; the files in place tell the rest. Its own, whole: they are reloaded now (the run may have died before
 * its reload ran) and it is applied once that reload ends; its reload not ending in time, it stays reloading (as a
 * reload timed out in a run does). Others: its swap was undone (recovered), or its reload failed and the previous
 * files went back.
 * @param {import("./pushes.mjs").StoredRecord} known @param {string | null} live the digest of the files in place
 * @param {Recovered | undefined} recovered @param {Reload} reload
 * @returns {Promise<{ state: "applied" | "refused" | "abandoned" | "reloading", error: string | null }>}
 */
async function outcomeAtStart(known, live, recovered, reload) {
  const notApplied = `version ${known.version} was not applied: `;
  if (known.state === "received")
    return { state: "abandoned", error: `${notApplied}the agent stopped before the reload` };
  if (recovered && recovered.pushId === known.pushId) {
    const unrestored = recovered.unrestored.length ? ` except ${recovered.unrestored.join(", ")}` : "";
    const error = `the agent stopped during its swap and, restarted, put the previous files back${unrestored}`;
    return { state: "refused", error: `${notApplied}${error}; haproxy was not reloaded` };
  }
  if (known.digest && known.digest === live) {
    const result = await reload();
    if (result.code === 0) return { state: "applied", error: null };
    if (result.timedOut) return { state: "reloading", error: null };
    const failed = `restarted, the agent reloaded its files, which are in place, and the reload failed (exit ${result.code})`;
    return { state: "refused", error: `${notApplied}${failed}: ${tail(result.output)}` };
  }
  const error = known.digest
    ? `${notApplied}the agent stopped during its reload and, restarted, found other files in place`
    : `the agent stopped during the reload of version ${known.version} and, restarted, cannot tell whether it is in ` +
      "force (its record is from an older agent; GET /v1/status tells the files in place)";
  return { state: "refused", error };
}

/**
 * Settles each push a previous run left received or reloading (outcomeAtStart), recording a version found in force
 * as the one the status reports. The reload runs once at most, whatever number of pushes have their files in place.
 * @param {{ configDir: string, pushes: ReturnType<typeof import("./pushes.mjs").createPushLog>,
 *   record: ReturnType<typeof import("./state.mjs").createStateRecord>, log: Log,
 *   recovered?: Recovered, reload: Reload }} agent
 */
export async function settlePushes({ configDir, pushes, record, log, recovered, reload }) {
  const live = await liveDigest(configDir);
  /** @type {ReturnType<Reload> | undefined} */
  let reloaded;
  const reloadOnce = () => (reloaded ??= reload());
  for (const known of pushes.inProgress()) {
    const { state, error } = await outcomeAtStart(known, live, recovered, reloadOnce);
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
}
