// What the agent tells GET /v1/status: the version it last applied (.agent-state.json) and its last failed apply
// (.agent-error.json). Kept in memory as well as on disk, so that a version the reload put in force is reported as
// such even when the disk would not take its record (full, or read-only): the status then says so in its last error.
import { readFile, rm } from "node:fs/promises";
import path from "node:path";
import { writeWhole } from "./write-whole.mjs";

/**
 * @typedef {import("./bundle.mjs").AgentState} AgentState
 * @typedef {import("./bundle.mjs").AgentError} AgentError
 */

const STATE_FILE = ".agent-state.json";
/** The last failed apply, until a later one succeeds. */
const ERROR_FILE = ".agent-error.json";

/** @param {string} configDir @param {string} file @returns {Promise<any>} */
async function readJson(configDir, file) {
  try {
    return JSON.parse(await readFile(path.join(configDir, file), "utf8"));
  } catch {
    return undefined;
  }
}

/** @param {{ configDir: string, log: (level: string, message: string, fields?: object) => void }} options */
export function createStateRecord({ configDir, log }) {
  /**
   * Writes a record whole or not at all (write-whole.mjs).
   * @param {string} file @param {unknown} value
   */
  const writeRecord = (file, value) => writeWhole(path.join(configDir, file), JSON.stringify(value), log);

  /** @type {AgentState | undefined} the last success of this run of the agent; before one, the disk's record counts */
  let state;
  /** @type {AgentError | null | undefined} this run's last failure, null since a success; undefined: the disk's */
  let failure;

  /**
   * Records a version as the one in force (and no failure since). When the disk refuses, the version is still the
   * one in force, and reported: the failure to record it becomes the last error, and a restart before the next
   * success would report the version recorded before it.
   * @param {AgentState} next
   */
  async function recordSuccess(next) {
    state = next;
    failure = null;
    try {
      await writeRecord(STATE_FILE, next);
    } catch (error) {
      const code = /** @type {NodeJS.ErrnoException} */ (error).code ?? "unknown error";
      failure = {
        at: new Date().toISOString(),
        version: next.version,
        message:
          `version ${next.version} is in force, but the agent could not record it on disk (${code}): ` +
          "restarted, it would report the version recorded before it",
      };
      log("error", "haproxy-agent: applied, but the state file could not be written", {
        version: next.version,
        error: String(error),
      });
    }
    await rm(path.join(configDir, ERROR_FILE), { force: true }).catch(() => undefined);
  }

  /** Records a failed apply, shown until a later success. @param {AgentError} record */
  async function recordFailure(record) {
    failure = record;
    await writeRecord(ERROR_FILE, record).catch(() => undefined);
  }

  return {
    /** @returns {Promise<AgentState | undefined>} */
    readState: async () => state ?? (await readJson(configDir, STATE_FILE)),
    /** @returns {Promise<AgentError | null>} */
    readFailure: async () => (failure !== undefined ? failure : ((await readJson(configDir, ERROR_FILE)) ?? null)),
    recordSuccess,
    recordFailure,
  };
}
