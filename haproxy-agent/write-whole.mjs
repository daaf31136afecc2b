// The one way the agent writes its own records (state, last error, push log): to a temporary file beside the target,
// flushed, then renamed over it and the rename flushed, so that a crash, a power cut or a full disk leaves the
// previous record or the new one, never a truncated or empty one, and no temporary file behind.
import { rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { syncPath } from "./sync-to-disk.mjs";

/**
 * Writes `text` to `target` whole or not at all; rejects with the file system's error when the record was not
 * written. The rename's flush is best effort: once renamed the new record is in place, and a rejection would have
 * state.mjs report a record it did write as failed; a refusal is logged (a power cut might then bring back the
 * previous record, whole).
 * @param {string} target @param {string} text
 * @param {(level: string, message: string, fields?: object) => void} log
 * @param {(target: string) => Promise<void>} [sync] how the file and its directory are flushed (a test watches it)
 */
export async function writeWhole(target, text, log, sync = syncPath) {
  const temporary = `${target}.tmp`;
  try {
    await writeFile(temporary, text);
    await sync(temporary);
    await rename(temporary, target);
  } catch (error) {
    await rm(temporary, { force: true }).catch(() => undefined);
    throw error;
  }
  await sync(path.dirname(target)).catch((error) => {
    log("warn", "haproxy-agent: a record was written, but its directory could not be flushed", {
      file: target,
      error: String(error),
    });
  });
}
