// The agent's work on a load balancer: write a bundle beside the live configuration, check it with `haproxy -c`,
// swap it in and reload; put the previous files back when the reload fails. One bundle at a time.
import { execFile } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { mkdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";

/** What a bundle may contain: the configuration, the four maps, the fallback certificate and certificates. */
const FILE_PATTERN =
  /^(?:haproxy\.cfg|domain2(?:backend|redirect|prefix|cert)\.map|fallback\.pem|certs\/[a-z0-9][a-z0-9._-]{0,250}\.pem)$/;
/** The entries of the configuration directory a bundle replaces as a whole. */
const MANAGED = [
  "haproxy.cfg",
  "domain2backend.map",
  "domain2redirect.map",
  "domain2prefix.map",
  "domain2cert.map",
  "fallback.pem",
  "certs",
];
const STATE_FILE = ".agent-state.json";
const MAX_OUTPUT = 4000;

/** A refusal with the HTTP status the agent answers. */
export class ApplyError extends Error {
  /** @param {number} status @param {string} message @param {Record<string, unknown>} [extra] */
  constructor(status, message, extra = {}) {
    super(message);
    this.status = status;
    this.extra = extra;
  }
}

/**
 * The Worker's digest: sha256 over "<path>\n<length>\n<content>" for every path in order, joined by "\n" (length in
 * UTF-16 code units, as JavaScript counts them).
 * @param {Record<string, string>} files
 */
export function bundleDigest(files) {
  const text = Object.keys(files)
    .sort()
    .map((name) => `${name}\n${files[name].length}\n${files[name]}`)
    .join("\n");
  return `sha256:${createHash("sha256").update(text, "utf8").digest("hex")}`;
}

/**
 * @typedef {{ version: number, digest: string, onlyIfNewer: boolean, files: Record<string, string> }} Bundle
 * @typedef {{ version: number, digest: string, appliedAt: string }} AgentState
 */

/**
 * Checks the shape of a pushed bundle.
 * @param {unknown} body
 * @returns {Bundle}
 */
export function parseBundle(body) {
  const value = /** @type {Record<string, unknown>} */ (body);
  if (!value || typeof value !== "object") throw new ApplyError(400, "the body must be a JSON object");
  const { version, digest, onlyIfNewer, files } = value;
  if (!Number.isSafeInteger(version) || /** @type {number} */ (version) < 1)
    throw new ApplyError(400, "version must be a positive integer");
  if (typeof digest !== "string") throw new ApplyError(400, "digest must be a string");
  if (!files || typeof files !== "object" || Array.isArray(files)) throw new ApplyError(400, "files must be an object");
  for (const [name, content] of Object.entries(files)) {
    if (!FILE_PATTERN.test(name)) throw new ApplyError(400, `files: ${JSON.stringify(name)} is not a bundle file`);
    if (typeof content !== "string") throw new ApplyError(400, `files: ${name} must be text`);
  }
  const typedFiles = /** @type {Record<string, string>} */ (files);
  if (!("haproxy.cfg" in typedFiles)) throw new ApplyError(400, "files: haproxy.cfg is missing");
  if (bundleDigest(typedFiles) !== digest)
    throw new ApplyError(400, "the files do not match the digest (truncated upload?)");
  return { version: /** @type {number} */ (version), digest, onlyIfNewer: onlyIfNewer === true, files: typedFiles };
}

/** Where programs are looked up when the agent itself runs without PATH. */
const DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/**
 * The whole environment of `haproxy -c` and of the reload command: PATH, nothing else. HAProxy expands `${NAME}` in
 * the configuration from its environment, and its errors quote the expanded text, so anything more (the agent's
 * token first of all) could be read back by whoever writes configuration. haproxy needs no locale or time zone (it
 * reads /etc/localtime itself); a reload command that needs more sets it inline (`FOO=bar cmd`).
 * @param {Record<string, string | undefined>} source the agent's own environment
 * @returns {Record<string, string>}
 */
export function childEnvironment(source) {
  return { PATH: source.PATH || DEFAULT_PATH };
}

/**
 * Runs a program with the scrubbed environment; resolves with its exit code and output (never rejects for a
 * non-zero exit).
 * @param {string} file @param {string[]} args @param {number} timeoutMs @param {Record<string, string>} env
 * @returns {Promise<{ code: number, output: string }>}
 */
function run(file, args, timeoutMs, env) {
  return new Promise((resolve) => {
    execFile(file, args, { timeout: timeoutMs, maxBuffer: 10 * 1024 * 1024, env }, (error, stdout, stderr) => {
      const output = `${stderr}${stdout}`.trim();
      if (!error) return resolve({ code: 0, output });
      const code = typeof error.code === "number" ? error.code : -1;
      resolve({ code, output: output || error.message });
    });
  });
}

/** haproxy's output without its NOTICE lines (version banners), at most MAX_OUTPUT characters from the end. */
const tail = (/** @type {string} */ text) => {
  const useful = text
    .split("\n")
    .filter((line) => !line.startsWith("[NOTICE]"))
    .join("\n")
    .trim();
  return useful.length > MAX_OUTPUT ? `...${useful.slice(-MAX_OUTPUT)}` : useful;
};

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
 * The agent's state: the configuration directory, how to check and reload, and the version it runs.
 * @param {{ configDir: string, reloadCmd: string, haproxy: string, timeoutMs: number, log: (level: string, message: string, fields?: object) => void }} options
 */
export function createApplier(options) {
  const { configDir, reloadCmd, haproxy, timeoutMs, log } = options;
  const env = childEnvironment(process.env);
  /** @type {Promise<unknown>} */
  let queue = Promise.resolve();

  /** @returns {Promise<AgentState | undefined>} */
  async function readState() {
    try {
      return JSON.parse(await readFile(path.join(configDir, STATE_FILE), "utf8"));
    } catch {
      return undefined;
    }
  }

  /** @param {Bundle} bundle */
  async function applyNow(bundle) {
    const state = await readState();
    if (bundle.onlyIfNewer && state && bundle.version < state.version) {
      throw new ApplyError(409, `this load balancer runs version ${state.version}, newer than ${bundle.version}`, {
        version: state.version,
      });
    }
    if (state && state.digest === bundle.digest) {
      await writeFile(
        path.join(configDir, STATE_FILE),
        JSON.stringify({ ...state, version: Math.max(state.version, bundle.version) }),
      );
      log("info", "haproxy-agent: bundle unchanged, no reload", { version: bundle.version });
      return { outcome: "unchanged", version: bundle.version };
    }

    const staging = path.join(configDir, `.staging-${bundle.version}-${randomBytes(4).toString("hex")}`);
    await mkdir(path.join(staging, "certs"), { recursive: true, mode: 0o700 });
    try {
      for (const [name, content] of Object.entries(bundle.files)) {
        await writeFile(path.join(staging, name), content, { mode: name.endsWith(".pem") ? 0o600 : 0o644 });
      }
      const check = await run(haproxy, ["-c", "-f", path.join(staging, "haproxy.cfg")], timeoutMs, env);
      if (check.code !== 0) {
        log("error", "haproxy-agent: haproxy -c refused the bundle", {
          version: bundle.version,
          output: tail(check.output),
        });
        throw new ApplyError(422, `haproxy -c failed (exit ${check.code}): ${tail(check.output)}`);
      }

      // Swap: the live entries go to .previous, the staged ones take their place.
      const previous = path.join(configDir, ".previous");
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
        if (await exists(path.join(staging, entry)))
          await rename(path.join(staging, entry), path.join(configDir, entry));
      }

      const reload = await run("/bin/sh", ["-c", reloadCmd], timeoutMs, env);
      if (reload.code !== 0) {
        for (const entry of MANAGED) await rm(path.join(configDir, entry), { recursive: true, force: true });
        for (const entry of movedAway) await rename(path.join(previous, entry), path.join(configDir, entry));
        log("error", "haproxy-agent: reload failed, previous files restored", {
          version: bundle.version,
          output: tail(reload.output),
        });
        throw new ApplyError(
          500,
          `reload failed (exit ${reload.code}): ${tail(reload.output)}; the previous configuration was restored`,
        );
      }
      /** @type {AgentState} */
      const next = { version: bundle.version, digest: bundle.digest, appliedAt: new Date().toISOString() };
      await writeFile(path.join(configDir, STATE_FILE), JSON.stringify(next));
      log("info", "haproxy-agent: applied", { version: bundle.version, digest: bundle.digest });
      return { outcome: "applied", version: bundle.version };
    } finally {
      await rm(staging, { recursive: true, force: true });
    }
  }

  return {
    readState,
    /**
     * Applies bundles one after the other, in arrival order.
     * @param {Bundle} bundle
     * @returns {Promise<{ outcome: string, version: number }>}
     */
    apply(bundle) {
      const result = queue.then(() => applyNow(bundle));
      queue = result.catch(() => undefined);
      return result;
    },
  };
}
