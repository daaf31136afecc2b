// HEALTHCHECK_STORE through a real `wrangler dev` and a real redis-server: /healthcheck turns unhealthy within 5 s of
// the store stopping and healthy again within 5 s of its restart, while a health check costs no round trip per call
// (the probe's answer is cached for a second).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DevServer, freePort, type LocalServer, startRedis, startWranglerDev } from "../support/servers.mjs";
import { ADMIN_TOKEN } from "../support/ratelimit-dev-server";

let redisPort: number;
let redis: LocalServer;
let server: DevServer;

beforeAll(async () => {
  redisPort = await freePort();
  redis = await startRedis([], redisPort);
  server = await startWranglerDev({
    RATELIMIT_ADMIN_TOKEN: ADMIN_TOKEN,
    BACKEND_TYPE: "redis",
    KVSTORE_URL: `127.0.0.1:${redisPort}`,
    KVSTORE_TIMEOUT: "2s",
    HEALTHCHECK_STORE: "true",
  });
});

afterAll(async () => {
  await server?.stop();
  await redis?.stop();
});

const health = async () => (await fetch(`${server.url}/healthcheck`, { signal: AbortSignal.timeout(10_000) })).status;

/** Polls /healthcheck every 100 ms until it answers `status`; returns how long that took, in ms. */
async function until(status: number, boundMs: number): Promise<number> {
  const started = Date.now();
  while (Date.now() - started < boundMs) {
    if ((await health()) === status) return Date.now() - started;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`/healthcheck did not answer ${status} within ${boundMs} ms`);
}

describe("HEALTHCHECK_STORE with the key-value store", () => {
  it("is unhealthy within 5 s of Redis stopping, and healthy within 5 s of its restart", async () => {
    expect(await until(200, 30_000)).toBeGreaterThanOrEqual(0);
    await redis.stop();
    expect(await until(500, 5_000)).toBeLessThanOrEqual(5_000);
    // It stays unhealthy while the store is away.
    for (let i = 0; i < 3; i++) expect(await health()).toBe(500);
    redis = await startRedis([], redisPort);
    expect(await until(200, 5_000)).toBeLessThanOrEqual(5_000);
  });
});
