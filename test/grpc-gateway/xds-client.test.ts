// Unit tests of the gateway's xDS client pieces in plain Node: the reconnect backoff, and decoding RateLimitConfig Any
// resources into what the Worker's xDS form reads.
import { describe, expect, it, vi } from "vitest";
import {
  backoffDelayMs,
  decodeRateLimitConfigs,
  RATE_LIMIT_CONFIG_TYPE_URL,
  rateLimitConfigType,
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
