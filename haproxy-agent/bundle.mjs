// What a push or a check sends the agent, read and checked: the bundle's files (names, text, haproxy.cfg present)
// against their digest, its version, and the push's id and time limit; and the refusal the agent answers.
import { createHash } from "node:crypto";
import { PUSH_ID } from "./pushes.mjs";

/**
 * What a bundle may contain: the configuration, the four maps, the crt-list (the https bind's certificates with the
 * names each is offered for), the fallback certificate and certificates.
 */
const FILE_PATTERN =
  /^(?:haproxy\.cfg|domain2(?:backend|redirect|prefix|cert)\.map|crt-list\.txt|fallback\.pem|certs\/[a-z0-9][a-z0-9._-]{0,250}\.pem)$/;
/**
 * Most files a bundle (a push or a check) may hold, each written to disk: far more than a generation ships (the fixed
 * files and one certificate per domain at most, under PROXY_MAX_INSTALLATION_DOMAINS, 20,000 by default; the
 * Worker's 128 MiB holds about 13,000 certificates at 10 KB each), and a bound on what one push makes the agent write.
 */
export const MAX_FILES = 50_000;

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
 * pushId: the push's id, whose outcome POST /v1/pushes/{id}/abandon tells; timeoutMs: how long the control plane
 * waits for the answer (a reload that could not end within it is not started).
 * @typedef {{ version: number, digest: string, onlyIfNewer: boolean, files: Record<string, string>, pushId?: string, timeoutMs?: number }} Bundle
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
  const count = Object.keys(files).length;
  if (count > MAX_FILES) throw new ApplyError(413, `files: the bundle holds ${count} files, more than ${MAX_FILES}`);
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
  const { version, onlyIfNewer, pushId, timeoutMs } = value;
  if (!Number.isSafeInteger(version) || /** @type {number} */ (version) < 1)
    throw new ApplyError(400, "version must be a positive integer");
  if (pushId !== undefined && (typeof pushId !== "string" || !PUSH_ID.test(pushId)))
    throw new ApplyError(400, "pushId must be 1 to 100 letters, digits, dots, dashes or underscores");
  if (timeoutMs !== undefined && (!Number.isSafeInteger(timeoutMs) || /** @type {number} */ (timeoutMs) < 1))
    throw new ApplyError(400, "timeoutMs must be a positive integer");
  return {
    version: /** @type {number} */ (version),
    onlyIfNewer: onlyIfNewer === true,
    ...parseFiles(value),
    ...(pushId === undefined ? {} : { pushId: /** @type {string} */ (pushId) }),
    ...(timeoutMs === undefined ? {} : { timeoutMs: /** @type {number} */ (timeoutMs) }),
  };
}

/**
 * Checks the shape of a bundle sent to be checked only (POST /v1/check): files and digest, no version.
 * @param {unknown} body
 */
export function parseCheck(body) {
  return parseFiles(jsonObject(body));
}
