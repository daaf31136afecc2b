// The configuration directory's managed entries (live-digest.mjs tells what is on disk), and the swap that moves a
// checked bundle in and, when it or the reload fails, back out; its journal lets a start finish what a crash cut short.
import { mkdir, rename, rm, stat } from "node:fs/promises";
import path from "node:path";
import { syncPath } from "./sync-to-disk.mjs";
import { writeWhole } from "./write-whole.mjs";

/**
 * The entries of the configuration directory a bundle replaces as a whole: an entry the bundle lacks is removed
 * (a stored version from before the crt-list leaves none behind).
 */
export const MANAGED = [
  "haproxy.cfg",
  "domain2backend.map",
  "domain2redirect.map",
  "domain2prefix.map",
  "domain2cert.map",
  "crt-list.txt",
  "fallback.pem",
  "certs",
];

/**
 * The swap's journal: written whole before its first rename and removed once its push has ended, so that a start that
 * finds it knows a swap was cut short: which push, its digest and the entries live before it (restart.mjs).
 * @typedef {{ pushId: string | null, version: number, digest: string, live: string[] }} SwapJournal
 */
export const SWAP_JOURNAL = ".swap.json";

/** The managed entries present in `dir`. @param {string} dir */
export async function presentEntries(dir) {
  /** @type {string[]} */
  const present = [];
  for (const entry of MANAGED) if (await exists(path.join(dir, entry))) present.push(entry);
  return present;
}

/** @param {string} file */
async function exists(file) {
  try {
    await stat(file);
    return true;
  } catch {
    return false;
  }
}

/**
 * Moves the live entries to `previous` (emptied first) and the staged ones in, and flushes the configuration
 * directory, so that the swap is on the disk before the reload counts on it. A rename that fails at any point puts
 * the previous entries back before the error is thrown: a SwapError telling which could not be put back (none when the
 * live directory is the previous version again).
 * @param {string} configDir @param {string} staging @param {string} previous
 * @param {typeof rename} [move] how an entry is moved (a test makes one fail)
 * @param {(target: string) => Promise<void>} [sync] how the journal and a directory are flushed (a test watches it)
 * @param {Omit<SwapJournal, "live">} [journal] the push, for the journal written before the first rename
 * @param {(level: string, message: string, fields?: object) => void} [log] where the journal's write tells that its
 *   directory could not be flushed (write-whole.mjs), as the agent's records do
 * @returns {Promise<{ movedAway: string[], movedIn: string[] }>} what moved, for putBack
 */
export async function swapIn(configDir, staging, previous, move = rename, sync = syncPath, journal, log = () => {}) {
  await rm(previous, { recursive: true, force: true });
  await mkdir(previous, { recursive: true });
  /** @type {{ movedAway: string[], movedIn: string[] }} */
  const swapped = { movedAway: [], movedIn: [] };
  let flushing = false;
  try {
    const live = await presentEntries(configDir);
    if (journal) await writeWhole(path.join(configDir, SWAP_JOURNAL), JSON.stringify({ ...journal, live }), log, sync);
    for (const entry of live) {
      await move(path.join(configDir, entry), path.join(previous, entry));
      swapped.movedAway.push(entry);
    }
    for (const entry of await presentEntries(staging)) {
      await move(path.join(staging, entry), path.join(configDir, entry));
      swapped.movedIn.push(entry);
    }
    flushing = true;
    await sync(configDir);
  } catch (error) {
    throw new SwapError(error, await putBack(configDir, previous, swapped, move, sync), flushing);
  }
  return swapped;
}

/**
 * A swap that failed: its cause, the entries that could not be put back (their previous version in .previous), and
 * whether every entry had moved and the directory's flush failed (the disk refused, not a rename).
 */
export class SwapError extends Error {
  /** @param {unknown} cause @param {string[]} unrestored @param {boolean} flushing */
  constructor(cause, unrestored, flushing) {
    super(cause instanceof Error ? cause.message : String(cause));
    this.unrestored = unrestored;
    this.flushing = flushing;
    this.code = /** @type {NodeJS.ErrnoException} */ (cause)?.code;
  }
}

/**
 * Puts back the entries swapIn moved away, and only them; an entry the failed bundle added is removed, one it did not
 * touch is left. A file is renamed over the new one, so it is never missing; a directory (certs) cannot be, so the new
 * one is removed first. One entry that fails does not stop the others. The directory is flushed after, as after a swap.
 * @param {string} configDir @param {string} previous @param {{ movedAway: string[], movedIn: string[] }} swapped
 * @param {typeof rename} [move] @param {(target: string) => Promise<void>} [sync]
 * @returns {Promise<string[]>} the entries that could not be put back (none: the previous version is live again)
 */
export async function putBack(configDir, previous, { movedAway, movedIn }, move = rename, sync = syncPath) {
  /** @type {string[]} */
  const unrestored = [];
  for (const entry of MANAGED) {
    const live = path.join(configDir, entry);
    try {
      if (movedAway.includes(entry)) {
        if (entry === "certs" && movedIn.includes(entry)) await rm(live, { recursive: true, force: true });
        await move(path.join(previous, entry), live);
      } else if (movedIn.includes(entry)) await rm(live, { recursive: true, force: true });
    } catch {
      unrestored.push(entry);
    }
  }
  // Best effort: what is put back is live either way, and a disk that refuses this has refused more already.
  await sync(configDir).catch(() => undefined);
  return unrestored;
}
