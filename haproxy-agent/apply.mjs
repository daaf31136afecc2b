// The agent's work on a load balancer: write a bundle beside the live configuration, check it with `haproxy -c`,
// swap it in and reload; put the previous files back when the reload fails. One bundle at a time. Also: check a
// bundle without applying it, and tell what is on disk (its digest recomputed, so that hand edits show).
import { execFile } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";

/**
 * What a bundle may contain: the configuration, the four maps, the crt-list (the https bind's certificates with the
 * names each is offered for), the fallback certificate and certificates.
 */
const FILE_PATTERN =
  /^(?:haproxy\.cfg|domain2(?:backend|redirect|prefix|cert)\.map|crt-list\.txt|fallback\.pem|certs\/[a-z0-9][a-z0-9._-]{0,250}\.pem)$/;
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
const STATE_FILE = ".agent-state.json";
/** The last failed apply, until a later one succeeds. */
const ERROR_FILE = ".agent-error.json";
const MAX_OUTPUT = 4000;
/** Most ALERT lines a refusal lists, and the longest kept of each: the control plane reads the first ones only. */
const MAX_ALERTS = 64;
const MAX_ALERT_LENGTH = 400;

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
 * @typedef {{ at: string, version: number, message: string }} AgentError
 */

/**
 * Checks the files of a pushed bundle (names, text, haproxy.cfg present) against their digest.
 * @param {Record<string, unknown>} value
 * @returns {{ digest: string, files: Record<string, string> }}
 */
function parseFiles(value) {
  const { digest, files } = value;
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
  return { digest, files: typedFiles };
}

/** @param {unknown} body @returns {Record<string, unknown>} */
function jsonObject(body) {
  if (!body || typeof body !== "object" || Array.isArray(body))
    throw new ApplyError(400, "the body must be a JSON object");
  return /** @type {Record<string, unknown>} */ (body);
}

/**
 * Checks the shape of a pushed bundle.
 * @param {unknown} body
 * @returns {Bundle}
 */
export function parseBundle(body) {
  const value = jsonObject(body);
  const { version, onlyIfNewer } = value;
  if (!Number.isSafeInteger(version) || /** @type {number} */ (version) < 1)
    throw new ApplyError(400, "version must be a positive integer");
  return { version: /** @type {number} */ (version), onlyIfNewer: onlyIfNewer === true, ...parseFiles(value) };
}

/**
 * Checks the shape of a bundle sent to be checked only (POST /v1/check): files and digest, no version.
 * @param {unknown} body
 */
export function parseCheck(body) {
  return parseFiles(jsonObject(body));
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

/**
 * The ALERT lines of haproxy's output without their "[ALERT] (pid) : " prefix, in order and bounded: with them the
 * control plane finds the backend each refusal comes from ("config : parsing [haproxy.cfg:42] : ...", "config :
 * backend 'x' : ..."), however long the output, whose tail alone is kept in the error text.
 * @param {string} text
 * @returns {string[]}
 */
export function alertLines(text) {
  const alerts = [];
  for (const line of text.split("\n")) {
    const match = /^\[ALERT\]\s*(?:\(\d+\)\s*)?:\s?(.*)$/.exec(line);
    if (!match) continue;
    alerts.push(match[1].slice(0, MAX_ALERT_LENGTH));
    if (alerts.length === MAX_ALERTS) break;
  }
  return alerts;
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
 * The agent's state: the configuration directory, how to check and reload, and the version it runs.
 * @param {{ configDir: string, reloadCmd: string, haproxy: string, timeoutMs: number, log: (level: string, message: string, fields?: object) => void }} options
 */
export function createApplier(options) {
  const { configDir, reloadCmd, haproxy, timeoutMs, log } = options;
  const env = childEnvironment(process.env);
  /** @type {Promise<unknown>} */
  let queue = Promise.resolve();

  /** @param {string} file @returns {Promise<any>} */
  async function readJson(file) {
    try {
      return JSON.parse(await readFile(path.join(configDir, file), "utf8"));
    } catch {
      return undefined;
    }
  }

  /** @returns {Promise<AgentState | undefined>} */
  const readState = () => readJson(STATE_FILE);

  /**
   * The managed files as they are on disk now, by bundle path (what a bundle would have to hold to equal them).
   * @returns {Promise<Record<string, string>>}
   */
  async function readLiveFiles() {
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

  /** The digest of the files on disk, or null when there is no haproxy.cfg (nothing was ever applied). */
  async function liveDigest() {
    const files = await readLiveFiles();
    return "haproxy.cfg" in files ? bundleDigest(files) : null;
  }

  /**
   * What GET /v1/status answers: the version last applied and its digest as recorded then, the digest of the files
   * on disk now (they differ when someone edited them by hand), and the last failed apply since the last success.
   */
  async function status() {
    const [state, error, diskDigest] = await Promise.all([readState(), readJson(ERROR_FILE), liveDigest()]);
    return {
      version: state?.version ?? null,
      digest: state?.digest ?? null,
      appliedAt: state?.appliedAt ?? null,
      diskDigest,
      lastError: /** @type {AgentError | undefined} */ (error) ?? null,
    };
  }

  /**
   * Writes the bundle's files into `dir` (created; the caller removes it) and runs `haproxy -c` on them: valid, or
   * the check's output (its tail), its ALERT lines and the error that quotes it.
   * @param {string} dir @param {Record<string, string>} files
   * @returns {Promise<{ valid: true } | { valid: false, output: string, error: string, alerts: string[] }>}
   */
  async function stageAndCheck(dir, files) {
    await mkdir(path.join(dir, "certs"), { recursive: true, mode: 0o700 });
    for (const [name, content] of Object.entries(files)) {
      await writeFile(path.join(dir, name), content, { mode: name.endsWith(".pem") ? 0o600 : 0o644 });
    }
    const result = await run(haproxy, ["-c", "-f", path.join(dir, "haproxy.cfg")], timeoutMs, env);
    if (result.code === 0) return { valid: true };
    const output = tail(result.output);
    const alerts = alertLines(result.output);
    return { valid: false, output, error: `haproxy -c failed (exit ${result.code}): ${output}`, alerts };
  }

  /**
   * `haproxy -c` on a bundle in a scratch directory, nothing applied: valid, or the check's output and ALERT lines.
   * @param {Record<string, string>} files
   * @returns {Promise<{ valid: true } | { valid: false, error: string, alerts: string[] }>}
   */
  async function check(files) {
    const scratch = path.join(configDir, `.check-${randomBytes(4).toString("hex")}`);
    try {
      const result = await stageAndCheck(scratch, files);
      return result.valid ? result : { valid: false, error: result.error, alerts: result.alerts };
    } finally {
      await rm(scratch, { recursive: true, force: true });
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
    // Compared with what is on disk, not with what was recorded: a push repairs files edited by hand.
    if (state && (await liveDigest()) === bundle.digest) {
      await writeFile(
        path.join(configDir, STATE_FILE),
        JSON.stringify({ ...state, digest: bundle.digest, version: Math.max(state.version, bundle.version) }),
      );
      log("info", "haproxy-agent: bundle unchanged, no reload", { version: bundle.version });
      return { outcome: "unchanged", version: bundle.version };
    }

    const staging = path.join(configDir, `.staging-${bundle.version}-${randomBytes(4).toString("hex")}`);
    try {
      const checked = await stageAndCheck(staging, bundle.files);
      if (!checked.valid) {
        log("error", "haproxy-agent: haproxy -c refused the bundle", {
          version: bundle.version,
          output: checked.output,
        });
        throw new ApplyError(422, checked.error, { alerts: checked.alerts });
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

  /**
   * Remembers a failed apply for GET /v1/status; a later success forgets it. A stale version (409) is no failure.
   * @param {Bundle} bundle @param {unknown} error
   */
  async function recordFailure(bundle, error) {
    if (error instanceof ApplyError && error.status === 409) return;
    const message = error instanceof ApplyError ? error.message : "unexpected error (see the agent's log)";
    /** @type {AgentError} */
    const record = { at: new Date().toISOString(), version: bundle.version, message };
    await writeFile(path.join(configDir, ERROR_FILE), JSON.stringify(record)).catch(() => undefined);
  }

  return {
    readState,
    status,
    check,
    /**
     * Applies bundles one after the other, in arrival order.
     * @param {Bundle} bundle
     * @returns {Promise<{ outcome: string, version: number }>}
     */
    apply(bundle) {
      const result = queue.then(async () => {
        try {
          const outcome = await applyNow(bundle);
          await rm(path.join(configDir, ERROR_FILE), { force: true });
          return outcome;
        } catch (error) {
          await recordFailure(bundle, error);
          throw error;
        }
      });
      queue = result.catch(() => undefined);
      return result;
    },
  };
}
