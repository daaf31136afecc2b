// The configuration directory's managed entries: what is on disk now (the digest a status tells is recomputed from
// it, so that hand edits show), and the swap that moves a checked bundle in and, when its reload fails, back out.
import { mkdir, readdir, readFile, rename, rm, stat } from "node:fs/promises";
import path from "node:path";
import { bundleDigest } from "./bundle.mjs";

/**
 * The entries of the configuration directory a bundle replaces as a whole: an entry the bundle lacks is removed
 * (a stored version from before the crt-list leaves none behind).
 */
const MANAGED = [
  "haproxy.cfg",
  "domain2backend.map",
  "domain2redirect.map",
  "domain2prefix.map",
  "domain2cert.map",
  "crt-list.txt",
  "fallback.pem",
  "certs",
];

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
 * The managed files as they are on disk now, by bundle path (what a bundle would have to hold to equal them).
 * @param {string} configDir
 * @returns {Promise<Record<string, string>>}
 */
async function readLiveFiles(configDir) {
  /** @type {Record<string, string>} */
  const files = {};
  /** @param {string} name */
  const take = async (name) => {
    try {
      files[name] = await readFile(path.join(configDir, name), "utf8");
    } catch (error) {
      if (/** @type {NodeJS.ErrnoException} */ (error).code !== "ENOENT") throw error;
    }
  };
  for (const entry of MANAGED) if (entry !== "certs") await take(entry);
  /** @type {string[]} */
  let certificates = [];
  try {
    certificates = await readdir(path.join(configDir, "certs"));
  } catch (error) {
    if (/** @type {NodeJS.ErrnoException} */ (error).code !== "ENOENT") throw error;
  }
  for (const name of certificates.sort()) await take(`certs/${name}`);
  return files;
}

/**
 * The digest of the files on disk, or null when there is no haproxy.cfg (nothing was ever applied).
 * @param {string} configDir
 */
export async function liveDigest(configDir) {
  const files = await readLiveFiles(configDir);
  return "haproxy.cfg" in files ? bundleDigest(files) : null;
}

/**
 * Moves the live entries to `previous` (emptied first) and the staged ones in.
 * @param {string} configDir @param {string} staging @param {string} previous
 * @returns {Promise<string[]>} the entries moved away, for putBack
 */
export async function swapIn(configDir, staging, previous) {
  await rm(previous, { recursive: true, force: true });
  await mkdir(previous, { recursive: true });
  /** @type {string[]} */
  const movedAway = [];
  for (const entry of MANAGED) {
    if (await exists(path.join(configDir, entry))) {
      await rename(path.join(configDir, entry), path.join(previous, entry));
      movedAway.push(entry);
    }
  }
  for (const entry of MANAGED) {
    if (await exists(path.join(staging, entry))) await rename(path.join(staging, entry), path.join(configDir, entry));
  }
  return movedAway;
}

/**
 * Puts back the entries swapIn moved away, and only them: an entry the failed bundle added is removed.
 * @param {string} configDir @param {string} previous @param {string[]} movedAway
 */
export async function putBack(configDir, previous, movedAway) {
  for (const entry of MANAGED) await rm(path.join(configDir, entry), { recursive: true, force: true });
  for (const entry of movedAway) await rename(path.join(previous, entry), path.join(configDir, entry));
}
