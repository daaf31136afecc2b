// fsync for what the agent writes and then counts on: a rename is only as durable as the file it moves and the
// directory that records it, so a power cut after a push, or after a record is written, must find whole files in
// place (the previous ones or the new ones), never empty or partial ones.
import { open } from "node:fs/promises";
import path from "node:path";
import { mapWithin } from "./map-within.mjs";

/** How many files are flushed at once: enough for the file system to commit them together, few for the thread pool. */
export const AT_ONCE = 4;

/**
 * Flushes one file or directory to the disk (opened read-only: fsync flushes through any descriptor on Linux).
 * @param {string} target
 */
export async function syncPath(target) {
  const handle = await open(target, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Flushes a staged bundle: each of its files, then the directories that hold them (certs/, the staging directory),
 * so that the swap moves in only what is on the disk whole.
 * @param {string} dir @param {string[]} names the bundle's paths, relative to `dir`
 * @param {(target: string) => Promise<void>} [sync]
 */
export async function syncStaged(dir, names, sync = syncPath) {
  await mapWithin(names, AT_ONCE, (name) => sync(path.join(dir, name)));
  await sync(path.join(dir, "certs"));
  await sync(dir);
}
