// The pebble the certificate suite runs: Debian trixie's build of 2.6.0, fetched once into the project's cache.
// @ts-check
// Debian bookworm's pebble (2.4.0) has no ACME Renewal Information; 2.6.0 serves `renewalInfo` and accepts `replaces`.
// Its .deb (depending on libc6 >= 2.34 only) comes from deb.debian.org over plain HTTP, so it is pinned by SHA-256
// and refused when it differs; `dpkg-deb -x` unpacks it without root into node_modules/.cache/system-tools/. The
// suite makes its own listener certificate and configuration, so the binary is all it takes from the package.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { root } from "./processes.mjs";
import { requireBinary } from "./system-programs.mjs";

export const PEBBLE_DEB = {
  version: "2.6.0",
  url: "http://deb.debian.org/debian/pool/main/p/pebble/pebble_2.6.0+ds1-1+b7_amd64.deb",
  /** From trixie's Packages index. */
  sha256: "94a4e1269abcad428d1276de74b984b123ac83e0313541951c41bdcb006147d3",
};

const cacheDir = path.join(root, "node_modules", ".cache", "system-tools");
const debFile = path.join(cacheDir, path.basename(PEBBLE_DEB.url));
const unpacked = path.join(cacheDir, path.basename(PEBBLE_DEB.url, ".deb"));
/** Where the unpacked binary lives once ensurePebble() has run. */
export const PEBBLE_BINARY = path.join(unpacked, "usr", "bin", "pebble");

const sha256 = (/** @type {Buffer} */ bytes) => createHash("sha256").update(bytes).digest("hex");

const byHand =
  `Fetch ${PEBBLE_DEB.url} by hand and put it at ${debFile}: the tests check its SHA-256 ` +
  `(${PEBBLE_DEB.sha256}) and unpack it themselves.`;

/** @param {string} cause */
const failure = (cause) => new Error(`pebble ${PEBBLE_DEB.version}: ${cause}\n${byHand}`);

/** The pinned .deb's bytes: the cached file when it matches the pin, else a fresh download that must match it. */
async function pinnedDeb() {
  if (existsSync(debFile)) {
    const cached = readFileSync(debFile);
    if (sha256(cached) === PEBBLE_DEB.sha256) return cached;
    rmSync(debFile, { force: true });
  }
  console.error(`pebble ${PEBBLE_DEB.version}: downloading ${PEBBLE_DEB.url} (once, into ${cacheDir})`);
  let bytes;
  try {
    const response = await fetch(PEBBLE_DEB.url, { signal: AbortSignal.timeout(120_000) });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    bytes = Buffer.from(await response.arrayBuffer());
  } catch (error) {
    const cause = error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : error;
    throw failure(`the download of ${PEBBLE_DEB.url} failed (${cause}).`);
  }
  const digest = sha256(bytes);
  if (digest !== PEBBLE_DEB.sha256) {
    throw failure(
      `${PEBBLE_DEB.url} has SHA-256 ${digest}, not the pinned ${PEBBLE_DEB.sha256}: refused, nothing was unpacked.`,
    );
  }
  return bytes;
}

/**
 * Makes sure the pinned pebble is unpacked in the cache (downloading and checking it the first time) and that it
 * runs here; returns its path. Throws an error that says what failed and how to provide the file by hand.
 * @returns {Promise<string>}
 */
export async function ensurePebble() {
  if (process.platform !== "linux" || process.arch !== "x64")
    throw failure(`only the linux amd64 build is pinned, and this is ${process.platform} ${process.arch}.`);
  if (!existsSync(PEBBLE_BINARY)) {
    requireBinary("dpkg-deb");
    mkdirSync(cacheDir, { recursive: true });
    const bytes = await pinnedDeb();
    writeFileSync(debFile, bytes);
    // Unpacked beside the final place and renamed into it, so that an interrupted run leaves no half tree behind.
    const staging = mkdtempSync(path.join(cacheDir, "pebble-unpacking-"));
    const unpack = spawnSync("dpkg-deb", ["-x", debFile, staging], { encoding: "utf8" });
    if (unpack.status !== 0) {
      rmSync(staging, { recursive: true, force: true });
      throw failure(`dpkg-deb -x ${debFile} failed: ${unpack.stderr.trim()}`);
    }
    rmSync(unpacked, { recursive: true, force: true });
    renameSync(staging, unpacked);
  }
  const version = spawnSync(PEBBLE_BINARY, ["-version"], { encoding: "utf8" });
  if (version.status !== 0)
    throw failure(`${PEBBLE_BINARY} does not run here: ${version.error?.message ?? version.stderr.trim()}`);
  return PEBBLE_BINARY;
}
