// Which key-value store a counter lands in with KVSTORE_PERSECOND: per-second limits (unit SECOND, unit_multiplier 1)
// go to the per-second store whatever their counters' lifetime (a sliding window lives two windows), and other limits
// stay in the main store even when their counter lives one second (an HOUR token bucket with burst 1).
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { descriptor } from "../../../support/ratelimit-calls";
import { atNowWithConfig, NOW } from "../../../support/ratelimit-decision-suite";
import { redis, workerWith } from "../../../support/ratelimit-stores";

const CONFIG = `
domain: ps
descriptors:
  - key: sliding_second
    rate_limit:
      algorithm: sliding_window
      unit: second
      requests_per_unit: 5
  - key: bucket_second
    rate_limit:
      algorithm: token_bucket
      unit: second
      requests_per_unit: 1
      burst: 3
  - key: bucket_hour
    rate_limit:
      algorithm: token_bucket
      unit: hour
      requests_per_unit: 3600
      burst: 1
  - key: fixed_two_seconds
    rate_limit:
      unit: second
      unit_multiplier: 2
      requests_per_unit: 5
  - key: fixed_second
    rate_limit:
      unit: second
      requests_per_unit: 5
`;

const SECOND = NOW / 1000;

// Needs both Redis servers of test/global-setup.ts (a server suite there, left out with TEST_NO_SERVERS).
describe("with a per-second store", () => {
  atNowWithConfig({ "ps.yaml": CONFIG });

  it("routes counters by their limit's unit, not by how long they live", async () => {
    const split = workerWith({
      BACKEND_TYPE: "redis",
      KVSTORE_URL: `127.0.0.1:${env.TEST_REDIS_PORT}`,
      CACHE_KEY_PREFIX: "ps_",
      KVSTORE_PERSECOND: "true",
      KVSTORE_PERSECOND_URL: `127.0.0.1:${env.TEST_REDIS_PERSECOND_PORT}`,
    });
    const answer = await split.rateLimit({
      domain: "ps",
      descriptors: [
        descriptor(["sliding_second", "a"]),
        descriptor(["bucket_second", "a"]),
        descriptor(["bucket_hour", "a"]),
        descriptor(["fixed_two_seconds", "a"]),
        descriptor(["fixed_second", "a"]),
      ],
    });
    expect(answer.status).toBe(200);
    expect(answer.body.statuses.map((s: any) => [s.code, s.limitRemaining ?? 0])).toEqual([
      ["OK", 4],
      ["OK", 2],
      ["OK", 0],
      ["OK", 4],
      ["OK", 4],
    ]);
    const perSecond = [
      `{ps_ps_sliding_second_a_}${SECOND}`,
      "ps_ps_bucket_second_a_tb",
      `ps_ps_fixed_second_a_${SECOND}`,
    ];
    // The HOUR bucket's counter lives one second (burst 1 × 1 s per token), the 2-second window's two.
    const main = ["ps_ps_bucket_hour_a_tb", `ps_ps_fixed_two_seconds_a_${SECOND - (SECOND % 2)}`];
    const exists = (port: string, keys: string[]) =>
      redis(
        port,
        keys.map((key) => ["EXISTS", key]),
      );
    expect(await exists(env.TEST_REDIS_PERSECOND_PORT, perSecond)).toEqual([1, 1, 1]);
    expect(await exists(env.TEST_REDIS_PORT, perSecond)).toEqual([0, 0, 0]);
    expect(await exists(env.TEST_REDIS_PORT, main)).toEqual([1, 1]);
    expect(await exists(env.TEST_REDIS_PERSECOND_PORT, main)).toEqual([0, 0]);
  });
});
