// Helpers of the gRPC integration suite: the Node gateway as a child process, grpc-js clients over proto/, test
// certificates made with the openssl CLI, and a stand-in upstream whose answers and delays the test controls.
import grpc from "@grpc/grpc-js";
import protoLoader from "@grpc/proto-loader";
import { spawn, type ChildProcess } from "node:child_process";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import path from "node:path";
import { makeCa, makeLeaf } from "./test-certificates.mjs";

const root = path.join(import.meta.dirname, "..", "..");
const gatewayEntry = path.join(root, "grpc-gateway", "gateway.mjs");
export const clientEntry = path.join(root, "grpc-gateway", "client.mjs");

export interface Gateway {
  /** host:port or unix:/path, as grpc-js dials it. */
  target: string;
  child: ChildProcess;
  output: () => string;
  /** Resolves with the exit code once the process has exited. */
  exited: Promise<number | null>;
  stop(): Promise<void>;
}

/** Starts `node grpc-gateway/gateway.mjs` with these variables and waits for its "serving" line. */
export async function startGateway(vars: Record<string, string>): Promise<Gateway> {
  const child = spawn(process.execPath, [gatewayEntry], {
    cwd: root,
    env: { ...process.env, GRPC_HOST: "127.0.0.1", ...vars },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const serving = new Promise<string>((resolve, reject) => {
    child.stdout!.on("data", (chunk) => {
      output += chunk;
      const line = output.split("\n").find((text) => text.includes('"grpc-gateway: serving"'));
      if (line) resolve(JSON.parse(line).address);
    });
    child.stderr!.on("data", (chunk) => (output += chunk));
    exited.then((code) => reject(new Error(`gateway exited with ${code}:\n${output}`)));
  });
  const address = await serving;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGKILL");
      await exited;
    }
  };
  return { target: address, child, output: () => output, exited, stop };
}

/** Starts a gateway that must refuse its settings; answers its exit code and output. */
export async function gatewayRefusing(vars: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, [gatewayEntry], {
    cwd: root,
    env: { ...process.env, ...vars },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (chunk) => (output += chunk));
  child.stderr.on("data", (chunk) => (output += chunk));
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  return { code, output };
}

/**
 * Runs the gateway with only these variables (and PATH) until it exits, killed if it still runs after `killAfterMs`
 * (a start that should have failed must not outlive its test); its exit code and output.
 */
export function runGatewayAlone(
  env: Record<string, string>,
  killAfterMs = 4000,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [gatewayEntry], { env: { PATH: process.env.PATH, ...env } });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk) => (stdout += chunk));
  child.stderr.on("data", (chunk) => (stderr += chunk));
  const kill = setTimeout(() => child.kill("SIGKILL"), killAfterMs);
  return new Promise((resolve) =>
    child.on("close", (code) => {
      clearTimeout(kill);
      resolve({ code, stdout, stderr });
    }),
  );
}

const loaded = grpc.loadPackageDefinition(
  protoLoader.loadSync(["envoy/service/ratelimit/v3/rls.proto", "grpc/health/v1/health.proto"], {
    includeDirs: [path.join(root, "proto")],
    enums: String,
    longs: String,
    defaults: false,
  }),
) as any;
const RateLimitService = loaded.envoy.service.ratelimit.v3.RateLimitService as grpc.ServiceClientConstructor;
const Health = loaded.grpc.health.v1.Health as grpc.ServiceClientConstructor;

export type GrpcResult<T> = { ok: true; value: T } | { ok: false; code: grpc.status; details: string };

function unary<T>(
  client: grpc.Client,
  method: string,
  request: unknown,
  deadlineMs: number,
  metadata = new grpc.Metadata(),
): Promise<GrpcResult<T>> {
  return new Promise((resolve) => {
    (client as any)[method](
      request,
      metadata,
      { deadline: Date.now() + deadlineMs },
      (error: grpc.ServiceError | null, value: T) =>
        resolve(error ? { ok: false, code: error.code, details: error.details } : { ok: true, value }),
    );
  });
}

export interface RateLimitClient {
  shouldRateLimit(
    request: unknown,
    deadlineMs?: number,
    metadata?: grpc.Metadata,
  ): Promise<GrpcResult<Record<string, unknown>>>;
  check(service: string, deadlineMs?: number): Promise<GrpcResult<{ status?: string }>>;
  channel: grpc.Channel;
  close(): void;
}

/** With TLS, the certificates name localhost (and 127.0.0.1, which Node would not send as the server name). */
export function rateLimitClient(target: string, credentials?: grpc.ChannelCredentials): RateLimitClient {
  const options = credentials ? { "grpc.ssl_target_name_override": "localhost" } : {};
  const service = new RateLimitService(target, credentials ?? grpc.credentials.createInsecure(), options);
  const health = new Health(target, credentials ?? grpc.credentials.createInsecure(), {
    channelOverride: service.getChannel() as grpc.Channel,
  });
  return {
    shouldRateLimit: (request, deadlineMs = 10_000, metadata) =>
      unary(service, "ShouldRateLimit", request, deadlineMs, metadata),
    check: (name, deadlineMs = 10_000) => unary(health, "Check", { service: name }, deadlineMs),
    channel: service.getChannel() as grpc.Channel,
    close: () => service.close(),
  };
}

/** A decoded response in proto3 JSON, the form POST /json answers (durations as "58s"). */
export function proto3Json(response: unknown): unknown {
  return JSON.parse(
    JSON.stringify(response, (key, value) =>
      key === "durationUntilReset" && value && typeof value === "object" ? `${value.seconds ?? 0}s` : value,
    ),
  );
}

export interface Certificates {
  dir: string;
  caPem: string;
  serverCert: string;
  serverKey: string;
  /** Signed by the CA, subject alternative name DNS:client.example. */
  clientCert: string;
  clientKey: string;
  /** Signed by the CA, subject alternative name DNS:intruder.example. */
  otherClientCert: string;
  otherClientKey: string;
  /** A second CA and a server certificate it signed, for the reload test. */
  newCaPem: string;
  newServerCert: string;
  newServerKey: string;
}

/** Makes a CA, server and client certificates in `dir` with the openssl CLI. */
export function makeCertificates(dir: string): Certificates {
  const server = "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n";
  makeCa(dir, "ca");
  makeCa(dir, "new-ca");
  makeLeaf(dir, "server", "ca", server);
  makeLeaf(dir, "new-server", "new-ca", server);
  makeLeaf(dir, "client", "ca", "subjectAltName=DNS:client.example\nextendedKeyUsage=clientAuth\n");
  makeLeaf(dir, "intruder", "ca", "subjectAltName=DNS:intruder.example\nextendedKeyUsage=clientAuth\n");
  const file = (name: string) => path.join(dir, name);
  return {
    dir,
    caPem: file("ca.pem"),
    serverCert: file("server.pem"),
    serverKey: file("server.key"),
    clientCert: file("client.pem"),
    clientKey: file("client.key"),
    otherClientCert: file("intruder.pem"),
    otherClientKey: file("intruder.key"),
    newCaPem: file("new-ca.pem"),
    newServerCert: file("new-server.pem"),
    newServerKey: file("new-server.key"),
  };
}

export interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** True when the gateway gave up on the request before the answer was sent. */
  abandoned: boolean;
}

export interface FakeUpstream {
  url: string;
  seen: SeenRequest[];
  /**
   * How the next requests are answered; with `resetReusedSockets`, a request arriving on a connection that already
   * carried one gets the connection closed instead (a keep-alive connection closed under the client's feet).
   */
  answer: { delayMs: number; status: number; contentType: string; body: Buffer | string; resetReusedSockets?: boolean };
  close(): Promise<void>;
}

/** An HTTP server standing in for the Worker: records every request and answers as `answer` says. */
export async function startFakeUpstream(): Promise<FakeUpstream> {
  const seen: SeenRequest[] = [];
  const fake: FakeUpstream = {
    url: "",
    seen,
    answer: { delayMs: 0, status: 200, contentType: "application/proto", body: Buffer.from([0x08, 0x01]) },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  const usedSockets = new WeakSet<object>();
  const server: Server = createServer((request, response) => {
    const reused = usedSockets.has(request.socket);
    usedSockets.add(request.socket);
    const chunks: Buffer[] = [];
    request.on("data", (chunk) => chunks.push(chunk));
    request.on("end", () => {
      const record: SeenRequest = {
        method: request.method!,
        url: request.url!,
        headers: request.headers,
        body: Buffer.concat(chunks),
        abandoned: false,
      };
      seen.push(record);
      const { delayMs, status, contentType, body, resetReusedSockets } = fake.answer;
      if (resetReusedSockets && reused) {
        record.abandoned = true;
        request.socket.destroy();
        return;
      }
      response.on("close", () => {
        if (!response.writableFinished) record.abandoned = true;
      });
      setTimeout(() => {
        if (response.destroyed) return;
        response.writeHead(status, { "content-type": contentType });
        response.end(body);
      }, delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const { port } = server.address() as { port: number };
  fake.url = `http://127.0.0.1:${port}`;
  server.keepAliveTimeout = 60_000;
  return fake;
}
