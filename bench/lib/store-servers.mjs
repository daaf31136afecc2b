// Shared by the benchmarks: a throw-away redis-server or memcached on a free loopback port (for the rate limit
// service's other counter stores), stopped by its own process id.
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { freePort } from "./dev-server.mjs";

const started = [];

function canConnect(port) {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

async function startServer(binary, packageName, args, port) {
  if (spawnSync("sh", ["-c", `command -v ${binary}`]).status !== 0) {
    throw new Error(`${binary} is not installed; run: apt-get update && apt-get install -y ${packageName}`);
  }
  const child = spawn(binary, args, { stdio: ["ignore", "ignore", "inherit"] });
  started.push(child);
  for (let i = 0; i < 200; i++) {
    if (child.exitCode !== null) break;
    if (await canConnect(port)) return { port };
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`${binary} did not start on port ${port}`);
}

export async function startRedisServer() {
  const port = await freePort();
  const dir = mkdtempSync(path.join(tmpdir(), "bench-redis-"));
  started.push({ dir });
  return startServer(
    "redis-server",
    "redis-server",
    ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir],
    port,
  );
}

export async function startMemcachedServer() {
  const port = await freePort();
  return startServer(
    "memcached",
    "memcached",
    ["-l", "127.0.0.1", "-p", String(port), "-U", "0", "-m", "64", "-u", "nobody"],
    port,
  );
}

export async function stopStoreServers() {
  for (const item of started.splice(0).reverse()) {
    if (item.dir) {
      rmSync(item.dir, { recursive: true, force: true });
      continue;
    }
    if (item.exitCode !== null) continue;
    const exited = new Promise((resolve) => item.once("exit", resolve));
    item.kill("SIGTERM");
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 3000))]);
  }
}
