// The system programs the suites run and the apt-get line that installs any that is missing (never a skip).
// @ts-check
import { spawnSync } from "node:child_process";

/**
 * Every system program the suites run, with the Debian/Ubuntu package that installs it: the key-value store suites'
 * redis and memcached, the proxy jobs' haproxy, openssl for their test CAs, dpkg-deb to unpack the pinned pebble
 * (./pebble.mjs: apt's is too old), chromium for the browser test, promtool for the metrics page. `npm test`
 * (scripts/test.mjs) installs the missing ones before the suites start.
 * @type {Readonly<Record<string, string>>}
 */
export const SYSTEM_PACKAGES = {
  "redis-server": "redis-server",
  "redis-sentinel": "redis-sentinel",
  "redis-cli": "redis-tools",
  memcached: "memcached",
  haproxy: "haproxy",
  "dpkg-deb": "dpkg",
  openssl: "openssl",
  chromium: "chromium",
  promtool: "prometheus",
  wrk: "wrk",
};

/**
 * @param {string[]} names
 * @returns {string[]} those of `names` not found on PATH
 */
export function missingBinaries(names) {
  return names.filter(
    (name) => spawnSync("sh", ["-c", 'command -v "$1"', "sh", name], { stdio: "ignore" }).status !== 0,
  );
}

/**
 * The apt-get line that installs these programs.
 * @param {string[]} names
 * @param {string} [prefix] before each apt-get, e.g. "sudo "
 */
export function aptInstallLine(names, prefix = "") {
  const packages = [...new Set(names.map((name) => SYSTEM_PACKAGES[name] ?? name))];
  return `${prefix}apt-get update && ${prefix}apt-get install -y ${packages.join(" ")}`;
}

/**
 * Fails clearly when a binary is not installed.
 * @param {string} name
 */
export function requireBinary(name) {
  if (missingBinaries([name]).length > 0) {
    throw new Error(
      `${name} is not installed; run: ${aptInstallLine([name])} (npm test installs it when it runs as root)`,
    );
  }
}
