// The gRPC gateway run as a process, as the xDS client of a test management server (test/support/xds-server.ts),
// and the RateLimitConfig resources those tests send: for the integration suites of CONFIG_TYPE=GRPC_XDS_SOTW.
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { freePort } from "./processes.mjs";

const root = path.join(import.meta.dirname, "..", "..");

export interface GatewayProcess {
  port: number;
  output(): string;
  waitForLog(text: string, timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Runs the gateway in front of `upstreamUrl` as the xDS client of the server on `serverPort`, with fast backoffs
 * (`vars` override any setting); does not wait for it to serve.
 */
export async function startXdsGatewayProcess(options: {
  upstreamUrl: string;
  token: string;
  serverPort: number;
  vars?: Record<string, string>;
}): Promise<GatewayProcess> {
  const port = await freePort();
  const child: ChildProcess = spawn(process.execPath, [path.join(root, "grpc-gateway", "gateway.mjs")], {
    cwd: root,
    env: {
      ...process.env,
      CONFIG_TYPE: "GRPC_XDS_SOTW",
      RATELIMIT_UPSTREAM_URL: options.upstreamUrl,
      RATELIMIT_ADMIN_TOKEN: options.token,
      GRPC_HOST: "127.0.0.1",
      GRPC_PORT: String(port),
      CONFIG_GRPC_XDS_SERVER_URL: `127.0.0.1:${options.serverPort}`,
      CONFIG_GRPC_XDS_SERVER_CONNECT_RETRY_INTERVAL: "200ms",
      XDS_CLIENT_BACKOFF_INITIAL_INTERVAL: "200ms",
      XDS_CLIENT_BACKOFF_MAX_INTERVAL: "1s",
      ...options.vars,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout!.on("data", (chunk) => (output += chunk));
  child.stderr!.on("data", (chunk) => (output += chunk));
  const exited = new Promise((resolve) => child.once("exit", resolve));
  return {
    port,
    output: () => output,
    async waitForLog(text, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      while (!output.includes(text)) {
        if (child.exitCode !== null || Date.now() > deadline) throw new Error(`no log line with ${text}:\n${output}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGKILL");
        await exited;
      }
    },
  };
}

/** One RateLimitConfig resource: `path` descriptors with per-minute limits. */
export function limits(name: string, domain: string, perPath: Record<string, number>) {
  return {
    name,
    domain,
    descriptors: Object.entries(perPath).map(([value, requestsPerUnit]) => ({
      key: "path",
      value,
      rateLimit: { unit: "MINUTE", requestsPerUnit },
    })),
  };
}
