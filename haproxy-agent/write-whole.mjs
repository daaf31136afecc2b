// The one way the agent writes its own records (state, last error, push log): to a temporary file beside the target,
// flushed, then renamed over it and the rename flushed, so that a crash, a power cut or a full disk leaves the
// previous record or the new one, never a truncated or empty one, and no temporary file behind.
import { rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { syncPath } from "./sync-to-disk.mjs";

/**
 * Writes `text` to `target` whole or not at all; rejects with the file system's error.
 * @param {string} target @param {string} text
 * @param {(target: string) => Promise<void>} [sync] how the file and its directory are flushed (a test watches it)
 */
export async function writeWhole(target, text, sync = syncPath) {
  const temporary = `${target}.tmp`;
  try {
    await writeFile(temporary, text);
    await sync(temporary);
    await rename(temporary, target);
    await sync(path.dirname(target));
  } catch (error) {
    await rm(temporary, { force: true }).catch(() => undefined);
    throw error;
  }
}
