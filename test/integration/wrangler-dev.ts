// Starts a real `wrangler dev` for integration tests: free ports, its own persisted state with the D1
// migrations applied, extra vars, and a stop() that ends the whole process group.
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { freePort } from "../local-servers";

const root = path.join(import.meta.dirname, "..", "..");
const wrangler = path.join(root, "node_modules", "wrangler", "bin", "wrangler.js");
const env = { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false", CI: "true" };

export { freePort };

export interface DevServer {
  url: string;
  port: number;
  stop(): Promise<void>;
}

/**
 * Gives wrangler dev's proxy a fresh connection to the Worker before a non-GET request that follows an idle spell.
 * workerd closes an idle connection after 5 s, and a POST or PUT that races with that close is answered 503 "Your
 * worker restarted mid-request" though nothing restarted (workers-sdk issue 14641); the proxy retries only GET and
 * HEAD, so one GET first takes that hit harmlessly.
 */
export async function refreshProxyConnection(server: DevServer): Promise<void> {
  await (await fetch(`${server.url}/test/ping`)).arrayBuffer();
}

export async function startWranglerDev(vars: Record<string, string> = {}): Promise<DevServer> {
  const state = mkdtempSync(path.join(tmpdir(), "wrangler-state-"));
  spawnSync(process.execPath, [path.join(root, "scripts", "bundle-ratelimit-config.mjs")], { cwd: root, env });
  const migrate = spawnSync(
    process.execPath,
    [wrangler, "d1", "migrations", "apply", "DB", "--local", "--persist-to", state],
    {
      cwd: root,
      env,
      encoding: "utf8",
    },
  );
  if (migrate.status !== 0) throw new Error(`migrations failed: ${migrate.stderr}${migrate.stdout}`);
  const port = await freePort();
  const inspectorPort = await freePort();
  const varArgs = Object.entries(vars).flatMap(([name, value]) => ["--var", `${name}:${value}`]);
  const child = spawn(
    process.execPath,
    [
      wrangler,
      "dev",
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
    ],
    { cwd: root, env, detached: true, stdio: ["ignore", "pipe", "pipe"] },
  );
  let output = "";
  child.stdout.on("data", (chunk) => (output += chunk));
  child.stderr.on("data", (chunk) => (output += chunk));
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode === null) {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      try {
        process.kill(-child.pid!, "SIGTERM");
      } catch {}
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5000))]);
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {}
    }
    rmSync(state, { recursive: true, force: true });
  };
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) break;
    try {
      const response = await fetch(`${url}/test/ping`);
      if (response.ok) return { url, port, stop };
    } catch {}
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  await stop();
  throw new Error(`wrangler dev did not start:\n${output}`);
}
