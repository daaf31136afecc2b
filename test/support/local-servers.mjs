// Throw-away redis-server and memcached on free loopback ports, each in its own process group, and redis-cli.
// @ts-check
import { execFileSync } from "node:child_process";
import { canConnect, freePort, spawnGroup, tempDir } from "./processes.mjs";
import { requireBinary } from "./system-programs.mjs";

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
