// POST /json with BACKEND_TYPE=redis against a real redis-server (started by test/global-setup.ts): the same
// decisions as the Durable Object store, the reference's INCRBY + EXPIRE with the window plus jitter, the per-second
// store, the connection per request and the reference's REDIS_* names.
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { descriptor } from "../../../support/ratelimit-calls";
import { atNowWithConfig, decisionSuite, NOW } from "../../../support/ratelimit-decision-suite";
import { redis, workerWith } from "../../../support/ratelimit-stores";
import { CONFIG, redisWorker, URL } from "./store-fixtures";

// Redis expiries are relative, so the suite's frozen clock (NOW) is fine.
const HOUR_START = 1893456000;

const main = redisWorker({ CACHE_KEY_PREFIX: "suite_" });

atNowWithConfig({ "rl.yaml": CONFIG });

describe("the key-value store decides as the Durable Object store does", () => {
  decisionSuite(main.rateLimit, {
    // The counter is the reference's key, in Redis; over-limit hits keep counting, as the reference's do.
    afterKeyOnlyRule: async () =>
      expect(await redis(env.TEST_REDIS_PORT, [["GET", `suite_rl_client_10.0.0.1_${HOUR_START}`]])).toEqual(["4"]),
  });
});

describe("counting as the reference does", () => {
  it("sets an expiry of the window plus less than EXPIRATION_JITTER_MAX_SECONDS on every key it counts", async () => {
    const jittered = redisWorker({
      CACHE_KEY_PREFIX: "ttl_",
      EXPIRATION_JITTER_MAX_SECONDS: "20",
    });
    // The largest jitter below 20 (floor(0.999 × 20) = 19 s), which no expiry without jitter reaches.
    const random = vi.spyOn(Math, "random").mockReturnValue(0.999);
    const answer = await jittered
      .rateLimit({
        domain: "rl",
        descriptors: [descriptor(["client", "ttl"]), descriptor(["path", "/login"]), descriptor(["daily", "d"])],
      })
      .finally(() => random.mockRestore());
    expect(answer.status).toBe(200);
    const ttls = await redis(env.TEST_REDIS_PORT, [
      ["TTL", `ttl_rl_client_ttl_${HOUR_START}`],
      ["TTL", `ttl_rl_path_/login_${HOUR_START}`],
      ["TTL", `ttl_rl_daily_d_${HOUR_START}`],
    ]);
    const [hour, minute, day] = ttls as number[];
    expect(hour).toBeGreaterThanOrEqual(3600 - 1);
    expect(hour).toBeLessThan(3600 + 20);
    expect(minute).toBeGreaterThanOrEqual(60 - 1);
    expect(minute).toBeLessThan(60 + 20);
    expect(day).toBeGreaterThanOrEqual(86400 - 1);
    expect(day).toBeLessThan(86400 + 20);
    expect([3600 + 18, 3600 + 19]).toContain(hour);
    expect([60 + 18, 60 + 19]).toContain(minute);
    expect([86400 + 18, 86400 + 19]).toContain(day);
  });

  it("without jitter, the expiry is exactly the window", async () => {
    const exact = redisWorker({
      CACHE_KEY_PREFIX: "exact_",
      EXPIRATION_JITTER_MAX_SECONDS: "0",
    });
    await exact.rateLimit({ domain: "rl", descriptors: [descriptor(["path", "/login"])] });
    const [ttl] = (await redis(env.TEST_REDIS_PORT, [["TTL", `exact_rl_path_/login_${HOUR_START}`]])) as number[];
    expect([59, 60]).toContain(ttl);
  });

  it("keeps the other counters still when one descriptor is over, with STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT", async () => {
    const stop = redisWorker({
      CACHE_KEY_PREFIX: "stop_",
      STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT: "true",
    });
    const request = { domain: "rl", descriptors: [descriptor(["daily", "s"]), descriptor(["client", "s"])] };
    const remaining = [];
    for (let i = 0; i < 5; i++)
      remaining.push((await stop.rateLimit(request)).body.statuses.map((s: any) => s.limitRemaining ?? 0));
    // client (3/hour) goes over at the 4th request; from then on daily stays where it was.
    expect(remaining).toEqual([
      [9, 2],
      [8, 1],
      [7, 0],
      [7, 0],
      [7, 0],
    ]);
    expect(
      await redis(env.TEST_REDIS_PORT, [
        ["GET", `stop_rl_daily_s_${HOUR_START}`],
        ["GET", `stop_rl_client_s_${HOUR_START}`],
      ]),
    ).toEqual(["3", "5"]);
  });

  it("sends per-second counters to the per-second store and the others to the main store", async () => {
    const split = redisWorker({
      CACHE_KEY_PREFIX: "split_",
      KVSTORE_PERSECOND: "true",
      KVSTORE_PERSECOND_URL: `127.0.0.1:${env.TEST_REDIS_PERSECOND_PORT}`,
    });
    const answer = await split.rateLimit({
      domain: "rl",
      descriptors: [descriptor(["burst", "b"]), descriptor(["client", "b"])],
    });
    expect(answer.body.statuses.map((s: any) => s.limitRemaining)).toEqual([4, 2]);
    const second = `split_rl_burst_b_${NOW / 1000}`;
    const hour = `split_rl_client_b_${HOUR_START}`;
    expect(
      await redis(env.TEST_REDIS_PERSECOND_PORT, [
        ["GET", second],
        ["GET", hour],
        ["TTL", second],
      ]),
    ).toEqual(["1", null, expect.any(Number)]);
    expect(
      await redis(env.TEST_REDIS_PORT, [
        ["GET", second],
        ["GET", hour],
      ]),
    ).toEqual([null, "1"]);
  });

  it("opens a connection per request with KVSTORE_POOL_SIZE=0, counting the same way", async () => {
    const direct = redisWorker({
      CACHE_KEY_PREFIX: "direct_",
      KVSTORE_POOL_SIZE: "0",
    });
    const request = { domain: "rl", descriptors: [descriptor(["client", "direct"])] };
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await direct.rateLimit(request)).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
    expect(await redis(env.TEST_REDIS_PORT, [["GET", `direct_rl_client_direct_${HOUR_START}`]])).toEqual(["4"]);
  });

  it("accepts the reference's REDIS_* names; the spec's KVSTORE_* name wins when both are set", async () => {
    const aliased = workerWith({ BACKEND_TYPE: "redis", REDIS_URL: URL, CACHE_KEY_PREFIX: "alias_" });
    expect((await aliased.rateLimit({ domain: "rl", descriptors: [descriptor(["client", "alias"])] })).status).toBe(
      200,
    );
    const both = workerWith({
      BACKEND_TYPE: "kvstore",
      REDIS_URL: "127.0.0.1:1",
      KVSTORE_URL: URL,
      CACHE_KEY_PREFIX: "alias_",
    });
    expect(
      (await both.rateLimit({ domain: "rl", descriptors: [descriptor(["client", "alias"])] })).body.statuses[0]
        .limitRemaining,
    ).toBe(1);
  });
});
