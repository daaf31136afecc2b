// HEALTHCHECK_STORE through a real `wrangler dev`, a real redis-server and the gRPC gateway: /healthcheck and gRPC
// health (service "ratelimit") turn unhealthy within 5 s of the store stopping and healthy again within 5 s of its
// restart, while a health check costs no round trip per call (the probe's answer is cached for a second).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../support/processes.mjs";
import { type LocalServer, startRedis } from "../support/local-servers.mjs";
import { type DevServer, startWranglerDev } from "../support/wrangler-dev.mjs";
import { ADMIN_TOKEN } from "../support/ratelimit-dev-server";
import { type Gateway, rateLimitClient, type RateLimitClient, startGateway } from "../support/grpc-gateway";

let redisPort: number;
let redis: LocalServer;
let server: DevServer;
let gateway: Gateway;
let client: RateLimitClient;

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
  gateway = await startGateway({ RATELIMIT_UPSTREAM_URL: server.url, GRPC_PORT: String(await freePort()) });
  client = rateLimitClient(gateway.target);
});

afterAll(async () => {
  client?.close();
  await gateway?.stop();
  await server?.stop();
  await redis?.stop();
});

const health = async () => (await fetch(`${server.url}/healthcheck`, { signal: AbortSignal.timeout(10_000) })).status;

const grpcHealth = async () => {
  const answer = await client.check("ratelimit");
  return answer.ok ? answer.value.status : `error ${answer.code}`;
};

/** Polls `read` every 100 ms until it answers `expected`; throws once `boundMs` has passed without it. */
async function until<T>(read: () => Promise<T>, expected: T, boundMs: number): Promise<void> {
  const started = Date.now();
  while (Date.now() - started < boundMs) {
    if ((await read()) === expected) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`health did not answer ${String(expected)} within ${boundMs} ms`);
}

describe("HEALTHCHECK_STORE with the key-value store", () => {
  it("is unhealthy within 5 s of Redis stopping, and healthy within 5 s of its restart", async () => {
    // `until` throws when its bound passes: each call is the assertion.
    await until(health, 200, 30_000);
    await until(grpcHealth, "SERVING", 10_000);
    await redis.stop();
    const stopped = Date.now();
    await until(health, 500, 5_000);
    await until(grpcHealth, "NOT_SERVING", 5_000 - (Date.now() - stopped));
    // It stays unhealthy while the store is away.
    for (let i = 0; i < 3; i++) expect(await health()).toBe(500);
    redis = await startRedis([], redisPort);
    const restarted = Date.now();
    await until(health, 200, 5_000);
    await until(grpcHealth, "SERVING", 5_000 - (Date.now() - restarted));
  });
});
