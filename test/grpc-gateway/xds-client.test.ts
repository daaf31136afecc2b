// Unit tests of the gateway's xDS client pieces in plain Node: the reconnect backoff, decoding RateLimitConfig Any
// resources, storing a snapshot in the Worker (against a local HTTP stub), and the xDS settings of gatewaySettings.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it, vi } from "vitest";
import { gatewaySettings } from "../../grpc-gateway/settings.mjs";
import {
  backoffDelayMs,
  decodeRateLimitConfigs,
  RATE_LIMIT_CONFIG_TYPE_URL,
  rateLimitConfigType,
  workerApplier,
} from "../../grpc-gateway/xds-client.mjs";
import { xdsConfigsToFiles } from "../../src/ratelimit/config/xds";
import { getLimit, loadConfig } from "../../src/ratelimit/core/config";
import { shopConfig, structOf } from "../support/ratelimit-xds";

/** google.protobuf.Any as @grpc/proto-loader gives it, holding this RateLimitConfig. */
function anyOf(config: Record<string, unknown>): { type_url: string; value: Buffer } {
  const value = Buffer.from(rateLimitConfigType.encode(rateLimitConfigType.fromObject(config)).finish());
  return { type_url: RATE_LIMIT_CONFIG_TYPE_URL, value };
}

describe("backoffDelayMs", () => {
  const backoff = { initialMs: 10_000, maxMs: 60_000, randomFactor: 0.5, jitter: false };

  it("doubles the initial interval per failure and stops at the maximum, without jitter", () => {
    const never = vi.fn(() => 0.3);
    expect([0, 1, 2, 3, 4, 5].map((failures) => backoffDelayMs(failures, backoff, never))).toEqual([
      10_000, 20_000, 40_000, 60_000, 60_000, 60_000,
    ]);
    expect(backoffDelayMs(1000, backoff, never)).toBe(60_000);
    expect(never).not.toHaveBeenCalled();
  });

  it("spreads each wait by plus or minus randomFactor of itself with jitter", () => {
    const jittered = { ...backoff, jitter: true };
    expect(backoffDelayMs(0, jittered, () => 0)).toBe(5_000);
    expect(backoffDelayMs(0, jittered, () => 0.5)).toBe(10_000);
    expect(backoffDelayMs(0, jittered, () => 0.999999)).toBe(15_000);
    expect(backoffDelayMs(1, jittered, () => 0)).toBe(10_000);
    expect(backoffDelayMs(1, jittered, () => 0.25)).toBe(15_000);
    expect(backoffDelayMs(2, { ...jittered, randomFactor: 0.1 }, () => 0)).toBe(36_000);
    // The spread applies after the cap, so a capped wait ranges over maxMs ± randomFactor.
    expect(backoffDelayMs(9, jittered, () => 0)).toBe(30_000);
    expect(backoffDelayMs(9, jittered, () => 0.999999)).toBe(90_000);
  });

  it("uses Math.random by default, and no randomness when randomFactor is 0", () => {
    vi.spyOn(Math, "random").mockReturnValue(0);
    try {
      expect(backoffDelayMs(0, { ...backoff, jitter: true })).toBe(5_000);
    } finally {
      vi.restoreAllMocks();
    }
    const random = vi.fn(() => 0);
    expect(backoffDelayMs(1, { ...backoff, jitter: true, randomFactor: 0 }, random)).toBe(20_000);
    expect(random).not.toHaveBeenCalled();
  });
});

describe("decodeRateLimitConfigs", () => {
  const shop = shopConfig(100);

  it("exports the RateLimitConfig type URL", () => {
    expect(RATE_LIMIT_CONFIG_TYPE_URL).toBe("type.googleapis.com/ratelimit.config.ratelimit.v3.RateLimitConfig");
  });

  it("decodes each resource into proto3 JSON (camelCase, enums as names, unset fields left out), in order", () => {
    const decoded = decodeRateLimitConfigs([anyOf(shop), anyOf({ name: "empty" })]);
    expect(decoded).toEqual({ ok: true, configs: [shop, { name: "empty" }] });
  });

  it("keeps default values a server writes on the wire explicitly, and the Worker's form still reads them", () => {
    // protobufjs writes fields set to their default (as some servers do); the decoder reports them as present.
    const config = {
      name: "defaults",
      domain: "d",
      descriptors: [
        {
          key: "k",
          value: "",
          shadowMode: false,
          quotaMode: false,
          rateLimit: { unit: "UNKNOWN", requestsPerUnit: 0 },
        },
      ],
    };
    const decoded = decodeRateLimitConfigs([anyOf(config)]);
    expect(decoded).toEqual({ ok: true, configs: [config] });
    if (!decoded.ok) return;
    expect(xdsConfigsToFiles(decoded.configs)).toEqual({
      ok: true,
      value: [
        {
          name: "defaults",
          text: "domain: d\ndescriptors:\n  - key: k\n    rate_limit:\n      unit: UNKNOWN\n      requests_per_unit: 0\n",
        },
      ],
    });
  });

  it("gives what the Worker's xDS form reads: the decoded snapshot converts to YAML files", () => {
    const decoded = decodeRateLimitConfigs([anyOf(shop), anyOf({ name: "a", domain: "a" })]);
    if (!decoded.ok) throw new Error(decoded.error);
    const files = xdsConfigsToFiles(decoded.configs);
    expect(files.ok && files.value.map((file) => file.name)).toEqual(["a", "shop-config"]);
    expect(files.ok && files.value[0].text).toBe("domain: a\ndescriptors: []\n");
  });

  it("decodes quota_mode, metadata (a Struct) and the algorithm extension into what the Worker loads", () => {
    const metadata = { tier: "gold", limits: { daily: 100 }, tags: ["a", "b"], ratio: 0.5, free: true, nothing: null };
    const newest = {
      name: "newest-config",
      domain: "newest",
      descriptors: [
        {
          key: "plan",
          quotaMode: true,
          metadata: structOf(metadata),
          rateLimit: { unit: "MINUTE", requestsPerUnit: 1 },
        },
        {
          key: "sliding",
          rateLimit: { unit: "SECOND", requestsPerUnit: 10, algorithm: { kind: "SLIDING_WINDOW", unitMultiplier: 2 } },
        },
        {
          key: "bucket",
          rateLimit: { unit: "MINUTE", requestsPerUnit: 5, algorithm: { kind: "TOKEN_BUCKET", burst: 20 } },
        },
      ],
    };
    const decoded = decodeRateLimitConfigs([anyOf(newest)]);
    expect(decoded).toEqual({
      ok: true,
      configs: [{ ...newest, descriptors: [{ ...newest.descriptors[0], metadata }, ...newest.descriptors.slice(1)] }],
    });
    if (!decoded.ok) return;
    const files = xdsConfigsToFiles(decoded.configs);
    if (!files.ok) throw new Error(files.error);
    const loaded = loadConfig(files.value, { mergeDomainConfig: false });
    if (!loaded.ok) throw new Error(loaded.error.message);
    const limitOf = (key: string) => getLimit(loaded.value, "newest", { entries: [{ key, value: "x" }] });
    expect(limitOf("plan")).toMatchObject({ quotaMode: true, metadata, algorithm: "fixed_window", windowSeconds: 60 });
    expect(limitOf("sliding")).toMatchObject({ algorithm: "sliding_window", windowSeconds: 2, capacity: 10 });
    expect(limitOf("bucket")).toMatchObject({ algorithm: "token_bucket", windowSeconds: 60, capacity: 20 });
  });

  it("accepts an empty snapshot", () => {
    expect(decodeRateLimitConfigs([])).toEqual({ ok: true, configs: [] });
  });

  it.each<[string, { type_url?: string; value: Buffer }[], string]>([
    [
      "a resource of another type",
      [anyOf({ name: "a" }), { type_url: "type.googleapis.com/google.protobuf.Empty", value: Buffer.alloc(0) }],
      `resource 1 has type type.googleapis.com/google.protobuf.Empty, expected ${RATE_LIMIT_CONFIG_TYPE_URL}`,
    ],
    [
      "a resource without a type",
      [{ value: Buffer.alloc(0) }],
      `resource 0 has type (none), expected ${RATE_LIMIT_CONFIG_TYPE_URL}`,
    ],
    [
      "an empty type",
      [{ type_url: "", value: Buffer.alloc(0) }],
      `resource 0 has type (none), expected ${RATE_LIMIT_CONFIG_TYPE_URL}`,
    ],
    [
      "an invalid wire type",
      [anyOf({ name: "a" }), { type_url: RATE_LIMIT_CONFIG_TYPE_URL, value: Buffer.from([0x4f]) }],
      "resource 1 cannot be decoded: invalid wire type 7 at offset 1",
    ],
    [
      "a truncated field",
      [{ type_url: RATE_LIMIT_CONFIG_TYPE_URL, value: Buffer.from([0x4a, 0x05, 0x61]) }],
      "resource 0 cannot be decoded: index out of range: 2 + 5 > 3",
    ],
  ])("refuses %s", (_label, resources, error) => {
    expect(decodeRateLimitConfigs(resources)).toEqual({ ok: false, error });
  });
});

interface SeenRequest {
  method: string;
  url: string;
  authorization: string | undefined;
  contentType: string | undefined;
  body: string;
}

interface Answer {
  status: number;
  body: string;
}

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** A stand-in for the Worker that records each request and gives the answers in turn (the last one repeats). */
async function startWorkerStub(answers: Answer[]): Promise<{ url: string; seen: SeenRequest[] }> {
  const seen: SeenRequest[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      seen.push({
        method: request.method ?? "",
        url: request.url ?? "",
        authorization: request.headers.authorization,
        contentType: request.headers["content-type"],
        body: Buffer.concat(chunks).toString("utf8"),
      });
      const answer = answers[Math.min(seen.length, answers.length) - 1];
      response.writeHead(answer.status, { "content-type": "application/json" });
      response.end(answer.body);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

describe("workerApplier", () => {
  const configs = [{ name: "a", domain: "a" }];
  const OK: Answer = { status: 200, body: '{"domains":["a"]}' };
  const UNAVAILABLE: Answer = { status: 503, body: "busy" };

  it("PUTs the snapshot as {configs} to /rlconfig/files with the bearer, and answers ok on 200", async () => {
    const stub = await startWorkerStub([OK]);
    const log = vi.fn();
    const apply = workerApplier({ url: stub.url, token: "secret-token", log, retryDelaysMs: [10, 10] });
    expect(await apply(configs, "v1")).toEqual({ ok: true });
    expect(stub.seen).toEqual([
      {
        method: "PUT",
        url: "/rlconfig/files",
        authorization: "Bearer secret-token",
        contentType: "application/json",
        body: JSON.stringify({ configs }),
      },
    ]);
    expect(log).not.toHaveBeenCalled();
  });

  it("retries a 5xx answer after each delay, then succeeds", async () => {
    const stub = await startWorkerStub([UNAVAILABLE, UNAVAILABLE, OK]);
    const log = vi.fn();
    const apply = workerApplier({ url: stub.url, token: "t", log, retryDelaysMs: [10, 10] });
    expect(await apply(configs, "v2")).toEqual({ ok: true });
    expect(stub.seen.length).toBe(3);
    expect(stub.seen.every((request) => request.body === JSON.stringify({ configs }))).toBe(true);
    const problem = "the rate limit service answered 503";
    expect(log.mock.calls).toEqual([
      ["warn", "xds: storing the snapshot failed", { version: "v2", attempt: 1, problem }],
      ["warn", "xds: storing the snapshot failed", { version: "v2", attempt: 2, problem }],
    ]);
  });

  it("gives up after the last retry with the last problem", async () => {
    const stub = await startWorkerStub([{ status: 500, body: "" }, { status: 502, body: "" }, UNAVAILABLE]);
    const log = vi.fn();
    const apply = workerApplier({ url: stub.url, token: "t", log, retryDelaysMs: [10, 10] });
    expect(await apply(configs, "v3")).toEqual({ ok: false, error: "the rate limit service answered 503" });
    expect(stub.seen.length).toBe(3);
    expect(log).toHaveBeenCalledTimes(3);
  });

  /** The Worker refuses once: the applier passes `error` on without retrying or logging. */
  async function expectPassedOn(refusal: { status: number; body: string }, error: string) {
    const stub = await startWorkerStub([refusal, OK]);
    const log = vi.fn();
    const apply = workerApplier({ url: stub.url, token: "t", log, retryDelaysMs: [10, 10] });
    expect(await apply(configs, "v5")).toEqual({ ok: false, error });
    expect(stub.seen.length).toBe(1);
    expect(log).not.toHaveBeenCalled();
  }

  it.each([401, 404])("does not retry a %i answer", async (status) => {
    const stub = await startWorkerStub([{ status, body: "no" }, OK]);
    const apply = workerApplier({ url: stub.url, token: "t", log: vi.fn(), retryDelaysMs: [10, 10] });
    expect(await apply(configs, "v4")).toEqual({ ok: false, error: `the rate limit service answered ${status}` });
    expect(stub.seen.length).toBe(1);
  });

  it.each<[string, string, string]>([
    [
      "the Worker's error message",
      '{"error":"a: invalid rate limit unit \'UNKNOWN\'"}',
      "a: invalid rate limit unit 'UNKNOWN'",
    ],
    ["a body without an error field, as is", '{"message":"x"}', '{"message":"x"}'],
    ["a body that is not JSON, as is", "not json", "not json"],
  ])("passes on a 400 refusal without retrying: %s", async (_label, body, error) => {
    await expectPassedOn({ status: 400, body }, error);
  });

  it("passes on a 413 refusal, a snapshot over the Worker's body limit, without retrying", async () => {
    const error = "request body is larger than 4194304 bytes (the limit set by RATELIMIT_CONFIG_MAX_BODY_BYTES)";
    await expectPassedOn({ status: 413, body: JSON.stringify({ error }) }, error);
  });

  it("retries an unreachable Worker, then gives up saying so", async () => {
    const stub = await startWorkerStub([OK]);
    const closed = servers.pop()!;
    await new Promise((resolve) => closed.close(resolve));
    const log = vi.fn();
    const apply = workerApplier({ url: stub.url, token: "t", log, retryDelaysMs: [10, 10] });
    const problem = "the rate limit service cannot be reached: fetch failed";
    expect(await apply(configs, "v6")).toEqual({ ok: false, error: problem });
    expect(log.mock.calls.map((call) => call[2])).toEqual([
      { version: "v6", attempt: 1, problem },
      { version: "v6", attempt: 2, problem },
      { version: "v6", attempt: 3, problem },
    ]);
  });
});

describe("gatewaySettings: xDS", () => {
  const HEADERS_PROBLEM =
    "CONFIG_GRPC_XDS_CLIENT_ADDITIONAL_HEADERS: expected CONFIG_GRPC_XDS_CLIENT_ADDITIONAL_HEADERS as name:value pairs " +
    "separated by commas";

  it("has the reference's defaults", () => {
    expect(gatewaySettings({})).toMatchObject({
      CONFIG_TYPE: "FILE",
      FORCE_START_WITHOUT_INITIAL_CONFIG: false,
      CONFIG_GRPC_XDS_NODE_ID: "default",
      CONFIG_GRPC_XDS_NODE_METADATA: [],
      CONFIG_GRPC_XDS_SERVER_URL: "localhost:18000",
      CONFIG_GRPC_XDS_SERVER_CONNECT_RETRY_INTERVAL: 3_000,
      XDS_CLIENT_BACKOFF_INITIAL_INTERVAL: 10_000,
      XDS_CLIENT_BACKOFF_MAX_INTERVAL: 60_000,
      XDS_CLIENT_BACKOFF_RANDOM_FACTOR: 0.5,
      XDS_CLIENT_BACKOFF_JITTER: true,
      XDS_CLIENT_MAX_MSG_SIZE_IN_BYTES: 0,
      CONFIG_GRPC_XDS_SERVER_USE_TLS: false,
      CONFIG_GRPC_XDS_CLIENT_ADDITIONAL_HEADERS: [],
    });
    const settings = gatewaySettings({});
    const unset: (keyof typeof settings)[] = [
      "RATELIMIT_ADMIN_TOKEN",
      "CONFIG_GRPC_XDS_SERVER_TLS_CACERT",
      "CONFIG_GRPC_XDS_CLIENT_TLS_CERT",
      "CONFIG_GRPC_XDS_CLIENT_TLS_KEY",
      "CONFIG_GRPC_XDS_SERVER_TLS_SAN",
    ];
    expect(unset.filter((name) => settings[name] !== undefined)).toEqual([]);
  });

  it("reads every xDS variable", () => {
    const settings = gatewaySettings({
      CONFIG_TYPE: "GRPC_XDS_SOTW",
      FORCE_START_WITHOUT_INITIAL_CONFIG: "true",
      RATELIMIT_ADMIN_TOKEN: "admin-token",
      CONFIG_GRPC_XDS_NODE_ID: "node-7",
      CONFIG_GRPC_XDS_NODE_METADATA: "zone=eu, team = a=b",
      CONFIG_GRPC_XDS_SERVER_URL: "xds.internal:9000",
      CONFIG_GRPC_XDS_SERVER_CONNECT_RETRY_INTERVAL: "500ms",
      XDS_CLIENT_BACKOFF_INITIAL_INTERVAL: "1s",
      XDS_CLIENT_BACKOFF_MAX_INTERVAL: "2m",
      XDS_CLIENT_BACKOFF_RANDOM_FACTOR: "0.2",
      XDS_CLIENT_BACKOFF_JITTER: "false",
      XDS_CLIENT_MAX_MSG_SIZE_IN_BYTES: "1048576",
      CONFIG_GRPC_XDS_SERVER_USE_TLS: "1",
      CONFIG_GRPC_XDS_SERVER_TLS_CACERT: "/ca.pem",
      CONFIG_GRPC_XDS_CLIENT_TLS_CERT: "/cert.pem",
      CONFIG_GRPC_XDS_CLIENT_TLS_KEY: "/key.pem",
      CONFIG_GRPC_XDS_SERVER_TLS_SAN: "xds.example",
      CONFIG_GRPC_XDS_CLIENT_ADDITIONAL_HEADERS: " Authorization : Bearer a:b , x-tenant:t1,",
    });
    expect(settings).toMatchObject({
      CONFIG_TYPE: "GRPC_XDS_SOTW",
      FORCE_START_WITHOUT_INITIAL_CONFIG: true,
      RATELIMIT_ADMIN_TOKEN: "admin-token",
      CONFIG_GRPC_XDS_NODE_ID: "node-7",
      CONFIG_GRPC_XDS_NODE_METADATA: [
        ["zone", "eu"],
        ["team", "a=b"],
      ],
      CONFIG_GRPC_XDS_SERVER_URL: "xds.internal:9000",
      CONFIG_GRPC_XDS_SERVER_CONNECT_RETRY_INTERVAL: 500,
      XDS_CLIENT_BACKOFF_INITIAL_INTERVAL: 1_000,
      XDS_CLIENT_BACKOFF_MAX_INTERVAL: 120_000,
      XDS_CLIENT_BACKOFF_RANDOM_FACTOR: 0.2,
      XDS_CLIENT_BACKOFF_JITTER: false,
      XDS_CLIENT_MAX_MSG_SIZE_IN_BYTES: 1_048_576,
      CONFIG_GRPC_XDS_SERVER_USE_TLS: true,
      CONFIG_GRPC_XDS_SERVER_TLS_CACERT: "/ca.pem",
      CONFIG_GRPC_XDS_CLIENT_TLS_CERT: "/cert.pem",
      CONFIG_GRPC_XDS_CLIENT_TLS_KEY: "/key.pem",
      CONFIG_GRPC_XDS_SERVER_TLS_SAN: "xds.example",
      CONFIG_GRPC_XDS_CLIENT_ADDITIONAL_HEADERS: [
        ["Authorization", "Bearer a:b"],
        ["x-tenant", "t1"],
      ],
    });
  });

  it.each(["control-plane.internal:18000", "10.0.0.7:443", "[::1]:18000", "dns:///xds.example.com:18000"])(
    "takes %s as the server address",
    (address) => {
      expect(gatewaySettings({ CONFIG_GRPC_XDS_SERVER_URL: address }).CONFIG_GRPC_XDS_SERVER_URL).toBe(address);
    },
  );

  it.each<[string, Record<string, string>, string]>([
    [
      "xDS without RATELIMIT_ADMIN_TOKEN",
      { CONFIG_TYPE: "GRPC_XDS_SOTW" },
      "RATELIMIT_ADMIN_TOKEN: is required when CONFIG_TYPE is GRPC_XDS_SOTW (snapshots are stored with it)",
    ],
    [
      "xDS with an empty RATELIMIT_ADMIN_TOKEN",
      { CONFIG_TYPE: "GRPC_XDS_SOTW", RATELIMIT_ADMIN_TOKEN: "" },
      "RATELIMIT_ADMIN_TOKEN: is required when CONFIG_TYPE is GRPC_XDS_SOTW (snapshots are stored with it)",
    ],
    [
      "a server address without a port",
      { CONFIG_GRPC_XDS_SERVER_URL: "control-plane" },
      'CONFIG_GRPC_XDS_SERVER_URL: expected host:port, e.g. "localhost:18000"',
    ],
    [
      "a server address that is not one",
      { CONFIG_GRPC_XDS_SERVER_URL: "not a url" },
      'CONFIG_GRPC_XDS_SERVER_URL: expected host:port, e.g. "localhost:18000"',
    ],
    [
      "an unknown CONFIG_TYPE",
      { CONFIG_TYPE: "XDS" },
      'CONFIG_TYPE: Invalid option: expected one of "FILE"|"GRPC_XDS_SOTW"',
    ],
    [
      "a client certificate without its key",
      { CONFIG_GRPC_XDS_SERVER_USE_TLS: "true", CONFIG_GRPC_XDS_CLIENT_TLS_CERT: "/cert.pem" },
      "CONFIG_GRPC_XDS_CLIENT_TLS_CERT: CONFIG_GRPC_XDS_CLIENT_TLS_CERT and CONFIG_GRPC_XDS_CLIENT_TLS_KEY go together",
    ],
    [
      "a client key without its certificate",
      { CONFIG_GRPC_XDS_SERVER_USE_TLS: "true", CONFIG_GRPC_XDS_CLIENT_TLS_KEY: "/key.pem" },
      "CONFIG_GRPC_XDS_CLIENT_TLS_CERT: CONFIG_GRPC_XDS_CLIENT_TLS_CERT and CONFIG_GRPC_XDS_CLIENT_TLS_KEY go together",
    ],
    [
      "TLS files without CONFIG_GRPC_XDS_SERVER_USE_TLS",
      {
        CONFIG_GRPC_XDS_SERVER_TLS_CACERT: "/ca.pem",
        CONFIG_GRPC_XDS_CLIENT_TLS_CERT: "/cert.pem",
        CONFIG_GRPC_XDS_CLIENT_TLS_KEY: "/key.pem",
        CONFIG_GRPC_XDS_SERVER_TLS_SAN: "x",
      },
      "CONFIG_GRPC_XDS_SERVER_TLS_CACERT: needs CONFIG_GRPC_XDS_SERVER_USE_TLS=true; " +
        "CONFIG_GRPC_XDS_CLIENT_TLS_CERT: needs CONFIG_GRPC_XDS_SERVER_USE_TLS=true; " +
        "CONFIG_GRPC_XDS_SERVER_TLS_SAN: needs CONFIG_GRPC_XDS_SERVER_USE_TLS=true",
    ],
    [
      "an additional header without a colon",
      { CONFIG_GRPC_XDS_CLIENT_ADDITIONAL_HEADERS: "a:b,nocolon" },
      HEADERS_PROBLEM,
    ],
    ["an additional header without a name", { CONFIG_GRPC_XDS_CLIENT_ADDITIONAL_HEADERS: ":value" }, HEADERS_PROBLEM],
    [
      "node metadata without an equals sign",
      { CONFIG_GRPC_XDS_NODE_METADATA: "zone" },
      "CONFIG_GRPC_XDS_NODE_METADATA: expected CONFIG_GRPC_XDS_NODE_METADATA as name=value pairs separated by commas",
    ],
    [
      "a backoff interval that is not a duration",
      { XDS_CLIENT_BACKOFF_INITIAL_INTERVAL: "ten" },
      'XDS_CLIENT_BACKOFF_INITIAL_INTERVAL: expected a duration such as "10s", "500ms" or "1m"',
    ],
    [
      "a random factor above 1",
      { XDS_CLIENT_BACKOFF_RANDOM_FACTOR: "2" },
      "XDS_CLIENT_BACKOFF_RANDOM_FACTOR: Too big: expected number to be <=1",
    ],
  ])("refuses %s", (_label, env, problems) => {
    expect(() => gatewaySettings(env)).toThrow(new Error(`invalid gateway settings: ${problems}`));
  });
});
