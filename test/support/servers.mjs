// Starts the real local servers the tests and the benchmarks need (redis-server, memcached, `wrangler dev`, ...).
// @ts-check
// Plain ESM with JSDoc types so the .mjs benchmarks and the TypeScript tests share it. Every server runs in its own
// process group on free loopback ports and is stopped by group; stopAll() stops whatever is still running and removes
// every temporary directory made here. A missing binary fails with the apt-get line that installs it (never a skip).
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect, createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { LOCAL_VARS } from "../../scripts/start/local-vars.mjs";

/** The project root. */
export const root = path.join(import.meta.dirname, "..", "..");
const wrangler = path.join(root, "node_modules", "wrangler", "bin", "wrangler.js");

/**
 * The environment of every wrangler process: no metrics, no request to Cloudflare for `request.cf`, non-interactive.
 * Read from process.env at each start, so a caller sets (e.g.) NODE_EXTRA_CA_CERTS just before starting a server.
 * @returns {NodeJS.ProcessEnv}
 */
export function wranglerEnv() {
  return { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false", CI: "true" };
}

/** @typedef {{ stop(): Promise<void> }} Stoppable */

/** Servers still running, stopped by stopAll() and (by SIGKILL) when the process exits. */
/** @type {Set<Stoppable & { pgid: number }>} */
const running = new Set();
/** @type {Set<string>} */
const tempDirs = new Set();

process.on("exit", () => {
  for (const server of running) killGroup(server.pgid, "SIGKILL");
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});

/** Stops every server still running and removes every temporary directory made here. */
export async function stopAll() {
  await Promise.all([...running].map((server) => server.stop()));
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
  tempDirs.clear();
}

/** For a script (the benchmarks): on SIGINT or SIGTERM, stop everything, then exit. */
export function stopAllOnSignals() {
  process.on("SIGINT", () => stopAll().then(() => process.exit(130)));
  process.on("SIGTERM", () => stopAll().then(() => process.exit(143)));
}

/** @returns {Promise<number>} a loopback port free right now */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = /** @type {import("node:net").AddressInfo} */ (server.address());
      server.close(() => resolve(port));
    });
  });
}

/**
 * A temporary directory, removed by the returned function (or by stopAll()).
 * @param {string} prefix
 * @returns {{ dir: string, remove: () => void }}
 */
export function tempDir(prefix) {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  tempDirs.add(dir);
  return {
    dir,
    remove: () => {
      rmSync(dir, { recursive: true, force: true });
      tempDirs.delete(dir);
    },
  };
}

/**
 * @param {number} port
 * @returns {Promise<boolean>} whether a TCP connection to 127.0.0.1:port succeeds
 */
export function canConnect(port) {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

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

/**
 * @param {number} pgid
 * @param {NodeJS.Signals} signal
 */
function killGroup(pgid, signal) {
  try {
    process.kill(-pgid, signal);
  } catch {}
}

/**
 * Spawns a process in its own group with its output collected, and returns how to stop it (the whole group:
 * SIGTERM, then SIGKILL after `graceMs`; then `cleanup`).
 * @param {string} command
 * @param {string[]} args
 * @param {{ cwd?: string, env?: NodeJS.ProcessEnv, inheritStderr?: boolean, graceMs?: number, cleanup?: () => void }} [options]
 */
function spawnGroup(command, args, { cwd, env, inheritStderr = false, graceMs = 3000, cleanup } = {}) {
  const child = spawn(command, args, {
    cwd,
    env,
    detached: true,
    stdio: ["ignore", inheritStderr ? "ignore" : "pipe", inheritStderr ? "inherit" : "pipe"],
  });
  let output = "";
  child.stdout?.on("data", (chunk) => (output += chunk));
  child.stderr?.on("data", (chunk) => (output += chunk));
  const pgid = /** @type {number} */ (child.pid);
  const entry = {
    pgid,
    async stop() {
      running.delete(entry);
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once("exit", resolve));
        killGroup(pgid, "SIGTERM");
        await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, graceMs))]);
      }
      // The group may outlive its leader (wrangler's workerd), so it is always killed.
      killGroup(pgid, "SIGKILL");
      cleanup?.();
    },
  };
  running.add(entry);
  return { child, pgid, stop: entry.stop, output: () => output };
}

/**
 * @typedef {object} LocalServer
 * @property {number} port
 * @property {import("node:child_process").ChildProcess} child
 * @property {() => Promise<void>} stop Stops the server's process group (SIGTERM, then SIGKILL after 3 s).
 * @property {() => string} output Output so far, for error messages.
 */

/**
 * Spawns `binary args` in its own process group and waits until `port` accepts connections.
 * @param {string} binary
 * @param {string[]} args
 * @param {number} port
 * @returns {Promise<LocalServer>}
 */
export async function startServer(binary, args, port) {
  requireBinary(binary);
  const { child, stop, output } = spawnGroup(binary, args);
  for (let i = 0; i < 200; i++) {
    if (child.exitCode !== null) break;
    if (await canConnect(port)) return { port, child, stop, output };
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  await stop();
  throw new Error(`${binary} ${args.join(" ")} did not start on port ${port}:\n${output()}`);
}

/**
 * A throw-away Redis: no persistence, loopback only, its working directory (where a replica writes the RDB of
 * its sync) a temporary one. Extra arguments are redis-server options.
 * @param {string[]} [extra]
 * @param {number} [port]
 * @returns {Promise<LocalServer>}
 */
export async function startRedis(extra = [], port) {
  const chosen = port ?? (await freePort());
  const work = extra.includes("--dir") ? undefined : tempDir("redis-data-");
  const server = await startServer(
    "redis-server",
    [
      "--port",
      String(chosen),
      "--bind",
      "127.0.0.1",
      "--save",
      "",
      "--appendonly",
      "no",
      ...(work ? ["--dir", work.dir] : []),
      ...extra,
    ],
    chosen,
  );
  const stopServer = server.stop;
  const stop = async () => {
    await stopServer();
    work?.remove();
  };
  return { ...server, stop };
}

/**
 * A throw-away memcached on loopback (no UDP) with `megabytes` of memory.
 * @param {{ port?: number, megabytes?: number }} [options]
 * @returns {Promise<LocalServer>}
 */
export async function startMemcached({ port, megabytes = 16 } = {}) {
  const chosen = port ?? (await freePort());
  return startServer(
    "memcached",
    ["-l", "127.0.0.1", "-p", String(chosen), "-U", "0", "-m", String(megabytes), "-u", "nobody"],
    chosen,
  );
}

/**
 * Runs redis-cli with the arguments and returns its output (throws on a non-zero exit).
 * @param {number} port
 * @param {...string} args
 */
export function redisCli(port, ...args) {
  requireBinary("redis-cli");
  return execFileSync("redis-cli", ["-h", "127.0.0.1", "-p", String(port), ...args], { encoding: "utf8" }).trim();
}

/** @param {string} dir @param {string[]} args */
function openssl(dir, args) {
  execFileSync("openssl", args, { cwd: dir, stdio: ["ignore", "ignore", "pipe"] });
}

/**
 * A new P-256 key `<name>.key` and what `openssl req` with `options` makes of it: a request or a self-signed certificate.
 * @param {string} dir @param {string} name @param {string} out @param {string} commonName @param {string[]} options
 */
function newKey(dir, name, out, commonName, options) {
  const key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", `${name}.key`];
  openssl(dir, ["req", ...options, ...key, "-out", out, "-subj", `/CN=${commonName}`]);
}

/**
 * A self-signed P-256 CA in `dir` (`<name>.key`, `<name>.pem`), valid two days.
 * @param {string} dir @param {string} name @param {string} [commonName]
 */
export function makeCa(dir, name, commonName = name) {
  requireBinary("openssl");
  newKey(dir, name, `${name}.pem`, commonName, ["-x509", "-days", "2"]);
}

/**
 * A P-256 certificate in `dir` (`<name>.key`, `<name>.pem`) signed by the CA `ca`, with the given openssl extensions.
 * @param {string} dir @param {string} name @param {string} ca @param {string} extensions @param {string} [commonName]
 */
export function makeLeaf(dir, name, ca, extensions, commonName = name) {
  requireBinary("openssl");
  writeFileSync(path.join(dir, `${name}.ext`), extensions);
  newKey(dir, name, `${name}.csr`, commonName, []);
  const signer = ["-CA", `${ca}.pem`, "-CAkey", `${ca}.key`, "-CAcreateserial", "-days", "2"];
  openssl(dir, ["x509", "-req", "-in", `${name}.csr`, ...signer, "-out", `${name}.pem`, "-extfile", `${name}.ext`]);
}

/**
 * A CA and a server certificate it signed (for 127.0.0.1 and localhost), made with the openssl CLI in `dir`.
 * @param {string} dir
 * @returns {{ ca: string, cert: string, key: string }}
 */
export function makeServerCertificate(dir) {
  makeCa(dir, "ca", "test store CA");
  makeLeaf(
    dir,
    "server",
    "ca",
    "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n",
    "localhost",
  );
  return { ca: path.join(dir, "ca.pem"), cert: path.join(dir, "server.pem"), key: path.join(dir, "server.key") };
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
  spawnSync(process.execPath, [path.join(projectDir, "scripts", "bundle-ratelimit-config.mjs")], {
    cwd: projectDir,
    env: wranglerEnv(),
  });
  try {
    if (migrate) {
      const migrateArgs = ["d1", "migrations", "apply", "DB", "--local", "--persist-to", state, ...configArgs];
      wranglerSync(migrateArgs, `${name}: migrations`, projectDir);
    }
  } catch (error) {
    removeState();
    throw error;
  }
  // A port freePort() found free may be taken before wrangler binds it (by another server starting, or as the
  // ephemeral port of an outgoing connection): then wrangler exits at once, and a new pair of ports is tried.
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

/**
 * Gives wrangler dev's proxy a fresh connection to the Worker before a non-GET request that follows an idle spell.
 * workerd closes an idle connection after 5 s, and a POST or PUT that races with that close is answered 503 "Your
 * worker restarted mid-request" though nothing restarted (workers-sdk issue 14641); the proxy retries only GET and
 * HEAD, so one GET first takes that hit harmlessly.
 * @param {{ url: string }} server
 */
export async function refreshProxyConnection(server) {
  await (await fetch(`${server.url}/test/ping`)).arrayBuffer();
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
