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

/** A stand-in Worker answering every PUT with `status`, counted; listening on `port` (0: any) once started. */
function workerStub(status: number, body = "{}") {
  const puts: string[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      puts.push(Buffer.concat(chunks).toString("utf8"));
      response.writeHead(status, { "content-type": "application/json" });
      response.end(body);
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
  return { puts, listen };
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

/** The xDS client of `server`, storing in the Worker at `workerUrl` with short retry delays; stopped after the test. */
function startClient(server: ManagementServer, workerUrl: string, retryDelaysMs = [50, 100, 200]) {
  const settings = gatewaySettings({
    CONFIG_TYPE: "GRPC_XDS_SOTW",
    RATELIMIT_ADMIN_TOKEN: "t",
    RATELIMIT_UPSTREAM_URL: workerUrl,
    CONFIG_GRPC_XDS_SERVER_URL: `127.0.0.1:${server.port}`,
    XDS_CLIENT_BACKOFF_INITIAL_INTERVAL: "200ms",
    XDS_CLIENT_BACKOFF_MAX_INTERVAL: "400ms",
    XDS_CLIENT_BACKOFF_JITTER: "false",
  });
  const log = vi.fn();
  const apply = workerApplier({ url: workerUrl, token: "t", log, retryDelaysMs });
  const client = new XdsConfigClient(settings, { apply, log }).start();
  cleanups.push(() => client.stop());
  return { client, log };
}

const answers = (server: ManagementServer) =>
  server.seen.map(({ request }) => ({
    versionInfo: request.versionInfo,
    responseNonce: request.responseNonce ?? "",
    error: request.errorDetail?.message,
  }));

describe("XdsConfigClient: a Worker that is away", () => {
  it("stores a snapshot once the Worker listens, without a NACK in between, and then ACKs it", async () => {
    const server = await managementServer();
    server.push("v1", [{ name: "a", domain: "a" }]);
    const port = await unusedPort();
    const worker = workerStub(200);
    const { client } = startClient(server, `http://127.0.0.1:${port}`);
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
});
