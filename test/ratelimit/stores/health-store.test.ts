// HEALTHCHECK_STORE through the Worker: /healthcheck answers 500 while the configured key-value store or object cache
// cannot be reached, 200 with the real servers the tests start, and as before without the setting.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { workerWith } from "../../support/ratelimit-stores";

/** A loopback port nothing listens on (the discard port; nothing runs it here). */
const CLOSED = "127.0.0.1:9";

const health = async (vars: Record<string, string>) => (await workerWith(vars).fetch("/healthcheck")).status;

describe("HEALTHCHECK_STORE", () => {
  it("follows the key-value store", async () => {
    const redis = { BACKEND_TYPE: "redis", KVSTORE_TIMEOUT: "1s", HEALTHCHECK_STORE: "true" };
    expect(await health({ ...redis, KVSTORE_URL: `127.0.0.1:${env.TEST_REDIS_PORT}` })).toBe(200);
    expect(await health({ ...redis, KVSTORE_URL: CLOSED })).toBe(500);
    expect(await health({ ...redis, KVSTORE_URL: CLOSED, HEALTHCHECK_STORE: "false" })).toBe(200);
  });

  it("follows the object cache, every node of it", async () => {
    const memcache = { BACKEND_TYPE: "memcache", OBJCACHE_TIMEOUT: "1s", HEALTHCHECK_STORE: "true" };
    const up = `127.0.0.1:${env.TEST_MEMCACHED_PORT}`;
    expect(await health({ ...memcache, OBJCACHE_HOST_PORT: up })).toBe(200);
    expect(await health({ ...memcache, OBJCACHE_HOST_PORT: `${up},${CLOSED}` })).toBe(500);
    expect(await health({ ...memcache, OBJCACHE_HOST_PORT: CLOSED, HEALTHCHECK_STORE: "false" })).toBe(200);
  });
});
