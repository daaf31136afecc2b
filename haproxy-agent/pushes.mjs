// The outcome of each push by its id (PUT /v1/config's pushId), for a control plane that lost the answer: it asks
// POST /v1/pushes/{id}/abandon, which tells what became of the push and, when the reload has not started yet, stops
// it for good. Bounded: the last MAX_PUSHES ids, kept in a file beside the configuration so that a restart keeps them.
import { readFile } from "node:fs/promises";
import path from "node:path";
import { writeWhole } from "./write-whole.mjs";

/** How many push ids the agent remembers (oldest forgotten first); about 200 bytes each on disk. */
export const MAX_PUSHES = 1000;
const PUSHES_FILE = ".agent-pushes.json";
/** What a push id may be: the control plane's are `v<version>-<time>` (master) or random UUIDs (slaves). */
export const PUSH_ID = /^[A-Za-z0-9._-]{1,100}$/;

/**
 * received: queued or being checked (it may still be stopped); reloading: the files are swapped in and the reload
 * runs (no way back); applied / unchanged: done; refused: `haproxy -c` or the reload failed (error says why); stale:
 * the agent runs a newer version; abandoned: stopped before the reload (the client went away, or was too late, or
 * the control plane gave it up, or the agent stopped), or given up before it arrived: it will never be applied.
 * A record still received or reloading when the agent starts was left by a run that died: restart.mjs settles it.
 * @typedef {"received" | "reloading" | "applied" | "unchanged" | "refused" | "stale" | "abandoned"} PushState
 * @typedef {{ pushId: string, version: number | null, state: PushState, error: string | null, at: string }} PushRecord
 * @typedef {PushRecord & { digest?: string }} StoredRecord a reloading push's digest: what a restart compares with
 * the files in place (the agent's own: never answered)
 */

/** @param {StoredRecord | undefined} record @returns {PushRecord | undefined} */
const shown = (record) => {
  if (!record) return undefined;
  const { digest, ...answered } = record;
  return answered;
};

/** The states of a push not ended yet. @type {PushState[]} */
const IN_PROGRESS = ["received", "reloading"];

/**
 * What an earlier run of the agent remembered; a missing or broken file is an empty log (every id asked about is then
 * unknown, and abandoned for good).
 * @param {string} file @returns {Promise<StoredRecord[]>}
 */
async function readRecords(file) {
  try {
    const list = JSON.parse(await readFile(file, "utf8"));
    return Array.isArray(list) ? list.slice(-MAX_PUSHES) : [];
  } catch {
    return [];
  }
}

/** @param {{ configDir: string, log: (level: string, message: string, fields?: object) => void }} options */
export function createPushLog({ configDir, log }) {
  /** @type {Map<string, StoredRecord>} */
  const records = new Map();
  const file = path.join(configDir, PUSHES_FILE);
  let saving = Promise.resolve();

  /** Reads what an earlier run of the agent remembered. */
  async function load() {
    for (const record of await readRecords(file)) records.set(record.pushId, record);
  }

  /** Writes the log atomically (a crash leaves the old file or the new one), one write after the other. */
  function save() {
    const text = JSON.stringify([...records.values()]);
    saving = saving.then(async () => {
      try {
        await writeWhole(file, text, log);
      } catch (error) {
        log("error", "haproxy-agent: the push log could not be written", { error: String(error) });
      }
    });
    return saving;
  }

  /**
   * Records a push's state (kept in memory only while it is merely received: the states after it are written to
   * disk before the agent goes on).
   * @param {string} pushId @param {number | null} version @param {PushState} state @param {string | null} [error]
   * @param {string} [digest] the bundle's, kept while it reloads
   */
  async function record(pushId, version, state, error = null, digest = undefined) {
    records.delete(pushId);
    const at = new Date().toISOString();
    records.set(pushId, { pushId, version, state, error, at, ...(digest === undefined ? {} : { digest }) });
    while (records.size > MAX_PUSHES) records.delete(/** @type {string} */ (records.keys().next().value));
    if (state !== "received") await save();
  }

  /**
   * What became of a push, stopping it if it has not reached its reload: an id never seen is remembered as
   * abandoned, so that a push that arrives late is never applied.
   * @param {string} pushId @returns {Promise<PushRecord>}
   */
  async function abandon(pushId) {
    const known = records.get(pushId);
    if (known && known.state !== "received") return /** @type {PushRecord} */ (shown(known));
    await record(pushId, known?.version ?? null, "abandoned", "given up by the control plane before its reload");
    return /** @type {PushRecord} */ (shown(records.get(pushId)));
  }

  return {
    load,
    record,
    abandon,
    get: (/** @type {string} */ pushId) => shown(records.get(pushId)),
    /** The pushes still received or reloading, with a reloading one's digest (restart.mjs settles them). */
    inProgress: () => [...records.values()].filter((known) => IN_PROGRESS.includes(known.state)),
  };
}

/**
 * Settles the pushes left reloading by a reload that did not end in time, once a later one has ended: applied when
 * the files now in force are theirs, else refused (their files were replaced before any reload was known to end).
 * @param {ReturnType<typeof createPushLog>} pushes @param {string} digest the files in force now
 * @param {number} version theirs
 */
export async function settleReloading(pushes, digest, version) {
  for (const known of pushes.inProgress().filter((record) => record.state === "reloading")) {
    const replaced =
      `version ${known.version} was not applied: its reload did not finish in time, and version ${version}, ` +
      "reloaded since, replaced its files";
    if (known.digest === digest) await pushes.record(known.pushId, known.version, "applied");
    else await pushes.record(known.pushId, known.version, "refused", replaced);
  }
}
