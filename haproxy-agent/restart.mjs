// What a starting agent settles of a run of it that stopped or died mid-push: pushes still received or reloading
// (settled from the files in place, so that none answers in progress for good) and the scratch directories of its
// pushes and checks, which can hold private keys.
import { readdir, rm } from "node:fs/promises";
import path from "node:path";
import { liveDigest } from "./live-digest.mjs";

/** A push's staging directory or a check's scratch one (apply.mjs): none is in use before the agent listens. */
const SCRATCH = /^\.(?:staging|check)-/;

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
 * What became of a push a previous run left in progress. Received: it never reached its reload. Reloading: its files
 * had been swapped in and the reload started; the files in place tell the rest: that push's, it is applied (the run
 * stopped during the reload or before recording it; a reload cut short, HAProxy runs them from its next reload or
 * start); others, its reload failed and the previous files went back (or the swap did not end).
 * @param {import("./pushes.mjs").StoredRecord} known @param {string | null} live the digest of the files in place
 * @returns {{ state: "applied" | "refused" | "abandoned", error: string | null }}
 */
function outcomeAtStart(known, live) {
  const version = known.version;
  if (known.state === "received")
    return { state: "abandoned", error: `version ${version} was not applied: the agent stopped before the reload` };
  if (known.digest && known.digest === live) return { state: "applied", error: null };
  const error = known.digest
    ? `version ${version} was not applied: the agent stopped during its reload and, restarted, ` +
      "found other files in place"
    : `the agent stopped during the reload of version ${version} and, restarted, cannot tell whether it is in force ` +
      "(its record is from an older agent; GET /v1/status tells the files in place)";
  return { state: "refused", error };
}

/**
 * Settles each push a previous run left received or reloading (outcomeAtStart), recording a version found in force
 * as the one the status reports.
 * @param {{ configDir: string, pushes: ReturnType<typeof import("./pushes.mjs").createPushLog>,
 *   record: ReturnType<typeof import("./state.mjs").createStateRecord>,
 *   log: (level: string, message: string, fields?: object) => void }} agent
 */
export async function settlePushes({ configDir, pushes, record, log }) {
  const live = await liveDigest(configDir);
  for (const known of pushes.inProgress()) {
    const { state, error } = outcomeAtStart(known, live);
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
