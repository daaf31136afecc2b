// Real HTTP/2 gRPC through the Node gateway to a real `wrangler dev`, with @grpc/grpc-js and proto/: decisions
// equal to POST /json's, dynamic metadata as a Struct, the health check, TLS (with reload) and mutual TLS, a unix
// socket, error codes, deadlines, connection age, SIGTERM and the command-line client. A stand-in upstream plays a
// slow or failing Worker.
import grpc from "@grpc/grpc-js";
import { execFile } from "node:child_process";
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { structToJson } from "../../grpc-gateway/proto.mjs";
import {
  clientEntry,
  gatewayRefusing,
  makeCertificates,
  proto3Json,
  rateLimitClient,
  startFakeUpstream,
  startGateway,
  type Certificates,
  type FakeUpstream,
  type Gateway,
  type RateLimitClient,
} from "../support/grpc-gateway";
import { freePort, startWranglerDev, type DevServer } from "../support/servers.mjs";
import { GOLD_METADATA, UNLIMITED_AND_BLOCKED_RULES } from "../support/ratelimit-rules";
import { everyKindOfDescriptor } from "../support/ratelimit-requests";

const ADMIN_TOKEN = "integration-admin-token";
const CONFIG = `domain: grpc-it
descriptors:
  - key: client
    rate_limit:
      unit: day
      requests_per_unit: 3
  - key: user
    rate_limit:
      name: per-user
      unit: day
      requests_per_unit: 2
  - key: path
    value: /free
${UNLIMITED_AND_BLOCKED_RULES}
`;

let worker: DevServer;
let temp: string;
let certs: Certificates;
let fake: FakeUpstream;
const gateways: Gateway[] = [];
const clients: RateLimitClient[] = [];
let plain: Gateway;

function track<T extends Gateway | RateLimitClient>(item: T): T {
  if ("child" in item) gateways.push(item);
  else clients.push(item);
  return item;
}

/** A gateway to the Worker serving TLS with the test certificates, asking clients for one from the test CA. */
async function mutualTlsGateway(extra: Record<string, string> = {}): Promise<Gateway> {
  return track(
    await startGateway({
      RATELIMIT_UPSTREAM_URL: worker.url,
      GRPC_PORT: "0",
      GRPC_SERVER_USE_TLS: "true",
      GRPC_SERVER_TLS_CERT: certs.serverCert,
      GRPC_SERVER_TLS_KEY: certs.serverKey,
      GRPC_CLIENT_TLS_CACERT: certs.caPem,
      ...extra,
    }),
  );
}

const descriptor = (...pairs: [string, string][]) => ({ entries: pairs.map(([key, value]) => ({ key, value })) });

/**
 * The seconds until reset follow the wall clock, so two calls a moment apart may differ by one: compared
 * apart from the rest (the Workers tests pin exact values with a frozen clock).
 */
function withoutResets(value: unknown): unknown {
  return JSON.parse(
    JSON.stringify(value, (key, field) => {
      if (key !== "durationUntilReset") return field;
      expect(field).toMatch(/^\d+s$/);
      return "<reset>";
    }),
  );
}

async function postJson(body: unknown): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${worker.url}/json`, { method: "POST", body: JSON.stringify(body) });
  return { status: response.status, body: await response.json() };
}

const run = promisify(execFile);

async function runClient(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [clientEntry, ...args]);
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

beforeAll(async () => {
  temp = mkdtempSync(path.join(tmpdir(), "grpc-it-"));
  certs = makeCertificates(temp);
  worker = await startWranglerDev({ RATELIMIT_ADMIN_TOKEN: ADMIN_TOKEN });
  const put = await fetch(`${worker.url}/rlconfig/files`, {
    method: "PUT",
    headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ files: { "grpc-it.yaml": CONFIG } }),
  });
  expect(put.status).toBe(200);
  fake = await startFakeUpstream();
  plain = track(await startGateway({ RATELIMIT_UPSTREAM_URL: worker.url, GRPC_PORT: String(await freePort()) }));
});

afterAll(async () => {
  for (const client of clients) client.close();
  await Promise.all(gateways.map((gateway) => gateway.stop()));
  await fake?.close();
  await worker?.stop();
  if (temp) rmSync(temp, { recursive: true, force: true });
});

describe("ShouldRateLimit through the gateway", () => {
  it("answers like POST /json for the same requests, on the same counters", async () => {
    const client = track(rateLimitClient(plain.target));
    // UInt64Value is {value} in a decoded message and a bare number in proto3 JSON.
    const request = (who: string, wrap: (n: number) => unknown) => ({
      domain: "grpc-it",
      descriptors: [
        ...everyKindOfDescriptor(who),
        {
          entries: [{ key: "client", value: `${who}-override` }],
          limit: { requestsPerUnit: 10, unit: "DAY" },
          hitsAddend: wrap(4),
        },
        { entries: [{ key: "client", value: `${who}-peek` }], hitsAddend: wrap(0) },
      ],
    });
    const grpcRequest = request("grpc", (n) => ({ value: String(n) }));
    const jsonRequest = request("json", (n) => n);
    for (let round = 0; round < 3; round++) {
      const viaGrpc = await client.shouldRateLimit(grpcRequest);
      const viaJson = await postJson(jsonRequest);
      expect(viaGrpc.ok).toBe(true);
      expect(withoutResets(proto3Json(viaGrpc.ok && viaGrpc.value))).toEqual(withoutResets(viaJson.body));
    }
    const last = await postJson(jsonRequest);
    expect(last).toEqual({
      status: 429,
      body: {
        overallCode: "OVER_LIMIT",
        statuses: [
          {
            code: "OVER_LIMIT",
            currentLimit: { requestsPerUnit: 3, unit: "DAY" },
            durationUntilReset: expect.stringMatching(/^\d+s$/),
          },
          {
            code: "OVER_LIMIT",
            currentLimit: { requestsPerUnit: 2, unit: "DAY", name: "per-user" },
            durationUntilReset: expect.stringMatching(/^\d+s$/),
          },
          { code: "OK" },
          { code: "OK", limitRemaining: 4294967295 },
          { code: "OK" },
          {
            code: "OVER_LIMIT",
            currentLimit: { requestsPerUnit: 10, unit: "DAY" },
            durationUntilReset: expect.stringMatching(/^\d+s$/),
          },
          {
            code: "OK",
            currentLimit: { requestsPerUnit: 3, unit: "DAY" },
            limitRemaining: 3,
            durationUntilReset: expect.stringMatching(/^\d+s$/),
          },
        ],
      },
    });

    // One key, alternating paths: each hit counts for both.
    const shared = { domain: "grpc-it", descriptors: [descriptor(["client", "shared"])] };
    const remaining = [];
    for (let i = 0; i < 2; i++) {
      const viaGrpc = await client.shouldRateLimit(shared);
      remaining.push((proto3Json(viaGrpc.ok && viaGrpc.value) as any).statuses[0].limitRemaining);
      remaining.push(((await postJson(shared)).body as any).statuses[0].limitRemaining);
    }
    expect(remaining).toEqual([2, 1, undefined, undefined]);
    const over = await client.shouldRateLimit(shared);
    expect(over.ok && over.value.overallCode).toBe("OVER_LIMIT");
  });

  it.each([
    [
      "an empty domain",
      { domain: "", descriptors: [descriptor(["a", "b"])] },
      grpc.status.UNKNOWN,
      "rate limit domain must not be empty",
    ],
    [
      "no descriptors",
      { domain: "grpc-it", descriptors: [] },
      grpc.status.UNKNOWN,
      "rate limit descriptor list must not be empty",
    ],
    [
      "an override without a unit",
      { domain: "grpc-it", descriptors: [{ entries: [{ key: "a", value: "b" }], limit: { requestsPerUnit: 5 } }] },
      grpc.status.INVALID_ARGUMENT,
      "descriptor 0: limit override needs a unit",
    ],
  ])("answers %s with the reference's status and message", async (_label, request, code, details) => {
    const client = track(rateLimitClient(plain.target));
    expect(await client.shouldRateLimit(request)).toEqual({ ok: false, code, details });
  });

  it("refuses 10,000 descriptors with INVALID_ARGUMENT naming the limit", async () => {
    const client = track(rateLimitClient(plain.target));
    const descriptors = Array.from({ length: 10_000 }, (_, i) => descriptor(["client", `many-${i}`]));
    expect(await client.shouldRateLimit({ domain: "grpc-it", descriptors })).toEqual({
      ok: false,
      code: grpc.status.INVALID_ARGUMENT,
      details: "the request has 10000 descriptors, more than 64 (the limit set by RATELIMIT_MAX_DESCRIPTORS)",
    });
  });

  it("refuses a 200 KB value with INVALID_ARGUMENT naming RATELIMIT_MAX_VALUE_BYTES, counting nothing", async () => {
    const client = track(rateLimitClient(plain.target));
    const id = `padded-${crypto.randomUUID()}`;
    const descriptors = [descriptor(["client", id]), descriptor(["client", "x".repeat(200_000)])];
    expect(await client.shouldRateLimit({ domain: "grpc-it", descriptors })).toEqual({
      ok: false,
      code: grpc.status.INVALID_ARGUMENT,
      details:
        "descriptor 1 entry 0: the value is 200000 bytes long, more than 65536 (the limit set by RATELIMIT_MAX_VALUE_BYTES)",
    });
    // The first descriptor was not counted either: its 3 a day are all left.
    const codes = [];
    for (let i = 0; i < 4; i++) {
      const answer = await client.shouldRateLimit({ domain: "grpc-it", descriptors: [descriptor(["client", id])] });
      codes.push(answer.ok && answer.value.overallCode);
    }
    expect(codes).toEqual(["OK", "OK", "OK", "OVER_LIMIT"]);
  });
});

const METADATA_CONFIG = `domain: grpc-meta
descriptors:
  - key: tagged
${GOLD_METADATA}
      free: true
      nothing: ~
    rate_limit:
      unit: day
      requests_per_unit: 5
  - key: unlimited
    metadata:
      open: true
    rate_limit:
      unlimited: true
  - key: client
    rate_limit:
      unit: day
      requests_per_unit: 3
`;

describe("RESPONSE_DYNAMIC_METADATA", () => {
  it("answers dynamic_metadata as a google.protobuf.Struct equal to what POST /json answers", async () => {
    const described = await startWranglerDev(
      { RATELIMIT_ADMIN_TOKEN: ADMIN_TOKEN, RESPONSE_DYNAMIC_METADATA: "true" },
      { name: "wrangler dev (dynamic metadata)" },
    );
    try {
      const put = await fetch(`${described.url}/rlconfig/files`, {
        method: "PUT",
        headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
        body: JSON.stringify({ files: { "grpc-meta.yaml": METADATA_CONFIG } }),
      });
      expect(put.status).toBe(200);
      const gateway = track(
        await startGateway({ RATELIMIT_UPSTREAM_URL: described.url, GRPC_PORT: String(await freePort()) }),
      );
      const client = track(rateLimitClient(gateway.target));
      // UInt64Value is {value} in a decoded message and a bare number in proto3 JSON.
      const request = (wrap: (n: number) => unknown) => ({
        domain: "grpc-meta",
        hitsAddend: 1,
        descriptors: [
          descriptor(["tagged", "t"]),
          { entries: [{ key: "unlimited", value: "u" }], hitsAddend: wrap(0) },
          { entries: [{ key: "client", value: "c" }], limit: { requestsPerUnit: 10, unit: "DAY" } },
        ],
      });
      const viaGrpc = await client.shouldRateLimit(request((n) => ({ value: String(n) })));
      const viaJson = await fetch(`${described.url}/json`, {
        method: "POST",
        body: JSON.stringify(request((n) => n)),
      });
      const json = (await viaJson.json()) as { dynamicMetadata: unknown };
      if (!viaGrpc.ok) throw new Error(`ShouldRateLimit failed: ${viaGrpc.details}`);
      const struct = viaGrpc.value.dynamicMetadata as { fields: Record<string, Record<string, any>> };
      // A Struct on the wire: each field a google.protobuf.Value.
      expect(struct.fields.domain).toEqual({ stringValue: "grpc-meta" });
      expect(struct.fields.hitsAddend).toEqual({ numberValue: 1 });
      expect(structToJson(struct)).toEqual(json.dynamicMetadata);
      // The unlimited rule's metadata (open: true) is not merged, as in the reference (ratelimit-reference.md §4.11).
      expect(json.dynamicMetadata).toEqual({
        domain: "grpc-meta",
        descriptors: [
          { entries: ["tagged=t"] },
          { entries: ["unlimited=u"], hitsAddend: 0 },
          { entries: ["client=c"], limit: "requests_per_unit:10 unit:DAY" },
        ],
        hitsAddend: 1,
        metadata: {
          tier: "gold",
          limits: { daily: 100 },
          tags: ["a", "b"],
          ratio: 0.5,
          free: true,
          nothing: null,
        },
      });
    } finally {
      await described.stop();
    }
  });
});

describe("health", () => {
  it("mirrors the Worker's /healthcheck for the service ratelimit", async () => {
    const client = track(rateLimitClient(plain.target));
    expect(await client.check("ratelimit")).toEqual({ ok: true, value: { status: "SERVING" } });
    expect(await client.check("envoy.service.ratelimit.v3.RateLimitService")).toEqual({
      ok: true,
      value: { status: "SERVING" },
    });
    expect(await client.check("")).toEqual({ ok: true, value: { status: "SERVING" } });
    expect(await client.check("nope")).toEqual({
      ok: false,
      code: grpc.status.NOT_FOUND,
      details: 'unknown service "nope"',
    });
  });

  it("answers NOT_SERVING while the Worker is unreachable, and UNAVAILABLE to calls long before their deadline", async () => {
    const nowhere = `http://127.0.0.1:${await freePort()}`;
    const gateway = track(await startGateway({ RATELIMIT_UPSTREAM_URL: nowhere, GRPC_PORT: "0" }));
    const client = track(rateLimitClient(gateway.target));
    expect(await client.check("ratelimit")).toEqual({ ok: true, value: { status: "NOT_SERVING" } });
    expect(await client.check("")).toEqual({ ok: true, value: { status: "SERVING" } });
    const call = await client.shouldRateLimit({ domain: "grpc-it", descriptors: [descriptor(["a", "b"])] }, 60_000);
    expect(call).toEqual({
      ok: false,
      code: grpc.status.UNAVAILABLE,
      details: "rate limit service unreachable: ECONNREFUSED",
    });
  });
});

describe("transport security and sockets", () => {
  it("serves TLS and picks up new certificate files without a restart", async () => {
    const cert = path.join(temp, "live-server.pem");
    const key = path.join(temp, "live-server.key");
    copyFileSync(certs.serverCert, cert);
    copyFileSync(certs.serverKey, key);
    const gateway = track(
      await startGateway({
        RATELIMIT_UPSTREAM_URL: worker.url,
        GRPC_PORT: "0",
        GRPC_SERVER_USE_TLS: "true",
        GRPC_SERVER_TLS_CERT: cert,
        GRPC_SERVER_TLS_KEY: key,
      }),
    );
    const trusting = (ca: string) => grpc.credentials.createSsl(readFileSync(ca));
    const request = { domain: "grpc-it", descriptors: [descriptor(["path", "/free"])] };
    const first = track(rateLimitClient(gateway.target, trusting(certs.caPem)));
    expect(await first.shouldRateLimit(request)).toMatchObject({ ok: true, value: { overallCode: "OK" } });
    const insecure = track(rateLimitClient(gateway.target));
    expect(await insecure.shouldRateLimit(request, 3000)).toMatchObject({ ok: false, code: grpc.status.UNAVAILABLE });

    // Replace the files; new connections get the new certificate once the watcher has seen the change.
    copyFileSync(certs.newServerKey, key);
    copyFileSync(certs.newServerCert, cert);
    let renewed;
    for (let attempt = 0; attempt < 40; attempt++) {
      const client = track(rateLimitClient(gateway.target, trusting(certs.newCaPem)));
      renewed = await client.shouldRateLimit(request, 3000);
      client.close();
      if (renewed.ok) break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(renewed).toMatchObject({ ok: true, value: { overallCode: "OK" } });
    expect(gateway.output()).toContain("grpc-gateway: TLS files reloaded");
    const stale = track(rateLimitClient(gateway.target, trusting(certs.caPem)));
    expect(await stale.shouldRateLimit(request, 3000)).toMatchObject({ ok: false, code: grpc.status.UNAVAILABLE });
  });

  it("requires a client certificate from the client CA, naming GRPC_CLIENT_TLS_SAN, under mutual TLS", async () => {
    const gateway = await mutualTlsGateway({ GRPC_CLIENT_TLS_SAN: "client.example" });
    const ca = readFileSync(certs.caPem);
    const withCertificate = (cert: string, key: string) =>
      grpc.credentials.createSsl(ca, readFileSync(key), readFileSync(cert));
    const request = { domain: "grpc-it", descriptors: [descriptor(["path", "/free"])] };

    const good = track(rateLimitClient(gateway.target, withCertificate(certs.clientCert, certs.clientKey)));
    expect(await good.shouldRateLimit(request)).toMatchObject({ ok: true, value: { overallCode: "OK" } });
    expect(await good.check("ratelimit")).toEqual({ ok: true, value: { status: "SERVING" } });

    const anonymous = track(rateLimitClient(gateway.target, grpc.credentials.createSsl(ca)));
    expect(await anonymous.shouldRateLimit(request, 3000)).toMatchObject({ ok: false, code: grpc.status.UNAVAILABLE });

    const otherName = track(
      rateLimitClient(gateway.target, withCertificate(certs.otherClientCert, certs.otherClientKey)),
    );
    expect(await otherName.shouldRateLimit(request)).toEqual({
      ok: false,
      code: grpc.status.UNAUTHENTICATED,
      details: "client certificate does not name client.example",
    });
  });

  it("serves on a unix socket with GRPC_UDS", async () => {
    const socket = path.join(temp, "gateway.sock");
    const gateway = track(await startGateway({ RATELIMIT_UPSTREAM_URL: worker.url, GRPC_UDS: socket }));
    expect(gateway.target).toBe(`unix:${socket}`);
    const client = track(rateLimitClient(gateway.target));
    expect(
      await client.shouldRateLimit({ domain: "grpc-it", descriptors: [descriptor(["unlimited", "uds"])] }),
    ).toEqual({
      ok: true,
      value: { overallCode: "OK", statuses: [{ code: "OK", limitRemaining: 4294967295 }] },
    });
  });

  it("sends a GOAWAY at GRPC_MAX_CONNECTION_AGE, and the client reconnects", async () => {
    const gateway = track(
      await startGateway({
        RATELIMIT_UPSTREAM_URL: worker.url,
        GRPC_PORT: "0",
        GRPC_MAX_CONNECTION_AGE: "500ms",
        GRPC_MAX_CONNECTION_AGE_GRACE: "1s",
      }),
    );
    const client = track(rateLimitClient(gateway.target));
    const request = { domain: "grpc-it", descriptors: [descriptor(["path", "/free"])] };
    expect(await client.shouldRateLimit(request)).toMatchObject({ ok: true });
    // Without a GOAWAY an idle channel stays READY for half an hour (grpc-js's idle timeout).
    const states = [];
    for (let i = 0; i < 100 && states.at(-1) !== grpc.connectivityState.IDLE; i++) {
      states.push(client.channel.getConnectivityState(false));
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(states.at(-1)).toBe(grpc.connectivityState.IDLE);
    expect(await client.shouldRateLimit(request)).toMatchObject({ ok: true });
  });

  it("refuses malformed settings at start, naming the variable", async () => {
    expect(await gatewayRefusing({ GRPC_MAX_CONNECTION_AGE: "soon" })).toEqual({
      code: 1,
      output: expect.stringContaining(
        'invalid gateway settings: GRPC_MAX_CONNECTION_AGE: expected a duration such as \\"10s\\"',
      ),
    });
    expect(await gatewayRefusing({ GRPC_SERVER_USE_TLS: "true" })).toEqual({
      code: 1,
      output: expect.stringContaining("GRPC_SERVER_TLS_CERT: is required when GRPC_SERVER_USE_TLS is true"),
    });
  });
});

describe("a slow or failing Worker (stand-in upstream)", () => {
  let gateway: Gateway;
  let client: RateLimitClient;

  beforeAll(async () => {
    gateway = track(
      await startGateway({ RATELIMIT_UPSTREAM_URL: fake.url, GRPC_PORT: "0", GRPC_GATEWAY_DRAIN_TIME: "2s" }),
    );
    client = track(rateLimitClient(gateway.target));
  });

  it("forwards the raw request as Connect application/proto with the caller's deadline", async () => {
    fake.answer = { delayMs: 200, status: 200, contentType: "application/proto", body: Buffer.from([0x08, 0x02]) };
    const result = await client.shouldRateLimit({ domain: "d", descriptors: [descriptor(["k", "v"])] }, 5000);
    expect(result).toEqual({ ok: true, value: { overallCode: "OVER_LIMIT" } });
    const seen = fake.seen.at(-1)!;
    expect(seen.method).toBe("POST");
    expect(seen.url).toBe("/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit");
    expect(seen.headers["content-type"]).toBe("application/proto");
    expect(seen.headers["connect-protocol-version"]).toBe("1");
    const timeout = Number(seen.headers["connect-timeout-ms"]);
    expect(timeout).toBeGreaterThan(0);
    expect(timeout).toBeLessThanOrEqual(5000);
    // domain "d" (field 1) and one descriptor (field 2), exactly as the caller encoded them.
    expect(seen.body.subarray(0, 3)).toEqual(Buffer.from([0x0a, 0x01, 0x64]));
  });

  it("answers DEADLINE_EXCEEDED at the caller's deadline and abandons the upstream request", async () => {
    fake.answer = { delayMs: 5000, status: 200, contentType: "application/proto", body: Buffer.from([0x08, 0x01]) };
    const before = fake.seen.length;
    const result = await client.shouldRateLimit({ domain: "d", descriptors: [descriptor(["k", "slow"])] }, 300);
    expect(result).toMatchObject({ ok: false, code: grpc.status.DEADLINE_EXCEEDED });
    const seen = fake.seen[before];
    expect(Number(seen.headers["connect-timeout-ms"])).toBeLessThanOrEqual(300);
    // The stand-in would answer after 5 s; the gateway hangs up long before.
    for (let i = 0; i < 30 && !seen.abandoned; i++) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(seen.abandoned).toBe(true);
  });

  it.each([
    [
      500,
      "application/json",
      JSON.stringify({ code: "resource_exhausted", message: "slow down" }),
      grpc.status.RESOURCE_EXHAUSTED,
      "slow down",
    ],
    [
      504,
      "application/json",
      JSON.stringify({ code: "deadline_exceeded", message: "the operation timed out" }),
      grpc.status.DEADLINE_EXCEEDED,
      "the operation timed out",
    ],
    [502, "text/html", "<html>bad gateway</html>", grpc.status.UNAVAILABLE, "rate limit service answered HTTP 502"],
    [404, "text/plain", "no route", grpc.status.UNIMPLEMENTED, "rate limit service answered HTTP 404"],
  ])("maps an HTTP %i %s answer to a gRPC status", async (status, contentType, body, code, details) => {
    fake.answer = { delayMs: 0, status, contentType, body };
    expect(await client.shouldRateLimit({ domain: "d", descriptors: [descriptor(["k", "v"])] })).toEqual({
      ok: false,
      code,
      details,
    });
  });

  it("refuses a message over RATELIMIT_MAX_REQUEST_BYTES with RESOURCE_EXHAUSTED without forwarding it", async () => {
    const before = fake.seen.length;
    const request = { domain: "x".repeat(1024 * 1024), descriptors: [descriptor(["k", "v"])] };
    // grpc-js's own refusal, as grpc-go's: the message is the 1 MiB domain plus 14 bytes of framing and descriptor.
    expect(await client.shouldRateLimit(request)).toEqual({
      ok: false,
      code: grpc.status.RESOURCE_EXHAUSTED,
      details: "Received message larger than max (1048590 vs 1048576)",
    });
    expect(fake.seen.length).toBe(before);
  });

  it("sends a call again on a fresh connection when a kept-alive one turns out closed", async () => {
    fake.answer = { delayMs: 0, status: 200, contentType: "application/proto", body: Buffer.from([0x08, 0x01]) };
    const request = { domain: "d", descriptors: [descriptor(["k", "keep-alive"])] };
    expect(await client.shouldRateLimit(request)).toEqual({ ok: true, value: { overallCode: "OK" } });
    fake.answer = { ...fake.answer, resetReusedSockets: true };
    const before = fake.seen.length;
    expect(await client.shouldRateLimit(request)).toEqual({ ok: true, value: { overallCode: "OK" } });
    expect(fake.seen.slice(before).map((seen) => seen.abandoned)).toEqual([true, false]);
    fake.answer = { ...fake.answer, resetReusedSockets: false };
  });

  it("on SIGTERM turns NOT_SERVING, finishes the calls in flight, then exits", async () => {
    // The call outlives the 2 s drain, so it is still in flight when the server stops taking calls.
    fake.answer = { delayMs: 3000, status: 200, contentType: "application/proto", body: Buffer.from([0x08, 0x01]) };
    const before = fake.seen.length;
    const inFlight = client.shouldRateLimit({ domain: "d", descriptors: [descriptor(["k", "in-flight"])] }, 10_000);
    while (fake.seen.length === before) await new Promise((resolve) => setTimeout(resolve, 20));
    gateway.child.kill("SIGTERM");
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await client.check("")).toEqual({ ok: true, value: { status: "NOT_SERVING" } });
    expect(await client.check("ratelimit")).toEqual({ ok: true, value: { status: "NOT_SERVING" } });
    expect(await inFlight).toEqual({ ok: true, value: { overallCode: "OK" } });
    expect(await gateway.exited).toBe(0);
    expect(gateway.output()).toContain("grpc-gateway: stopped");
  });
});

describe("the command-line client", () => {
  it("prints the decision, as POST /json gives it, for repeated -descriptors", async () => {
    const result = await runClient([
      "-dial_string",
      plain.target,
      "-domain",
      "grpc-it",
      "-descriptors",
      "client=cli",
      "-descriptors",
      "user=cli,extra=x",
    ]);
    expect(result.code).toBe(0);
    const line = result.stdout.split("\n").find((text) => text.startsWith("response: "))!;
    const printed = JSON.parse(line.slice("response: ".length));
    const viaJson = await postJson({
      domain: "grpc-it",
      descriptors: [descriptor(["client", "cli-json"]), descriptor(["user", "cli"], ["extra", "x"])],
    });
    expect(withoutResets(printed)).toEqual(withoutResets(viaJson.body));
    expect(printed.statuses[0]).toMatchObject({ code: "OK", limitRemaining: 2 });
  });

  it("exits 1 with the status on an error, and on a malformed descriptor", async () => {
    const failed = await runClient(["-dial_string", plain.target, "-domain=", "-descriptors", "a=b"]);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain(
      "request error: rpc error: code = Unknown desc = rate limit domain must not be empty",
    );
    const malformed = await runClient(["-dial_string", plain.target, "-domain", "grpc-it", "-descriptors", "a=b=c"]);
    expect(malformed.code).toBe(1);
    expect(malformed.stderr).toContain('invalid descriptor list: "a=b=c"');
    const unreachable = await runClient([
      "-dial_string",
      `127.0.0.1:${await freePort()}`,
      "-domain",
      "grpc-it",
      "-descriptors",
      "a=b",
    ]);
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toContain("request error: rpc error: code = Unavailable");
  });

  it("speaks TLS with -grpc-use-tls and the CA file", async () => {
    const gateway = await mutualTlsGateway();
    const result = await runClient([
      "-dial_string",
      gateway.target,
      "-grpc-use-tls",
      "-grpc-server-ca-file",
      certs.caPem,
      "-grpc-cert-file",
      certs.clientCert,
      "-grpc-key-file",
      certs.clientKey,
      "-domain",
      "grpc-it",
      "-descriptors",
      "unlimited=cli",
    ]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(
      'response: {"overallCode":"OK","statuses":[{"code":"OK","limitRemaining":4294967295}]}',
    );
  });
});
