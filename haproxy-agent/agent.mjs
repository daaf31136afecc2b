#!/usr/bin/env node
// `npm run haproxy-agent -- --config-dir DIR --reload-cmd CMD`: the control plane's agent on a load balancer host.
// PUT /v1/config (Authorization: Bearer $HAPROXY_AGENT_TOKEN) takes a bundle from /admin/gensynchaprx or a slave sync,
// writes it beside the live configuration in DIR, runs `haproxy -c`, swaps it in and runs CMD (the reload).
// POST /v1/check (same token) runs `haproxy -c` on a bundle without applying it; GET /v1/status (same token, read
// only) tells the version it runs and the digest of the files on disk; GET /v1/pushes/{id} tells what became of a
// push and POST /v1/pushes/{id}/abandon (same token) also stops it if its reload has not started; GET /healthz
// answers "ok". A push whose client goes away before its reload starts is dropped. Options: see usage.
import { readFileSync } from "node:fs";
import { createServer as createHttpServer } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import { timingSafeEqual } from "node:crypto";
import { parseArgs } from "node:util";
import { ApplyError, createApplier, parseBundle, parseCheck } from "./apply.mjs";
import { PUSH_ID } from "./pushes.mjs";

const usage = `usage: npm run haproxy-agent -- --config-dir DIR --reload-cmd CMD [options]
  --config-dir DIR     directory of haproxy.cfg, the maps, crt-list.txt and certs/ (haproxy -f DIR/haproxy.cfg)
  --reload-cmd CMD     shell command that reloads haproxy, e.g. "systemctl reload haproxy"
  --host ADDRESS       bind address (default 127.0.0.1)
  --port PORT          port (default 9400; 0 takes a free one, logged)
  --haproxy PATH       haproxy binary used for "haproxy -c" (default haproxy)
  --timeout SECONDS    limit of the check and of the reload, each (default 25: the control plane's
                       HAPROXY_AGENT_TIMEOUT, 60 s by default, must exceed twice this)
  --max-body MB        largest bundle accepted (default 256; at most 50000 files: 413 past either)
  --request-timeout SECONDS  longest a request may take to arrive, body included (default 300: the largest bundle at
                       7 Mbit/s); 408 past it. Keep it above HAPROXY_AGENT_TIMEOUT (60 s by default), the control
                       plane's limit of a whole push, upload included
  --tls-cert FILE, --tls-key FILE   serve HTTPS with this PEM certificate and key
  -h, --help           this help
SIGTERM or SIGINT: no new push is taken; a push whose reload has started ends (within --timeout), then the agent exits
environment:
  HAPROXY_AGENT_TOKEN  (required) the bearer token the control plane sends
  PATH                 where haproxy and CMD are found (default, when unset or empty:
                       /usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin)
haproxy and CMD run with PATH as their only variable (never the token): HAProxy would expand any other one
written as \${NAME} in a pushed configuration; a reload command that needs more sets it inline (VAR=value cmd)`;

/** @param {string} level @param {string} message @param {object} [fields] */
function log(level, message, fields = {}) {
  const line = JSON.stringify({ level, "@message": message, "@timestamp": new Date().toISOString(), ...fields });
  if (level === "info") console.log(line);
  else console.error(line);
}

/** @param {string} message @returns {never} */
function fail(message) {
  console.error(`haproxy-agent: ${message}\n${usage}`);
  process.exit(2);
}

const options = /** @type {const} */ ({
  "config-dir": { type: "string" },
  "reload-cmd": { type: "string" },
  host: { type: "string", default: "127.0.0.1" },
  port: { type: "string", default: "9400" },
  haproxy: { type: "string", default: "haproxy" },
  timeout: { type: "string", default: "25" },
  "max-body": { type: "string", default: "256" },
  "request-timeout": { type: "string", default: "300" },
  "tls-cert": { type: "string" },
  "tls-key": { type: "string" },
  help: { type: "boolean", short: "h", default: false },
});

function readArgs() {
  try {
    return parseArgs({ options }).values;
  } catch (error) {
    return fail(error instanceof Error ? error.message : String(error));
  }
}
const args = readArgs();
if (args.help) {
  console.log(usage);
  process.exit(0);
}
const configDir = args["config-dir"];
const reloadCmd = args["reload-cmd"];
if (!configDir) fail("--config-dir is required");
if (!reloadCmd) fail("--reload-cmd is required");
const port = Number(args.port);
const timeoutSeconds = Number(args.timeout);
const maxBody = Number(args["max-body"]) * 1024 * 1024;
const requestTimeoutMs = Number(args["request-timeout"]) * 1000;
if (!Number.isInteger(port) || port < 0 || port > 65535) fail("--port must be 0 to 65535");
if (!(timeoutSeconds > 0)) fail("--timeout must be a positive number of seconds");
if (!(maxBody > 0)) fail("--max-body must be a positive number of megabytes");
if (!(requestTimeoutMs > 0)) fail("--request-timeout must be a positive number of seconds");
if (Boolean(args["tls-cert"]) !== Boolean(args["tls-key"])) fail("--tls-cert and --tls-key go together");
const token = process.env.HAPROXY_AGENT_TOKEN ?? "";
if (!token) fail("HAPROXY_AGENT_TOKEN is not set");
const expected = Buffer.from(`Bearer ${token}`);

const applier = createApplier({
  configDir: /** @type {string} */ (configDir),
  reloadCmd: /** @type {string} */ (reloadCmd),
  haproxy: /** @type {string} */ (args.haproxy),
  timeoutMs: timeoutSeconds * 1000,
  log,
});

await applier.start();

/** Set on SIGTERM or SIGINT: each answer then closes its connection, so that the server can close. */
let stopping = false;

/** @param {string | undefined} header */
function authorized(header) {
  const given = Buffer.from(header ?? "");
  // Compare equal lengths only, in constant time; the length of the token is not a secret worth hiding.
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/**
 * @param {import("node:http").ServerResponse} response @param {number} status @param {unknown} body
 */
function reply(response, status, body) {
  if (stopping) response.setHeader("Connection", "close");
  const text = JSON.stringify(body);
  response.writeHead(status, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(text) });
  response.end(text);
}

/** @param {import("node:http").IncomingMessage} request @returns {Promise<string>} */
function readBody(request) {
  return new Promise((resolve, reject) => {
    /** @type {Buffer[]} */
    const chunks = [];
    let size = 0;
    request.on("data", (chunk) => {
      const before = size;
      size += chunk.length;
      if (size <= maxBody) return chunks.push(chunk);
      // Past the bound the 413 is answered at once and the rest read and dropped (within --request-timeout): a client
      // still sending would see its upload reset, not the answer, if the connection were destroyed or closed under it.
      chunks.length = 0;
      if (before <= maxBody) reject(new ApplyError(413, `the bundle is larger than ${args["max-body"]} MB`));
    });
    request.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    request.on("error", reject);
  });
}

/** @param {import("node:http").IncomingMessage} request @returns {Promise<unknown>} */
async function readJson(request) {
  const text = await readBody(request);
  try {
    return JSON.parse(text);
  } catch {
    throw new ApplyError(400, "the body is not JSON");
  }
}

const PUSH_PATH = /^\/v1\/pushes\/([^/]+?)(\/abandon)?$/;

/** A path segment decoded, or null when a percent-escape in it is malformed (`%ZZ`): no id, a 400. */
function decodeSegment(/** @type {string} */ segment) {
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}

/**
 * PUT /v1/config: the push stops (410) if its client goes away before the reload starts.
 * @param {import("node:http").IncomingMessage} request @param {import("node:http").ServerResponse} response
 */
async function handlePush(request, response) {
  // The control plane's time limit runs from when it sent the push, so the upload counts too.
  const receivedAt = Date.now();
  const gone = new AbortController();
  response.on("close", () => {
    if (!response.writableFinished) gone.abort();
  });
  const bundle = parseBundle(await readJson(request));
  return reply(response, 200, await applier.apply(bundle, gone.signal, receivedAt));
}

/**
 * GET /v1/pushes/{id} reads a push's outcome (404 when the id is unknown); POST .../abandon tells it and stops the
 * push for good unless its reload has started.
 * @param {RegExpExecArray} match @param {import("node:http").ServerResponse} response
 */
async function pushOutcome(match, response) {
  const id = decodeSegment(match[1]);
  if (id === null || !PUSH_ID.test(id))
    throw new ApplyError(400, "the push id must be 1 to 100 letters, digits, dots, dashes or underscores");
  // Until no commit is under way, one started meanwhile included; the abandon then looks and acts in that same step,
  // so that a push is either stopped before its commit or answered with its outcome, never both.
  let commit;
  do await (commit = applier.committed());
  while (commit !== applier.committed());
  if (match[2]) return reply(response, 200, await applier.pushes.abandon(id));
  const known = applier.pushes.get(id);
  return known ? reply(response, 200, known) : reply(response, 404, { error: "unknown push id" });
}

/** @type {import("node:http").RequestListener} */
async function handle(request, response) {
  let url;
  try {
    url = new URL(request.url ?? "/", "http://agent");
  } catch {
    // Thrown here, the rejection would go unhandled and end the process: one request line from anyone could do it.
    return reply(response, 400, { error: "the request target is not a path" });
  }
  try {
    if (url.pathname === "/healthz" && request.method === "GET") {
      if (stopping) response.setHeader("Connection", "close");
      response.writeHead(200, { "Content-Type": "text/plain" });
      response.end("ok");
      return;
    }
    const routes = { "/v1/config": "PUT", "/v1/check": "POST", "/v1/status": "GET" };
    const pushPath = PUSH_PATH.exec(url.pathname);
    const method = pushPath
      ? pushPath[2]
        ? "POST"
        : "GET"
      : routes[/** @type {keyof typeof routes} */ (url.pathname)];
    if (!method) return reply(response, 404, { error: "not found" });
    if (!authorized(request.headers.authorization))
      return reply(response, 401, { error: "a valid bearer token is required" });
    if (request.method !== method) return reply(response, 405, { error: "method not allowed" });
    if (pushPath) return await pushOutcome(pushPath, response);
    if (url.pathname === "/v1/status") return reply(response, 200, await applier.status());
    if (url.pathname === "/v1/check")
      return reply(response, 200, await applier.check(parseCheck(await readJson(request)).files));
    return await handlePush(request, response);
  } catch (error) {
    if (error instanceof ApplyError) return reply(response, error.status, { error: error.message, ...error.extra });
    log("error", "haproxy-agent: unexpected error", { error: error instanceof Error ? error.stack : String(error) });
    return reply(response, 500, { error: "unexpected error (see the agent's log)" });
  }
}

/**
 * A request, body included, arrives within --request-timeout or is answered 408 and its connection closed: a client
 * that trickles a body holds no connection for good. Its headers, small, within a minute (or that time if shorter);
 * the time the answer takes (a push's check and reload) does not count. The limits are looked at every quarter of
 * the timeout (at most 30 s, Node's default): a request is cut that much later at most.
 */
const limits = {
  requestTimeout: requestTimeoutMs,
  headersTimeout: Math.min(60_000, requestTimeoutMs),
  connectionsCheckingInterval: Math.min(30_000, requestTimeoutMs / 4),
};
const server = args["tls-cert"]
  ? createHttpsServer(
      {
        cert: readFileSync(/** @type {string} */ (args["tls-cert"])),
        key: readFileSync(/** @type {string} */ (args["tls-key"])),
        ...limits,
      },
      handle,
    )
  : createHttpServer(limits, handle);
server.listen(port, args.host, () => {
  const address = /** @type {import("node:net").AddressInfo} */ (server.address());
  log("info", "haproxy-agent: listening", {
    host: address.address,
    port: address.port,
    configDir,
    tls: Boolean(args["tls-cert"]),
  });
});

/**
 * SIGTERM or SIGINT: no new connection or push is taken (a push still arriving stops with 410), a push whose reload
 * has started ends and is recorded, then the agent exits: a stop never leaves a push reloading for good. The reload's
 * own time limit bounds the wait; past it and a margin for the answers, the agent exits anyway (1).
 * @param {string} signal
 */
async function stop(signal) {
  if (stopping) return;
  stopping = true;
  // Closed before the log says so: whoever reads the line finds the port closed.
  const closed = new Promise((resolve) => server.close(resolve));
  log("info", `haproxy-agent: ${signal} received, stopping once the push under way has ended`);
  const giveUp = () => {
    log("error", "haproxy-agent: stopped before the push under way had ended");
    process.exit(1);
  };
  setTimeout(giveUp, timeoutSeconds * 1000 + 10_000).unref();
  await Promise.all([applier.stop(), closed]);
  log("info", "haproxy-agent: stopped");
  process.exit(0);
}

for (const signal of ["SIGTERM", "SIGINT"]) process.on(signal, () => void stop(signal));
