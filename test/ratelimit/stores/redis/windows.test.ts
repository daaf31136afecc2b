// Several windows on one descriptor (additional_limits) with the key-value store against the real redis-server: the
// shared suite (test/support/ratelimit-windows-suite.ts), all windows of a descriptor in one call of the windows
// script, every key tagged with the counter name so a cluster keeps them in one slot.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { atNowWithConfig } from "../../../support/ratelimit-decision-suite";
import { redis, workerWith } from "../../../support/ratelimit-stores";
import { WINDOWS_CONFIG, windowsSuite } from "../../../support/ratelimit-windows-suite";

// NOW's minute (and second) starts here.
const MINUTE_START = 1893456000;
const URL = `127.0.0.1:${env.TEST_REDIS_PORT}`;
const worker = workerWith({ BACKEND_TYPE: "redis", KVSTORE_URL: URL, CACHE_KEY_PREFIX: "wr_" });

const minuteCount = async (value: string) => {
  const [count] = await redis(env.TEST_REDIS_PORT, [["GET", `{wr_win_burst_${value}_}${MINUTE_START}_w1`]]);
  return Number(count ?? 0);
};

atNowWithConfig({ "win.yaml": WINDOWS_CONFIG });

describe("several windows on the key-value store", () => {
  windowsSuite(worker.rateLimit, minuteCount);

  it("names every window's key with the counter name as its hash tag, each expiring after its own window", async () => {
    await worker.rateLimit({ domain: "win", descriptors: [{ entries: [{ key: "burst", value: "tags" }] }] });
    const second = `{wr_win_burst_tags_}${MINUTE_START + 30}`;
    const minute = `{wr_win_burst_tags_}${MINUTE_START}_w1`;
    const [secondCount, minuteValue, secondTtl, minuteTtl] = await redis(env.TEST_REDIS_PORT, [
      ["GET", second],
      ["GET", minute],
      ["TTL", second],
      ["TTL", minute],
    ]);
    expect([secondCount, minuteValue]).toEqual(["1", "1"]);
    // Window plus jitter (EXPIRATION_JITTER_MAX_SECONDS, 300 by default).
    expect(secondTtl).toBeGreaterThanOrEqual(1);
    expect(secondTtl).toBeLessThanOrEqual(301);
    expect(minuteTtl).toBeGreaterThanOrEqual(60);
    expect(minuteTtl).toBeLessThanOrEqual(360);
  });
});
