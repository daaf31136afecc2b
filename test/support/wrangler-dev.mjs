// `wrangler dev` for the integration tests and the benchmarks (free ports, own state), and one-off wrangler commands.
// @ts-check
import { execFile, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import path from "node:path";
import { LOCAL_VARS } from "../../scripts/start/local-vars.mjs";
import { freePort, root, spawnGroup, tempDir } from "./processes.mjs";

const wrangler = path.join(root, "node_modules", "wrangler", "bin", "wrangler.js");

/**
 * The environment of every wrangler process: no metrics, no request to Cloudflare for `request.cf`, non-interactive.
 * Read from process.env at each start, so a caller sets (e.g.) NODE_EXTRA_CA_CERTS just before starting a server.
 * @returns {NodeJS.ProcessEnv}
 */
export function wranglerEnv() {
  return { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false", CI: "true" };
}

/**
 * Runs a wrangler command to completion (e.g. `d1 execute`), throwing with the tail of its output if it fails.
 * @param {string[]} args
 * @param {string} what
 * @param {string} [cwd] The project directory to run it in (default the project root).
 */
export function wranglerSync(args, what, cwd = root) {
  const result = spawnSync(process.execPath, [wrangler, ...args], {
    cwd,
    env: wranglerEnv(),
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
  });
  if (result.status !== 0) {
    throw new Error(`${what} failed:\n${result.stdout.slice(-2000)}\n${result.stderr.slice(-2000)}`);
  }
}

/**
 * Runs a wrangler command to completion as wranglerSync does, without blocking the event loop: a test that talks to a
 * running server over keep-alive connections must go on reading them, or a connection the server closed meanwhile
 * is taken for the next request ("other side closed").
 * @param {string[]} args
 * @param {string} what
 * @param {string} [cwd] The project directory to run it in (default the project root).
 * @returns {Promise<void>}
 */
export function wranglerRun(args, what, cwd = root) {
  const options = { cwd, env: wranglerEnv(), encoding: /** @type {const} */ ("utf8"), maxBuffer: 64 * 1024 * 1024 };
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [wrangler, ...args], options, (error, stdout, stderr) => {
      if (error) reject(new Error(`${what} failed:\n${stdout.slice(-2000)}\n${stderr.slice(-2000)}`));
      else resolve();
    });
  });
}

/**
 * @typedef {object} DevServer
 * @property {string} url The origin, e.g. http://127.0.0.1:8787.
 * @property {number} port
 * @property {string} persistTo The persisted state directory.
 * @property {number} pgid The process group (wrangler and its workerd processes, e.g. to read their CPU time).
 * @property {() => Promise<void>} stop Ends the whole process group and removes the state directory made here.
 */

/**
 * @typedef {object} DevOptions
 * @property {string} [name] Names the server in error messages.
 * @property {string} [configPath] A wrangler config other than the project's wrangler.toml.
 * @property {string} [readyPath] Answers 2xx once the Worker is up (default /test/ping).
 * @property {string[]} [extraArgs] More `wrangler dev` arguments.
 * @property {string} [persistTo] A state directory the caller prepared (e.g. shared by two servers; left in place)
 *   instead of a fresh temporary one.
 * @property {boolean} [migrate] Apply the D1 migrations to the state (default true).
 * @property {boolean} [inheritStderr] Show wrangler's errors on this process's stderr instead of collecting them.
 * @property {string} [projectDir] Another checkout of this project to run (e.g. a git worktree of an older commit,
 *   for a benchmark's "before" figures) instead of the project root; its config bundling and migrations are its own.
 */

/**
 * Starts `wrangler dev` (own ports incl. the inspector's, own persisted state with the D1 migrations applied, the
 * given vars, logging at error level, `--test-scheduled`) in its own process group and waits until `readyPath`
 * answers.
 * @param {Record<string, string>} [vars]
 * @param {DevOptions} [options]
 * @returns {Promise<DevServer>}
 */
export async function startWranglerDev(vars = {}, options = {}) {
  const { name = "wrangler dev", configPath, readyPath = "/test/ping", extraArgs = [], migrate = true } = options;
  const projectDir = options.projectDir ?? root;
  const made = options.persistTo ? undefined : tempDir("wrangler-state-");
  const state = options.persistTo ?? /** @type {{ dir: string }} */ (made).dir;
  const removeState = () => made?.remove();
  const configArgs = configPath ? ["--config", configPath] : [];
  const bundled = spawnSync(process.execPath, [path.join(projectDir, "scripts", "bundle-ratelimit-config.mjs")], {
    cwd: projectDir,
    env: wranglerEnv(),
    encoding: "utf8",
  });
  // Refused, the Worker would serve the last bundle: a run against it would test rules nobody deploys.
  if (bundled.status !== 0) {
    removeState();
    throw new Error(`${name}: the rate limit configuration is refused:\n${bundled.stderr || bundled.stdout}`);
  }
  try {
    if (migrate) applyMigrations({ projectDir, configPath, state, name });
  } catch (error) {
    removeState();
    throw error;
  }
  // A port freePort() found free may still be taken before wrangler binds it (by a server another process of the run
  // starts on the same port): then wrangler exits at once, and a new pair of ports is tried.
  for (let attempt = 1; ; attempt++) {
    const started = await spawnWranglerDev({
      projectDir,
      state,
      removeState,
      configArgs,
      vars,
      extraArgs,
      readyPath,
      options,
    });
    if (started.ok) return started.server;
    if (!started.portTaken || attempt === 3) {
      removeState();
      throw new Error(`${name}: wrangler dev did not answer ${readyPath}${started.exit}:\n${started.output}`);
    }
  }
}

/**
 * Applies the D1 migrations to a server's state. `wrangler d1 migrations apply` takes about 16 s here, so a fresh
 * (empty) state is a copy of a template made once per set of migrations, config and installed wrangler (it lives in
 * node_modules/.cache, which `npm ci` empties); a state that already holds data is migrated in place, as before.
 * @param {{ projectDir: string, configPath: string | undefined, state: string, name: string }} how
 */
export function applyMigrations({ projectDir, configPath, state, name }) {
  const configArgs = configPath ? ["--config", configPath] : [];
  /** @param {string} into */
  const migrate = (into) =>
    wranglerSync(
      ["d1", "migrations", "apply", "DB", "--local", "--persist-to", into, ...configArgs],
      `${name}: migrations`,
      projectDir,
    );
  if (existsSync(state) && readdirSync(state).length > 0) return migrate(state);
  const template = path.join(root, "node_modules", ".cache", "migrated-state", migrationsKey(projectDir, configPath));
  if (!existsSync(template)) {
    mkdirSync(path.dirname(template), { recursive: true });
    const building = mkdtempSync(`${template}.building-`);
    try {
      migrate(building);
      renameSync(building, template);
    } catch (error) {
      rmSync(building, { recursive: true, force: true });
      // Another process of the run made the same template meanwhile: the rename finds it in place.
      if (!existsSync(template)) throw error;
    }
  }
  cpSync(template, state, { recursive: true });
}

/**
 * What a migrated state depends on: every migration (the .sql files wrangler applies), the wrangler config (its D1
 * binding names the database file) and wrangler's version.
 * @param {string} projectDir
 * @param {string | undefined} configPath
 */
function migrationsKey(projectDir, configPath) {
  const hash = createHash("sha256");
  const migrations = path.join(projectDir, "migrations");
  for (const file of readdirSync(migrations)
    .filter((name) => name.endsWith(".sql"))
    .sort()) {
    hash.update(file).update(readFileSync(path.join(migrations, file)));
  }
  hash.update(readFileSync(path.resolve(projectDir, configPath ?? "wrangler.toml")));
  hash.update(readFileSync(path.join(root, "node_modules", "wrangler", "package.json")));
  return hash.digest("hex").slice(0, 32);
}

/** What wrangler dev prints when its port (or its inspector's) is in use. */
const PORT_TAKEN = /Address already in use/;

/**
 * One wrangler dev on fresh ports, waited for until `readyPath` answers (60 s at most).
 * @param {{ projectDir: string, state: string, removeState: () => void, configArgs: string[],
 *   vars: Record<string, string>, extraArgs: string[], readyPath: string, options: { inheritStderr?: boolean } }} how
 * @returns {Promise<{ ok: true, server: { url: string, port: number, persistTo: string, pgid: number, stop: () => Promise<void> } } | { ok: false, portTaken: boolean, exit: string, output: string }>}
 */
async function spawnWranglerDev({ projectDir, state, removeState, configArgs, vars, extraArgs, readyPath, options }) {
  const port = await freePort();
  const inspectorPort = await freePort();
  // The local values over wrangler.toml's deploy ones, as npm start sets them; the caller's own vars win.
  const varArgs = Object.entries({ ...LOCAL_VARS, ...vars }).flatMap(([key, value]) => ["--var", `${key}:${value}`]);
  const { child, pgid, stop, output } = spawnGroup(
    process.execPath,
    [
      wrangler,
      "dev",
      ...configArgs,
      "--ip",
      "127.0.0.1",
      "--port",
      String(port),
      "--inspector-port",
      String(inspectorPort),
      "--persist-to",
      state,
      "--log-level",
      "error",
      "--test-scheduled",
      ...varArgs,
      ...extraArgs,
    ],
    // The state outlives an attempt that found its port taken (the next one uses it), not the server.
    {
      cwd: projectDir,
      env: wranglerEnv(),
      inheritStderr: options.inheritStderr,
      graceMs: 5000,
      cleanup: () => retrying || removeState(),
    },
  );
  let retrying = false;
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || PORT_TAKEN.test(output())) break;
    try {
      // Bounded: whatever holds a taken port may accept the connection and never answer.
      const response = await fetch(url + readyPath, { signal: AbortSignal.timeout(5000) });
      if (response.ok) return { ok: true, server: { url, port, persistTo: state, pgid, stop } };
    } catch {}
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  const exit = child.exitCode === null ? "" : ` (exited with ${child.exitCode})`;
  const text = output();
  const portTaken = PORT_TAKEN.test(text);
  retrying = portTaken;
  await stop();
  return { ok: false, portTaken, exit, output: text };
}

/** What wrangler dev's proxy answers a request other than GET or HEAD whose connection to the Worker failed. */
export const PROXY_LOST_REQUEST =
  "Your worker restarted mid-request. Please try sending the request again. " +
  "Only GET or HEAD requests are retried automatically.";

/**
 * Whether an answer is wrangler dev's proxy saying it lost the request, not the Worker's. Its ProxyWorker means that
 * answer for a Worker that was replaced mid-request, but it tells that case by comparing the request's whole URL with
 * the Worker's origin, which differ for every path but "/": so any failed connection to the Worker (the race of
 * workers-sdk issue 14641, see refreshProxyConnection) gets it, and a GET in that case is held until the next reload.
 * @param {number} status
 * @param {string} text
 */
export const lostByProxy = (status, text) => status === 503 && text === PROXY_LOST_REQUEST;

/**
 * How long one GET of refreshProxyConnection may take (it answers in milliseconds), and how many are tried; the burst
 * suites' refreshing GETs (ratelimit-kept-alive.ts) keep the same bounds.
 */
export const REFRESH_TRY_MS = 5000;
export const REFRESH_TRIES = 3;

/**
 * Gives wrangler dev's proxy a fresh connection to the Worker before a non-GET request that follows an idle spell.
 * workerd closes an idle connection after 5 s, and a POST or PUT that races with that close is answered 503 "Your
 * worker restarted mid-request" though nothing restarted (workers-sdk issue 14641); the proxy retries only GET and
 * HEAD, so one GET first takes that hit harmlessly.
 *
 * Each GET is bounded and, unanswered, sent again: after wrangler dev's workerd processes were paused (SIGSTOP) and
 * resumed, the first request sent to the proxy went unanswered in 8 of 36 runs here, over a kept-alive connection
 * or a new one alike, while the next was answered in milliseconds. The Worker's own workerd answered a first request
 * sent straight to it in 8 of 8 runs: the request is lost in the proxy, a part of wrangler dev only. Its ProxyWorker
 * holds a GET whose connection to the Worker failed until the Worker is next reloaded, which here never comes (see
 * lostByProxy).
 * @param {{ url: string }} server
 * @returns {Promise<void>}
 */
export async function refreshProxyConnection(server) {
  const url = `${server.url}/test/ping`;
  for (let attempt = 1; ; attempt++) {
    try {
      await (await fetch(url, { signal: AbortSignal.timeout(REFRESH_TRY_MS) })).arrayBuffer();
      return;
    } catch (error) {
      if (attempt === REFRESH_TRIES) {
        throw new Error(`${url}: no answer in ${REFRESH_TRIES} tries of ${REFRESH_TRY_MS} ms`, { cause: error });
      }
    }
  }
}

/** How long a GET of getWithRetry may go unanswered: the Worker answers the suites' GETs in well under a second. */
export const GET_TRY_MS = 10_000;

/**
 * A GET to wrangler dev's Worker, sent once more when no answer came within GET_TRY_MS: the proxy holds a GET that
 * meets the race of refreshProxyConnection until the Worker's next reload, so an unbounded one would hold its test to
 * the test's time-out. Only a time-out is retried, and the second try is bounded too. The bound also covers reading
 * the body, which callers do at once.
 * @param {string} url
 * @param {RequestInit} [init]
 * @returns {Promise<Response>}
 */
export async function getWithRetry(url, init = {}) {
  const once = () => fetch(url, { ...init, method: "GET", signal: AbortSignal.timeout(GET_TRY_MS) });
  try {
    return await once();
  } catch (error) {
    if (!(error instanceof Error && error.name === "TimeoutError")) throw error;
    return once();
  }
}

/**
 * The workerd processes of a server's process group: the same ids before and after a run show that the runtime did not
 * restart during it (a crash restarts workerd as a new process).
 * @param {{ pgid: number }} server
 * @returns {string[]}
 */
export function workerdProcesses(server) {
  const found = [];
  for (const pid of readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
    let stat;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    } catch {
      continue; // gone meanwhile
    }
    // pid (comm) state ppid pgrp ...: comm may hold spaces, so the fields after it are read from its closing ")".
    const comm = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
    const pgrp = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2]);
    if (comm === "workerd" && pgrp === server.pgid) found.push(pid);
  }
  return found.sort();
}
