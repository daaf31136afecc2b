// Shared by the benchmarks: start a real `wrangler dev` (its own ports, its own persisted state with the D1
// migrations applied, or a state the caller prepared; logging off) in its own process group, and stop every one
// started (and remove every temp dir made here) on exit.
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";

export const root = path.join(import.meta.dirname, "..", "..");
const wrangler = path.join(root, "node_modules", "wrangler", "bin", "wrangler.js");
export const benchEnv = {
  ...process.env,
  WRANGLER_SEND_METRICS: "false",
  CLOUDFLARE_CF_FETCH_ENABLED: "false",
  CI: "1",
};

export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

const children = [];
const tempDirs = [];

/** A fresh directory under the OS temp dir, removed by stopAll(). */
export function tempDir(name) {
  const dir = mkdtempSync(path.join(tmpdir(), `bench-${name}-`));
  tempDirs.push(dir);
  return dir;
}

/** Runs a wrangler command to completion (e.g. `d1 execute`), throwing with the tail of its output if it fails. */
export function wranglerSync(args, what) {
  const result = spawnSync(process.execPath, [wrangler, ...args], {
    cwd: root,
    env: benchEnv,
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
  });
  if (result.status !== 0) {
    throw new Error(`${what} failed:\n${result.stdout.slice(-2000)}\n${result.stderr.slice(-2000)}`);
  }
}

export async function stopAll() {
  for (const child of children) {
    try {
      process.kill(-child.pid, "SIGTERM");
    } catch {}
  }
  const exits = children.map((child) =>
    child.exitCode !== null || child.signalCode !== null ? null : new Promise((resolve) => child.once("exit", resolve)),
  );
  await Promise.race([Promise.all(exits), new Promise((resolve) => setTimeout(resolve, 5000))]);
  for (const child of children) {
    try {
      process.kill(-child.pid, "SIGKILL");
    } catch {}
  }
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
}

process.on("SIGINT", () => stopAll().then(() => process.exit(130)));
process.on("SIGTERM", () => stopAll().then(() => process.exit(143)));

/**
 * Starts `wrangler dev` for the given config (default: the project's wrangler.toml) and waits until `readyPath`
 * answers. Returns the origin URL, the persisted state directory and the process group id (wrangler and its workerd
 * processes, e.g. to read their CPU time from /proc).
 * `persistTo`: a state directory the caller prepared (shared, e.g. by two dev servers; left in place) instead of a
 * fresh temp one; `migrate: false` skips applying the D1 migrations to it.
 */
export async function startDev({
  name,
  configPath,
  vars = {},
  readyPath = "/",
  extraArgs = [],
  persistTo,
  migrate = true,
}) {
  persistTo ??= tempDir(name);
  const configArgs = configPath ? ["--config", configPath] : [];
  spawnSync(process.execPath, [path.join(root, "scripts", "bundle-ratelimit-config.mjs")], {
    cwd: root,
    env: benchEnv,
  });
  if (migrate) {
    const migrateArgs = ["d1", "migrations", "apply", "DB", "--local", "--persist-to", persistTo, ...configArgs];
    wranglerSync(migrateArgs, `${name}: migrations`);
  }
  const port = await freePort();
  const inspectorPort = await freePort();
  const varArgs = Object.entries(vars).flatMap(([key, value]) => ["--var", `${key}:${value}`]);
  const child = spawn(
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
      persistTo,
      "--log-level",
      "error",
      ...varArgs,
      ...extraArgs,
    ],
    { cwd: root, env: benchEnv, detached: true, stdio: ["ignore", "ignore", "inherit"] },
  );
  children.push(child);
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 240; i++) {
    if (child.exitCode !== null) throw new Error(`${name}: wrangler dev exited with ${child.exitCode}`);
    try {
      if ((await fetch(url + readyPath)).ok) return { url, persistTo, pgid: child.pid };
    } catch {}
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`${name}: wrangler dev did not answer ${readyPath}`);
}
