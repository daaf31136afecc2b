// Shared by the benchmarks: start a real `wrangler dev` (its own ports, its own persisted state with the D1
// migrations applied, logging off) in its own process group, and stop every one started on exit.
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";

export const root = path.join(import.meta.dirname, "..", "..");
const wrangler = path.join(root, "node_modules", "wrangler", "bin", "wrangler.js");
export const benchEnv = { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false", CI: "1" };

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
 * answers. Returns the origin URL and the persisted state directory.
 */
export async function startDev({ name, configPath, vars = {}, readyPath = "/", extraArgs = [] }) {
  const persistTo = mkdtempSync(path.join(tmpdir(), `bench-${name}-`));
  tempDirs.push(persistTo);
  const configArgs = configPath ? ["--config", configPath] : [];
  spawnSync(process.execPath, [path.join(root, "scripts", "bundle-ratelimit-config.mjs")], { cwd: root, env: benchEnv });
  const migrate = spawnSync(
    process.execPath,
    [wrangler, "d1", "migrations", "apply", "DB", "--local", "--persist-to", persistTo, ...configArgs],
    { cwd: root, env: benchEnv, encoding: "utf8" },
  );
  if (migrate.status !== 0) throw new Error(`${name}: migrations failed:\n${migrate.stdout}\n${migrate.stderr}`);
  const port = await freePort();
  const inspectorPort = await freePort();
  const varArgs = Object.entries(vars).flatMap(([key, value]) => ["--var", `${key}:${value}`]);
  const child = spawn(
    process.execPath,
    [wrangler, "dev", ...configArgs, "--ip", "127.0.0.1", "--port", String(port), "--inspector-port", String(inspectorPort),
      "--persist-to", persistTo, "--log-level", "error", ...varArgs, ...extraArgs],
    { cwd: root, env: benchEnv, detached: true, stdio: ["ignore", "ignore", "inherit"] },
  );
  children.push(child);
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 240; i++) {
    if (child.exitCode !== null) throw new Error(`${name}: wrangler dev exited with ${child.exitCode}`);
    try {
      if ((await fetch(url + readyPath)).ok) return { url, persistTo };
    } catch {}
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`${name}: wrangler dev did not answer ${readyPath}`);
}
