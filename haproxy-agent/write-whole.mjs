// The one way the agent writes its own records (state, last error, push log): to a temporary file beside the target,
// then renamed over it, so that a crash or a full disk leaves the previous record or the new one, never a truncated
// one, and no temporary file behind.
import { rename, rm, writeFile } from "node:fs/promises";

/** Writes `text` to `target` whole or not at all; rejects with the file system's error. */
export async function writeWhole(/** @type {string} */ target, /** @type {string} */ text) {
  const temporary = `${target}.tmp`;
  try {
    await writeFile(temporary, text);
    await rename(temporary, target);
  } catch (error) {
    await rm(temporary, { force: true }).catch(() => undefined);
    throw error;
  }
}
