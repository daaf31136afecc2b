// The key-value store's settings as the pool sees them: URL forms per type, credentials, the per-second store and
// the pool's names (a settings hash).
import { describe, expect, it } from "vitest";
import { redisOptions, parseCredentials } from "../../../../src/ratelimit/stores/redis/options";
import { parseHostPort } from "../../../../src/ratelimit/stores/socket";
import { counterStoreSettings } from "../../../../src/ratelimit/counter-store-settings";

const options = (env: Record<string, string>) => redisOptions(counterStoreSettings({ BACKEND_TYPE: "redis", ...env }));

describe("redisOptions", () => {
  it("reads the spec's defaults, but a 2 s time-out (the reference's is 10 s)", () => {
    const { main, perSecond, jitterMaxSeconds, healthCheckActiveConnection } = options({
      KVSTORE_URL: "redis.internal:6379",
    });
    expect(main).toEqual({
      role: "main",
      fingerprint: expect.stringMatching(/^[0-9a-f]{8}$/),
      topology: { type: "single", address: { host: "redis.internal", port: 6379 } },
      tls: false,
      auth: undefined,
      poolSize: 10,
      timeoutMs: 2000,
      windowMs: 0,
      onEmpty: "CREATE",
      waitMs: 1000,
    });
    expect([perSecond, jitterMaxSeconds, healthCheckActiveConnection]).toEqual([undefined, 300, false]);
  });

  it("reads sentinel and cluster URLs, case-insensitive types, and the per-second store's own settings", () => {
    const { main, perSecond } = options({
      KVSTORE_TYPE: "SENTINEL",
      KVSTORE_URL: "mymaster, 10.0.0.1:26379,[::1]:26380",
      KVSTORE_SENTINEL_AUTH: "sentinel-pass",
      KVSTORE_PERSECOND: "1",
      KVSTORE_PERSECOND_TYPE: "cluster",
      KVSTORE_PERSECOND_URL: "10.0.0.5:7000,10.0.0.6:7000",
      KVSTORE_PERSECOND_PIPELINE_WINDOW: "150us",
      KVSTORE_PERSECOND_POOL_SIZE: "3",
      KVSTORE_PERSECOND_POOL_ON_EMPTY_BEHAVIOR: "wait",
    });
    expect(main.topology).toEqual({
      type: "sentinel",
      masterName: "mymaster",
      sentinels: [
        { host: "10.0.0.1", port: 26379 },
        { host: "::1", port: 26380 },
      ],
      sentinelAuth: { password: "sentinel-pass" },
    });
    expect(perSecond).toMatchObject({
      role: "persecond",
      topology: {
        type: "cluster",
        nodes: [
          { host: "10.0.0.5", port: 7000 },
          { host: "10.0.0.6", port: 7000 },
        ],
      },
      windowMs: 0.15,
      poolSize: 3,
      onEmpty: "WAIT",
    });
  });

  it("names the pool by its settings, so changed settings get fresh connections", () => {
    const a = options({ KVSTORE_URL: "h:1" }).main.fingerprint;
    expect(options({ KVSTORE_URL: "h:1" }).main.fingerprint).toBe(a);
    expect(options({ KVSTORE_URL: "h:1", KVSTORE_AUTH: "x" }).main.fingerprint).not.toBe(a);
    expect(options({ KVSTORE_URL: "h:2" }).main.fingerprint).not.toBe(a);
  });
});

describe("credentials and addresses", () => {
  it("splits user:password at the first colon", () => {
    expect(parseCredentials("secret")).toEqual({ password: "secret" });
    expect(parseCredentials("app:pa:ss")).toEqual({ username: "app", password: "pa:ss" });
    expect(parseCredentials("")).toBeUndefined();
  });

  it("reads host:port and [ipv6]:port", () => {
    expect(parseHostPort("[2001:db8::1]:6379", "X")).toEqual({ host: "2001:db8::1", port: 6379 });
    expect(() => parseHostPort("host:99999", "KVSTORE_URL")).toThrow(
      /^ratelimit settings are invalid: KVSTORE_URL: expected host:port with a port from 1 to 65535$/,
    );
  });
});
