// The gateway's xDS client (XdsConfigClient) in plain Node, against the test management server and a stand-in Worker:
// what it answers the server, and when, while the Worker is away or refuses a snapshot.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it, vi } from "vitest";
import { gatewaySettings } from "../../grpc-gateway/settings.mjs";
import { workerApplier, XdsConfigClient } from "../../grpc-gateway/xds-client.mjs";
import { startManagementServer, TYPE_URL, type ManagementServer } from "../support/xds-server";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A stand-in Worker answering every PUT with `answer` (which may change), counted; listening once started. */
function workerStub(status: number, body = "{}") {
  const puts: string[] = [];
  const answer = { status, body };
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      puts.push(Buffer.concat(chunks).toString("utf8"));
      response.writeHead(answer.status, { "content-type": "application/json" });
      response.end(answer.body);
    });
  });
  cleanups.push(async () => {
    server.closeAllConnections();
    if (server.listening) await new Promise((resolve) => server.close(resolve));
  });
  const listen = (port = 0) =>
    new Promise<string>((resolve) =>
      server.listen(port, "127.0.0.1", () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
    );
  return { puts, answer, listen };
}

/** A port nothing listens on (taken, then freed). */
async function unusedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

async function managementServer(options: Parameters<typeof startManagementServer>[0] = {}) {
  const server = await startManagementServer(options);
  cleanups.push(() => server.kill());
  return server;
}

/**
 * The xDS client of `server`, storing in the Worker at `workerUrl` with short retry delays and backoffs (`vars` set
 * others); stopped after the test.
 */
function startClient(server: ManagementServer, workerUrl: string, vars: Record<string, string> = {}) {
  const settings = gatewaySettings({
    CONFIG_TYPE: "GRPC_XDS_SOTW",
    RATELIMIT_ADMIN_TOKEN: "t",
    RATELIMIT_UPSTREAM_URL: workerUrl,
    CONFIG_GRPC_XDS_SERVER_URL: `127.0.0.1:${server.port}`,
    XDS_CLIENT_BACKOFF_INITIAL_INTERVAL: "200ms",
    XDS_CLIENT_BACKOFF_MAX_INTERVAL: "400ms",
    XDS_CLIENT_BACKOFF_JITTER: "false",
    ...vars,
  });
  const log = vi.fn();
  const apply = workerApplier({ url: workerUrl, token: "t", log, retryDelaysMs: [50, 100, 200] });
  const client = new XdsConfigClient(settings, { apply, log }).start();
  cleanups.push(() => client.stop());
  return { client, log };
}

async function until(done: () => boolean, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`not done within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const answers = (server: ManagementServer) =>
  server.seen.map(({ request }) => ({
    versionInfo: request.versionInfo,
    responseNonce: request.responseNonce ?? "",
    error: request.errorDetail?.message,
  }));

/**
 * A management server holding v1 and a client started against a Worker that does not listen yet: `worker.listen(port)`
 * brings it.
 */
async function withWorkerAway() {
  const server = await managementServer();
  server.push("v1", [{ name: "a", domain: "a" }]);
  const port = await unusedPort();
  const worker = workerStub(200);
  return { server, worker, port, ...startClient(server, `http://127.0.0.1:${port}`) };
}

describe("XdsConfigClient: a Worker that is away", () => {
  it("stores a snapshot once the Worker listens, without a NACK in between, and then ACKs it", async () => {
    const { server, worker, port, client } = await withWorkerAway();
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(worker.puts).toEqual([]);
    await worker.listen(port);
    await client.firstAccepted;
    await server.waitFor(({ request }) => request.versionInfo === "v1", 0, 5000);
    expect(worker.puts).toEqual([JSON.stringify({ configs: [{ name: "a", domain: "a" }] })]);
    expect(answers(server)).toEqual([
      { versionInfo: "", responseNonce: "", error: undefined },
      { versionInfo: "v1", responseNonce: "1", error: undefined },
    ]);
  });

  it("stores and answers only the newest of the snapshots pushed while it was away", async () => {
    const { server, worker, port, client, log } = await withWorkerAway();
    await new Promise((resolve) => setTimeout(resolve, 500));
    server.push("v2", [{ name: "b", domain: "b" }]);
    server.push("v3", [{ name: "c", domain: "c" }]);
    // Not a fixed wait: on a loaded machine v3 could still be on its way when the Worker comes back.
    await until(() => log.mock.calls.some((call) => call[2]?.version === "v3"));
    await worker.listen(port);
    await client.firstAccepted;
    await server.waitFor(({ request }) => request.versionInfo === "v3", 0, 5000);
    expect(worker.puts).toEqual([JSON.stringify({ configs: [{ name: "c", domain: "c" }] })]);
    expect(answers(server)).toEqual([
      { versionInfo: "", responseNonce: "", error: undefined },
      { versionInfo: "v3", responseNonce: "3", error: undefined },
    ]);
  });
});

describe("XdsConfigClient: a server that sends a refused snapshot again at once", () => {
  const nacks = (server: ManagementServer) => answers(server).filter((answer) => answer.error !== undefined);

  it("NACKs each resend with the first refusal, after a growing backoff, and PUTs the snapshot once", async () => {
    const server = await managementServer({ resendOnNack: true });
    server.push("v1", [{ name: "a", domain: "a" }]);
    const worker = workerStub(400, JSON.stringify({ error: "a: bad unit" }));
    startClient(server, await worker.listen());
    const started = Date.now();
    await until(() => nacks(server).length === 4);
    // The first NACK at once, then after 200, 400 and 400 ms (the backoff's maximum).
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    expect(worker.puts).toEqual([JSON.stringify({ configs: [{ name: "a", domain: "a" }] })]);
    expect(nacks(server).slice(0, 4)).toEqual([
      { versionInfo: "", responseNonce: "1", error: "a: bad unit" },
      { versionInfo: "", responseNonce: "2", error: "a: bad unit" },
      { versionInfo: "", responseNonce: "3", error: "a: bad unit" },
      { versionInfo: "", responseNonce: "4", error: "a: bad unit" },
    ]);
  });

  it("asks the Worker again about a refused snapshot on a new stream: it may have been mended", async () => {
    const server = await managementServer();
    server.push("v1", [{ name: "a", domain: "a" }]);
    const worker = workerStub(413, JSON.stringify({ error: "too large" }));
    startClient(server, await worker.listen());
    await until(() => nacks(server).length === 1);
    worker.answer.status = 200;
    await server.kill();
    await server.restart();
    await server.waitFor(({ request }) => request.versionInfo === "v1", 0, 5000);
    const snapshot = JSON.stringify({ configs: [{ name: "a", domain: "a" }] });
    expect(worker.puts).toEqual([snapshot, snapshot]);
  });

  it("takes a newer snapshot at once while a resend of the refused one waits its backoff", async () => {
    const server = await managementServer({ resendOnNack: true });
    server.push("v1", [{ name: "a", domain: "a" }]);
    const worker = workerStub(400, JSON.stringify({ error: "a: bad unit" }));
    const { client } = startClient(server, await worker.listen(), { XDS_CLIENT_BACKOFF_INITIAL_INTERVAL: "30s" });
    await until(() => nacks(server).length === 1 && server.seen.length === 2);
    // The resend (nonce 2) would wait 30 s for its NACK; v2 comes meanwhile, and the Worker takes it.
    await new Promise((resolve) => setTimeout(resolve, 200));
    worker.answer.status = 200;
    const pushed = Date.now();
    server.push("v2", [{ name: "b", domain: "b" }]);
    await client.firstAccepted;
    await until(() => answers(server).some((answer) => answer.versionInfo === "v2"));
    // Well within the 30 s backoff, with room for a loaded machine.
    expect(Date.now() - pushed).toBeLessThan(10_000);
    expect(worker.puts).toEqual([
      JSON.stringify({ configs: [{ name: "a", domain: "a" }] }),
      JSON.stringify({ configs: [{ name: "b", domain: "b" }] }),
    ]);
    expect(answers(server)).toEqual([
      { versionInfo: "", responseNonce: "", error: undefined },
      { versionInfo: "", responseNonce: "1", error: "a: bad unit" },
      // No stale answer to nonce 2: v2 replaced it.
      { versionInfo: "v2", responseNonce: "3", error: undefined },
    ]);
  });
});

describe("XdsConfigClient: stopping", () => {
  it("ends the backoff between two streams at once", async () => {
    const server = await managementServer();
    server.push("v1", [{ name: "a", domain: "a" }]);
    const worker = workerStub(200);
    const { client, log } = startClient(server, await worker.listen(), {
      XDS_CLIENT_BACKOFF_INITIAL_INTERVAL: "60s",
      XDS_CLIENT_BACKOFF_MAX_INTERVAL: "60s",
    });
    await client.firstAccepted;
    await server.kill();
    await until(() => log.mock.calls.some(([, message]) => String(message).startsWith("xds: stream closed")));

    const stopped = await Promise.race([
      client.stop().then(() => "stopped"),
      new Promise((resolve) => setTimeout(() => resolve("still waiting after 5 s"), 5000)),
    ]);

    expect(stopped).toBe("stopped");
  });
});
