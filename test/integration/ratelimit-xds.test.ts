// Configuration from an xDS management server (CONFIG_TYPE=GRPC_XDS_SOTW): a real management server written here
// with @grpc/grpc-js, the gateway process as the xDS client, a real `wrangler dev` whose runtime set each snapshot
// replaces. Covers the subscription, ACK and NACK, the server restarting, TLS, extra headers, and starting with or
// without a first configuration.
import grpc from "@grpc/grpc-js";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { makeCertificates, proto3Json, rateLimitClient, type Certificates } from "../support/grpc-gateway";
import { freePort } from "../support/processes.mjs";
import { getWithRetry, startWranglerDev, type DevServer } from "../support/wrangler-dev.mjs";
import { startManagementServer, TYPE_URL, type SeenDiscoveryRequest } from "../support/xds-server";
import { structOf } from "../support/ratelimit-xds";
import { limits, startXdsGatewayProcess, type GatewayProcess } from "../support/xds-gateway";

const TOKEN = "integration-admin-token";

let worker: DevServer;
let certs: Certificates;
let certDir: string;
const running: { stop(): Promise<void> }[] = [];

beforeAll(async () => {
  worker = await startWranglerDev({
    RATELIMIT_ADMIN_TOKEN: TOKEN,
    CONFIG_TYPE: "GRPC_XDS_SOTW",
    STATS_FLUSH_INTERVAL: "0",
    RESPONSE_DYNAMIC_METADATA: "true",
  });
  certDir = mkdtempSync(path.join(tmpdir(), "xds-certs-"));
  certs = makeCertificates(certDir);
});

afterEach(async () => {
  await Promise.all(running.splice(0).map((part) => part.stop()));
});

afterAll(async () => {
  await worker?.stop();
  rmSync(certDir, { recursive: true, force: true });
});

/** The gateway as the xDS client of the server on `serverPort` (see startXdsGateway), stopped after the test. */
async function startXdsGateway(serverPort: number, vars: Record<string, string> = {}): Promise<GatewayProcess> {
  const gateway = await startXdsGatewayProcess({ upstreamUrl: worker.url, token: TOKEN, serverPort, vars });
  running.push(gateway);
  return gateway;
}

async function managementServer(options: Parameters<typeof startManagementServer>[0] = {}) {
  const server = await startManagementServer(options);
  running.push({ stop: () => server.kill() });
  return server;
}

async function decide(domain: string, value: string) {
  const response = await fetch(`${worker.url}/json`, {
    method: "POST",
    body: JSON.stringify({ domain, descriptors: [{ entries: [{ key: "path", value }] }] }),
  });
  const text = await response.text();
  return { status: response.status, body: text.startsWith("{") ? JSON.parse(text) : text };
}

/** The limit /json reports for one path, or its error text. */
async function limitOf(domain: string, value: string) {
  const { status, body } = await decide(domain, value);
  return status === 200 || status === 429 ? body.statuses[0].currentLimit?.requestsPerUnit : `${status} ${body}`;
}

const isAnswerTo = (nonce: string) => (seen: SeenDiscoveryRequest) => seen.request.responseNonce === nonce;

async function statCounter(name: string): Promise<number> {
  const page = await (
    await getWithRetry(`${worker.url}/stats`, { headers: { Authorization: `Bearer ${TOKEN}` } })
  ).text();
  const line = page.split("\n").find((text) => text.startsWith(`${name}: `));
  return line ? Number(line.slice(name.length + 2)) : 0;
}

describe("CONFIG_TYPE=GRPC_XDS_SOTW", () => {
  it("subscribes, serves gRPC only after the first snapshot, then ACKs updates and NACKs a bad one", async () => {
    const server = await managementServer();
    const gateway = await startXdsGateway(server.port, {
      CONFIG_GRPC_XDS_NODE_ID: "edge-1",
      CONFIG_GRPC_XDS_NODE_METADATA: "zone=syd",
      CONFIG_GRPC_XDS_CLIENT_ADDITIONAL_HEADERS: "x-xds-token:s3cret, x-tenant:blue",
    });

    // The subscription: every RateLimitConfig, no version yet, as node edge-1, the extra headers as metadata.
    const subscription = await server.waitFor(() => true);
    expect(subscription.request).toEqual({
      versionInfo: "",
      node: {
        id: "edge-1",
        userAgentName: "edge-control-plane-ratelimit",
        metadata: { fields: { zone: { stringValue: "syd" } } },
      },
      typeUrl: TYPE_URL,
    });
    expect(subscription.headers).toMatchObject({ "x-xds-token": "s3cret", "x-tenant": "blue" });

    // No snapshot yet: the Worker has no configuration (the bundled files do not apply) and gRPC is not served.
    expect(await decide("mesh", "/login")).toEqual({ status: 400, body: "no rate limit configuration loaded" });
    await gateway.waitForLog("waiting for the first xDS snapshot");
    const early = rateLimitClient(`127.0.0.1:${gateway.port}`);
    expect(await early.check("", 1000)).toMatchObject({ ok: false, code: grpc.status.UNAVAILABLE });
    early.close();
    expect(gateway.output()).not.toContain("grpc-gateway: serving");

    // The first snapshot: stored in the Worker, ACKed with its version and nonce, and then gRPC is served.
    const first = server.push("v1", [limits("mesh-limits", "mesh", { "/login": 5 })]);
    const ack = await server.waitFor(isAnswerTo(first));
    expect(ack.request).toEqual({ ...subscription.request, versionInfo: "v1", responseNonce: first });
    await gateway.waitForLog("grpc-gateway: serving");
    expect(await limitOf("mesh", "/login")).toBe(5);
    const client = rateLimitClient(`127.0.0.1:${gateway.port}`);
    const viaGrpc = await client.shouldRateLimit({
      domain: "mesh",
      descriptors: [{ entries: [{ key: "path", value: "/login" }] }],
    });
    client.close();
    expect(viaGrpc.ok && proto3Json(viaGrpc.value)).toMatchObject({
      overallCode: "OK",
      statuses: [{ code: "OK", currentLimit: { requestsPerUnit: 5, unit: "MINUTE" }, limitRemaining: 3 }],
    });
    const files = await (
      await getWithRetry(`${worker.url}/rlconfig/files`, { headers: { Authorization: `Bearer ${TOKEN}` } })
    ).json();
    expect(files).toEqual({
      source: "runtime",
      version: expect.any(Number),
      domains: ["mesh"],
      files: {
        "mesh-limits":
          "domain: mesh\ndescriptors:\n  - key: path\n    value: /login\n    rate_limit:\n      unit: MINUTE\n      requests_per_unit: 5\n",
      },
      uploaded: ["mesh-limits"],
    });

    // An update replaces the whole set: ACK with the new version.
    const second = server.push("v2", [
      limits("mesh-limits", "mesh", { "/login": 50 }),
      limits("other-limits", "other", { "/": 7 }),
    ]);
    expect((await server.waitFor(isAnswerTo(second))).request).toEqual({
      ...subscription.request,
      versionInfo: "v2",
      responseNonce: second,
    });
    expect(await limitOf("mesh", "/login")).toBe(50);
    expect(await limitOf("other", "/")).toBe(7);

    // A bad update: NACK with the previous version and the Worker's message naming the resource; v2 stays.
    const bad = server.push("v3", [
      limits("mesh-limits", "mesh", { "/login": 1 }),
      { name: "broken", domain: "broken", descriptors: [{ key: "path", rateLimit: { requestsPerUnit: 5 } }] },
    ]);
    expect((await server.waitFor(isAnswerTo(bad))).request).toEqual({
      ...subscription.request,
      versionInfo: "v2",
      responseNonce: bad,
      errorDetail: { code: 3, message: "broken: invalid rate limit unit 'UNKNOWN'" },
    });
    expect(await limitOf("mesh", "/login")).toBe(50);

    // A resource that is not a RateLimitConfig is refused by the client itself.
    const wrongType = server.push("v4", [
      { typeUrl: "type.googleapis.com/google.protobuf.Empty", value: Buffer.alloc(0) },
    ]);
    expect((await server.waitFor(isAnswerTo(wrongType))).request).toEqual({
      ...subscription.request,
      versionInfo: "v2",
      responseNonce: wrongType,
      errorDetail: {
        code: 3,
        message: `resource 0 has type type.googleapis.com/google.protobuf.Empty, expected ${TYPE_URL}`,
      },
    });
    expect(await limitOf("mesh", "/login")).toBe(50);

    // The loads the Worker made count like file loads: v1 and v2 succeeded, v3 failed.
    expect(await statCounter("ratelimit.service.config_load_success")).toBe(2);
    expect(await statCounter("ratelimit.service.config_load_error")).toBe(1);

    // The server restarts with a new snapshot: the client opens a new stream after its backoff and subscribes
    // again with the version it holds, then takes the new snapshot.
    const before = server.seen.length;
    await server.kill();
    await gateway.waitForLog("xds: stream closed; opening a new one after the backoff");
    await server.restart({ version: "v5", resources: [limits("mesh-limits", "mesh", { "/login": 9 })] });
    const resubscription = await server.waitFor((seen) => seen.stream > subscription.stream, before);
    expect(resubscription.request).toEqual({ ...subscription.request, versionInfo: "v2" });
    expect(resubscription.headers).toMatchObject({ "x-xds-token": "s3cret", "x-tenant": "blue" });
    const fifth = await server.waitFor(
      (seen) => seen.stream === resubscription.stream && seen.request.versionInfo === "v5",
      before,
    );
    expect(fifth.request.errorDetail).toBeUndefined();
    expect(await limitOf("mesh", "/login")).toBe(9);
    // The snapshot is the whole set: "other" went with v2, so its domain is unknown now (OK without a limit).
    expect(await limitOf("other", "/")).toBeUndefined();
  });

  it("takes quota_mode, metadata and the algorithm extension from a snapshot, and decides by them", async () => {
    const server = await managementServer();
    server.push("newest-1", [
      {
        name: "newest-limits",
        domain: "newest",
        descriptors: [
          {
            key: "plan",
            quotaMode: true,
            metadata: structOf({ tier: "gold", limits: { daily: 100 }, tags: ["a"] }),
            rateLimit: { unit: "HOUR", requestsPerUnit: 1 },
          },
          { key: "addon", quotaMode: true, rateLimit: { unit: "HOUR", requestsPerUnit: 1 } },
          {
            key: "bucket",
            rateLimit: { unit: "HOUR", requestsPerUnit: 1, algorithm: { kind: "TOKEN_BUCKET", burst: 3 } },
          },
          {
            key: "sliding",
            rateLimit: {
              unit: "MINUTE",
              requestsPerUnit: 2,
              algorithm: { kind: "SLIDING_WINDOW", unitMultiplier: 60 },
            },
          },
        ],
      },
    ]);
    await startXdsGateway(server.port);
    // The snapshot goes out on the subscription: its answer is an ACK of the version (a NACK would carry the error).
    const answer = await server.waitFor((seen) => seen.request.responseNonce !== undefined);
    expect([answer.request.versionInfo, answer.request.errorDetail]).toEqual(["newest-1", undefined]);
    const files = await (
      await getWithRetry(`${worker.url}/rlconfig/files`, { headers: { Authorization: `Bearer ${TOKEN}` } })
    ).json();
    expect(files).toMatchObject({ domains: ["newest"] });
    const dump = await (
      await getWithRetry(`${worker.url}/rlconfig`, { headers: { Authorization: `Bearer ${TOKEN}` } })
    ).text();
    expect(dump).toBe(
      "newest.plan: unit=HOUR requests_per_unit=1, shadow_mode: false, quota_mode: true\n" +
        "newest.addon: unit=HOUR requests_per_unit=1, shadow_mode: false, quota_mode: true\n" +
        "newest.bucket: unit=HOUR requests_per_unit=1, shadow_mode: false, quota_mode: false, " +
        "algorithm: token_bucket, burst: 3\n" +
        "newest.sliding: unit=MINUTE requests_per_unit=2, shadow_mode: false, quota_mode: false, " +
        "algorithm: sliding_window, unit_multiplier: 60\n",
    );

    const post = async (descriptors: [string, string][]) => {
      const response = await fetch(`${worker.url}/json`, {
        method: "POST",
        body: JSON.stringify({
          domain: "newest",
          descriptors: descriptors.map(([key, value]) => ({ entries: [{ key, value }] })),
        }),
      });
      const body = (await response.json()) as {
        overallCode: string;
        statuses: { code: string }[];
        dynamicMetadata: unknown;
      };
      return { status: response.status, body };
    };
    // Quota mode: plan over alone fails the request; beside addon, a quota still under, it passes.
    const first = await post([["plan", "q"]]);
    expect(first.body.dynamicMetadata).toEqual({
      domain: "newest",
      descriptors: [{ entries: ["plan=q"] }],
      metadata: { tier: "gold", limits: { daily: 100 }, tags: ["a"] },
    });
    expect((await post([["plan", "q"]])).status).toBe(429);
    const both = await post([
      ["plan", "q"],
      ["addon", "q"],
    ]);
    expect([both.status, both.body.overallCode, both.body.statuses.map((s) => s.code)]).toEqual([
      200,
      "OK",
      ["OVER_LIMIT", "OK"],
    ]);
    // The over descriptor's metadata is left out.
    expect(both.body.dynamicMetadata).toEqual({
      domain: "newest",
      descriptors: [{ entries: ["plan=q"] }, { entries: ["addon=q"] }],
    });
    // A token bucket of 3 refilling one an hour, and a sliding hour of 2: no refill or slide within the test.
    const bucket = [];
    for (let i = 0; i < 4; i++) bucket.push((await post([["bucket", "b"]])).status);
    expect(bucket).toEqual([200, 200, 200, 429]);
    const sliding = [];
    for (let i = 0; i < 3; i++) sliding.push((await post([["sliding", "s"]])).status);
    expect(sliding).toEqual([200, 200, 429]);
  });

  it("speaks TLS to the management server, with a client certificate and the server name override", async () => {
    const server = await managementServer({
      tls: { ca: certs.caPem, cert: certs.serverCert, key: certs.serverKey, requireClientCertificate: true },
    });
    server.push("tls-1", [limits("tls-limits", "tls", { "/secure": 4 })]);
    const gateway = await startXdsGateway(server.port, {
      CONFIG_GRPC_XDS_SERVER_USE_TLS: "true",
      CONFIG_GRPC_XDS_SERVER_TLS_CACERT: certs.caPem,
      CONFIG_GRPC_XDS_CLIENT_TLS_CERT: certs.clientCert,
      CONFIG_GRPC_XDS_CLIENT_TLS_KEY: certs.clientKey,
      CONFIG_GRPC_XDS_SERVER_TLS_SAN: "localhost",
    });
    const ack = await server.waitFor((seen) => seen.request.versionInfo === "tls-1");
    expect(ack.request.errorDetail).toBeUndefined();
    await gateway.waitForLog("grpc-gateway: serving");
    expect(await limitOf("tls", "/secure")).toBe(4);
  });

  it("waits for a management server that is not up yet, trying to connect every CONFIG_GRPC_XDS_SERVER_CONNECT_RETRY_INTERVAL", async () => {
    const port = await freePort();
    const gateway = await startXdsGateway(port, { CONFIG_GRPC_XDS_SERVER_CONNECT_RETRY_INTERVAL: "100ms" });
    await gateway.waitForLog("waiting for the first xDS snapshot");
    // Its failed attempts are logged while it keeps trying.
    await gateway.waitForLog("xds: cannot reach the management server; trying again");
    await new Promise((resolve) => setTimeout(resolve, 500));
    const server = await managementServer({ port });
    server.push("late-server-1", [limits("late-server", "late-server", { "/y": 6 })]);
    // The first stream simply waited for the connection: it subscribes, takes the snapshot and ACKs it.
    const ack = await server.waitFor((seen) => seen.request.versionInfo === "late-server-1");
    expect(ack.stream).toBe(1);
    await gateway.waitForLog("grpc-gateway: serving");
    expect(gateway.output()).not.toContain("xds: stream failed");
    expect(await limitOf("late-server", "/y")).toBe(6);
  });

  it("refuses a response larger than XDS_CLIENT_MAX_MSG_SIZE_IN_BYTES, keeping the stored configuration", async () => {
    const server = await managementServer();
    server.push("small-1", [limits("small", "small", { "/a": 100 })]);
    const gateway = await startXdsGateway(server.port, { XDS_CLIENT_MAX_MSG_SIZE_IN_BYTES: "400" });
    await server.waitFor((seen) => seen.request.versionInfo === "small-1");
    expect(await limitOf("small", "/a")).toBe(100);

    const paths = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`/path-${i}`, i + 1]));
    const before = server.seen.length;
    server.push("big-1", [limits("small", "small", paths)]);
    await gateway.waitForLog('"code":"RESOURCE_EXHAUSTED"');
    // The client subscribes again with the version it holds; the big snapshot never reached the Worker.
    const again = await server.waitFor((seen) => seen.stream > 1, before);
    expect(again.request.versionInfo).toBe("small-1");
    expect(await limitOf("small", "/path-5")).toBeUndefined();
    expect(await limitOf("small", "/a")).toBe(100);
  });

  it("serves gRPC at once with FORCE_START_WITHOUT_INITIAL_CONFIG=true, answering without a configuration until one comes", async () => {
    // Back to no configuration at all: under xDS the bundled files never apply.
    const cleared = await fetch(`${worker.url}/rlconfig/files`, {
      method: "DELETE",
      headers: { Authorization: `Bearer ${TOKEN}` },
    });
    expect(await cleared.json()).toEqual({ source: "bundled", domains: [] });
    const server = await managementServer();
    const gateway = await startXdsGateway(server.port, { FORCE_START_WITHOUT_INITIAL_CONFIG: "true" });
    await gateway.waitForLog("grpc-gateway: serving");
    await server.waitFor(() => true);
    const client = rateLimitClient(`127.0.0.1:${gateway.port}`);
    const request = { domain: "late", descriptors: [{ entries: [{ key: "path", value: "/x" }] }] };
    expect(await client.shouldRateLimit(request)).toEqual({
      ok: false,
      code: grpc.status.UNKNOWN,
      details: "no rate limit configuration loaded",
    });

    const nonce = server.push("late-1", [limits("late-limits", "late", { "/x": 3 })]);
    await server.waitFor(isAnswerTo(nonce));
    const answer = await client.shouldRateLimit(request);
    client.close();
    expect(answer.ok && proto3Json(answer.value)).toMatchObject({
      overallCode: "OK",
      statuses: [{ code: "OK", currentLimit: { requestsPerUnit: 3, unit: "MINUTE" }, limitRemaining: 2 }],
    });
  });
});
