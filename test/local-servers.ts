// Starting real servers for the tests (Node side: the Workers tests' globalSetup and the integration suites):
// redis-server, redis-sentinel and memcached on free loopback ports, each stopped by its own process id. A missing
// binary fails with the apt-get line that installs it; tests never skip for it.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { connect, createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

const PACKAGES: Record<string, string> = {
  "redis-server": "redis-server",
  "redis-sentinel": "redis-sentinel",
  "redis-cli": "redis-tools",
  memcached: "memcached",
  openssl: "openssl",
};

/** Fails clearly when a binary the tests need is not installed. */
export function requireBinary(name: string): void {
  try {
    execFileSync("sh", ["-c", `command -v ${name}`], { stdio: "ignore" });
  } catch {
    throw new Error(`${name} is not installed; run: apt-get update && apt-get install -y ${PACKAGES[name] ?? name}`);
  }
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

export interface LocalServer {
  port: number;
  child: ChildProcess;
  /** Stops the server (SIGTERM, then SIGKILL after 3 s) and waits for it to exit. */
  stop(): Promise<void>;
  /** Output so far, for error messages. */
  output(): string;
}

/** Spawns `binary args` and waits until `port` accepts connections. */
export async function startServer(binary: string, args: string[], port: number): Promise<LocalServer> {
  requireBinary(binary);
  const child = spawn(binary, args, { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout!.on("data", (chunk) => (output += chunk));
  child.stderr!.on("data", (chunk) => (output += chunk));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 3000);
    await exited;
    clearTimeout(timer);
  };
  for (let i = 0; i < 200; i++) {
    if (child.exitCode !== null) break;
    if (await canConnect(port)) return { port, child, stop, output: () => output };
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  await stop();
  throw new Error(`${binary} ${args.join(" ")} did not start on port ${port}:\n${output}`);
}

/**
 * A throw-away Redis: no persistence, loopback only, its working directory (where a replica writes the RDB of
 * its sync) a temporary one. Extra arguments are redis-server options.
 */
export async function startRedis(extra: string[] = [], port?: number): Promise<LocalServer> {
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

export async function startMemcached(port?: number): Promise<LocalServer> {
  const chosen = port ?? (await freePort());
  return startServer(
    "memcached",
    ["-l", "127.0.0.1", "-p", String(chosen), "-U", "0", "-m", "16", "-u", "nobody"],
    chosen,
  );
}

/** A temporary directory removed by the returned function. */
export function tempDir(prefix: string): { dir: string; remove: () => void } {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Runs redis-cli with the arguments and returns its output (throws on a non-zero exit). */
export function redisCli(port: number, ...args: string[]): string {
  requireBinary("redis-cli");
  return execFileSync("redis-cli", ["-h", "127.0.0.1", "-p", String(port), ...args], { encoding: "utf8" }).trim();
}

/** A CA and a server certificate it signed (for 127.0.0.1 and localhost), made with the openssl CLI in `dir`. */
export function makeServerCertificate(dir: string): { ca: string; cert: string; key: string } {
  requireBinary("openssl");
  const openssl = (...args: string[]) =>
    execFileSync("openssl", args, { cwd: dir, stdio: ["ignore", "ignore", "pipe"] });
  openssl(
    "req",
    "-x509",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:P-256",
    "-nodes",
    "-days",
    "2",
    "-keyout",
    "ca.key",
    "-out",
    "ca.pem",
    "-subj",
    "/CN=test store CA",
  );
  writeFileSync(
    path.join(dir, "server.ext"),
    "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n",
  );
  openssl(
    "req",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:P-256",
    "-nodes",
    "-keyout",
    "server.key",
    "-out",
    "server.csr",
    "-subj",
    "/CN=localhost",
  );
  openssl(
    "x509",
    "-req",
    "-in",
    "server.csr",
    "-CA",
    "ca.pem",
    "-CAkey",
    "ca.key",
    "-CAcreateserial",
    "-days",
    "2",
    "-out",
    "server.pem",
    "-extfile",
    "server.ext",
  );
  return { ca: path.join(dir, "ca.pem"), cert: path.join(dir, "server.pem"), key: path.join(dir, "server.key") };
}
