// Shared by the proxy jobs' integration suites: the HAProxy agent with a real haproxy behind it, local backend
// servers, a relay for the ACME backend, and API calls as the administrator.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer as createHttpServer, request as httpRequest, type Server } from "node:http";
import { connect, createServer as createTcpServer, type Server as TcpServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { expectStatus } from "./expect-status";
import { freePort } from "./processes.mjs";
import { wranglerRun } from "./wrangler-dev.mjs";

export const root = path.join(import.meta.dirname, "..", "..");
export const ADMIN_USER = "admin";
export const ADMIN_PASSWORD = "integration-admin-password";
export const AGENT_TOKEN = "integration-agent-token";
/** An HTTP Basic Authorization header. */
export const basicAuth = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;
const ADMIN_AUTH = basicAuth(ADMIN_USER, ADMIN_PASSWORD);

export const tempDir = (name: string) => mkdtempSync(path.join(tmpdir(), `${name}-`));

/**
 * Calls the Worker's API as the administrator (or with `auth`); returns status, headers and the parsed (or raw) body.
 */
export async function api(baseUrl: string, pathName: string, method = "GET", body?: unknown, auth = ADMIN_AUTH) {
  const response = await fetch(`${baseUrl}${pathName}`, {
    method,
    headers: { Authorization: auth, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  return { status: response.status, headers: response.headers, body: json };
}

/**
 * The Worker's vars of a proxy suite: the administrator, the master agent with its token, and frontends on loopback at
 * the given ports; `extra` adds or overrides.
 */
export const proxyVars = (
  master: { url: string },
  ports: { http: number; https: number },
  extra: Record<string, string> = {},
): Record<string, string> => ({
  PROXY_ADMIN_USERNAME: ADMIN_USER,
  PROXY_ADMIN_PASSWORD: ADMIN_PASSWORD,
  HAPROXY_AGENT_URL: master.url,
  HAPROXY_AGENT_TOKEN: AGENT_TOKEN,
  HAPROXY_HTTP_PORT: String(ports.http),
  HAPROXY_HTTPS_PORT: String(ports.https),
  HAPROXY_BIND_ADDRESS: "127.0.0.1",
  ...extra,
});

/** Runs SQL on a running wrangler dev's local D1, past the API: how rows from before a rule are made. */
export const executeSql = (server: { persistTo: string }, command: string): Promise<void> =>
  wranglerRun(["d1", "execute", "DB", "--local", "--persist-to", server.persistTo, "--command", command], "d1 execute");

/** An administrator's call that must answer 200 (setting a suite up): its body. */
export const adminCall = (baseUrl: string) => async (pathName: string, method: string, body: unknown) => {
  const response = await api(baseUrl, pathName, method, body);
  expectStatus(response, 200, `${method} ${pathName}`);
  return response.body;
};

export async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${last}` : ""}`);
}

/** Waits for a job run to end; returns it. */
export function jobEnded(baseUrl: string, id: number, timeoutMs = 60_000) {
  return until(
    `job ${id} to end`,
    async () => {
      const { body } = await api(baseUrl, `/admin/jobs/${id}`);
      return body.state === "succeeded" || body.state === "failed" ? body : undefined;
    },
    timeoutMs,
  );
}

/** A plain HTTP request to haproxy with any Host header (fetch would refuse to set it). */
export function viaHaproxy(
  port: number,
  host: string,
  pathName = "/",
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      { host: "127.0.0.1", port, path: pathName, headers: { ...headers, Host: host }, agent: false },
      (response) => {
        let body = "";
        response.setEncoding("utf8");
        response.on("data", (chunk) => (body += chunk));
        response.on("end", () => resolve({ status: response.statusCode!, headers: response.headers, body }));
      },
    );
    request.on("error", reject);
    request.end();
  });
}

/**
 * A backend "container": answers `<name> <path>` on the address (and port, default a free one) given, and, at
 * /echo-headers, the request's headers as JSON (what HAProxy forwarded).
 */
export async function startBackendServer(
  name: string,
  host: string,
  port = 0,
): Promise<{ port: number; server: Server }> {
  const server = createHttpServer((request, response) => {
    if (request.url === "/echo-headers") {
      response.setHeader("content-type", "application/json");
      response.end(JSON.stringify(request.headers));
      return;
    }
    response.setHeader("content-type", "text/plain");
    response.end(`${name} ${request.url}`);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  return { port: (server.address() as { port: number }).port, server };
}

/** Whether this machine can listen on IPv6 loopback (containers have IPv6 addresses). */
export async function ipv6LoopbackWorks(): Promise<boolean> {
  try {
    const { server } = await startBackendServer("probe", "::1");
    server.close();
    return true;
  } catch {
    return false;
  }
}

/** A TCP relay whose target is set later (the ACME backend must be configured before wrangler dev picks its port). */
export async function startRelay(): Promise<{ port: number; setTarget(port: number): void; server: TcpServer }> {
  let target = 0;
  const server = createTcpServer((socket) => {
    const upstream = connect(target, "127.0.0.1");
    socket.pipe(upstream).pipe(socket);
    upstream.on("error", () => socket.destroy());
    socket.on("error", () => upstream.destroy());
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", () => resolve()));
  return { port, setTarget: (value) => (target = value), server };
}

export interface Agent {
  port: number;
  url: string;
  configDir: string;
  stop(): Promise<void>;
}

/**
 * Starts the HAProxy agent on a fresh configuration directory. With `runHaproxy`, its reload command starts haproxy
 * (master-worker, pid file in the directory) the first time and reloads it (SIGUSR2) afterwards; stop() ends both.
 */
export async function startAgent(options: { runHaproxy: boolean }): Promise<Agent> {
  const configDir = tempDir("haproxy-config");
  const pidFile = path.join(configDir, "haproxy.pid");
  const reloadCmd = options.runHaproxy
    ? `if [ -f ${pidFile} ] && kill -0 "$(cat ${pidFile})" 2>/dev/null; then kill -USR2 "$(cat ${pidFile})"; ` +
      `else haproxy -W -D -p ${pidFile} -f ${configDir}/haproxy.cfg; fi`
    : "true";
  const port = await freePort();
  const child: ChildProcess = spawn(
    process.execPath,
    [
      path.join(root, "haproxy-agent", "agent.mjs"),
      "--config-dir",
      configDir,
      "--reload-cmd",
      reloadCmd,
      "--port",
      String(port),
    ],
    { cwd: root, env: { ...process.env, HAPROXY_AGENT_TOKEN: AGENT_TOKEN }, stdio: ["ignore", "pipe", "pipe"] },
  );
  let output = "";
  child.stdout!.on("data", (chunk) => (output += chunk));
  child.stderr!.on("data", (chunk) => (output += chunk));
  const url = `http://127.0.0.1:${port}`;
  await until(
    `the agent to listen\n${output}`,
    async () => ((await fetch(`${url}/healthz`)).ok ? true : undefined),
    20_000,
  );
  return {
    port,
    url,
    configDir,
    async stop() {
      if (existsSync(pidFile)) {
        try {
          process.kill(Number(readFileSync(pidFile, "utf8").trim()), "SIGTERM");
        } catch {}
      }
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once("exit", resolve));
        child.kill("SIGTERM");
        await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5000))]);
      }
      rmSync(configDir, { recursive: true, force: true });
    },
  };
}

/** `haproxy -c` on a configuration file: its exit status and output. */
export function haproxyCheck(configFile: string): { status: number | null; output: string } {
  const result = spawnSync("haproxy", ["-c", "-f", configFile], { encoding: "utf8" });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}
