// The digest of the managed files on disk now (GET /v1/status recomputes it, so that hand edits show; a push compares
// it to find a bundle unchanged). At 5,000 certificates reading them all took 1.1 s a call: a file is read again only
// when its size, times or inode changed, and a directory whose files all kept theirs answers the last digest.
import { readdir, readFile, stat } from "node:fs/promises";
import path from "node:path";
import { bundleDigest } from "./bundle.mjs";
import { MANAGED } from "./config-files.mjs";
import { mapWithin } from "./map-within.mjs";

/**
 * A file changed this recently is read every time: a change within one tick of the file system's clock, of the same
 * size, would keep its times, and go unseen.
 */
const RACY_MS = 2000;
/** Most characters of file text kept between calls; the files past it are read each time their text is needed. */
const MAX_CACHED = 64 * 1024 * 1024;
/**
 * How many files are read at once: each read holds a file descriptor, and 5,000 certificates read together would
 * exhaust a 1024 open-file limit (EMFILE); more than libuv's four threads would not read faster.
 */
export const READS_AT_ONCE = 8;

/** @param {unknown} error */
const missing = (error) => /** @type {NodeJS.ErrnoException} */ (error).code === "ENOENT";

/**
 * The bundle paths a directory may hold: the fixed files, then the certificates in order.
 * @param {string} configDir
 */
async function managedNames(configDir) {
  /** @type {string[]} */
  let certificates = [];
  try {
    certificates = await readdir(path.join(configDir, "certs"));
  } catch (error) {
    if (!missing(error)) throw error;
  }
  const fixed = MANAGED.filter((entry) => entry !== "certs");
  return fixed.concat(certificates.sort().map((name) => `certs/${name}`));
}

/**
 * What tells a file's text unchanged (null: there is no such file), and whether it is old enough to be trusted.
 * @param {string} file @param {number} now
 */
async function identify(file, now) {
  try {
    const found = await stat(file, { bigint: true });
    const key = `${found.dev}:${found.ino}:${found.size}:${found.mtimeNs}:${found.ctimeNs}`;
    return { key, settled: found.ctimeNs < BigInt(now - RACY_MS) * 1_000_000n };
  } catch (error) {
    if (missing(error)) return null;
    throw error;
  }
}

/**
 * A digest of the files on disk that keeps what it read (by path, size, times and inode; bounded by MAX_CACHED) for
 * the next call. `read` and `now` are seams for tests (counting reads, making files old enough to keep).
 * @param {{ read?: (file: string, encoding: "utf8") => Promise<string>, now?: () => number }} [seams]
 * @returns {(configDir: string) => Promise<string | null>} null when there is no haproxy.cfg (nothing applied yet)
 */
export function createLiveDigest({ read = readFile, now = Date.now } = {}) {
  /** @type {Map<string, { key: string, text: string }>} */
  let cache = new Map();
  /** @type {{ fingerprint: string, digest: string | null } | undefined} */
  let last;

  return async (configDir) => {
    const started = now();
    const names = await managedNames(configDir);
    const found = await Promise.all(names.map((name) => identify(path.join(configDir, name), started)));
    const present = names.flatMap((name, index) => {
      const identity = found[index];
      return identity ? [{ name, file: path.join(configDir, name), ...identity }] : [];
    });
    const fingerprint = [configDir, ...present.map(({ name, key }) => `${name} ${key}`)].join("\n");
    if (last?.fingerprint === fingerprint) return last.digest;

    /** @type {Map<string, { key: string, text: string }>} */
    const kept = new Map();
    let keptSize = 0;
    /** @type {Record<string, string>} */
    const files = {};
    let gone = false;
    await mapWithin(present, READS_AT_ONCE, async ({ name, file, key, settled }) => {
      const known = cache.get(file);
      const text =
        known?.key === key
          ? known.text
          : await read(file, "utf8").catch((error) => {
              if (!missing(error)) throw error;
              gone = true;
            });
      if (text === undefined) return;
      files[name] = text;
      if (!settled || keptSize + text.length > MAX_CACHED) return;
      kept.set(file, { key, text });
      keptSize += text.length;
    });
    cache = kept;
    const digest = "haproxy.cfg" in files ? bundleDigest(files) : null;
    // A directory read while a file was new or went away is read again next time.
    last = !gone && present.every(({ settled }) => settled) ? { fingerprint, digest } : undefined;
    return digest;
  };
}

/** The digest of the files on disk, read once and nothing kept (an agent's start). @param {string} configDir */
export const liveDigest = (configDir) => createLiveDigest()(configDir);
