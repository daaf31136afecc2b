// The algorithms beyond the reference's fixed window, decided end to end over the in-memory store with an explicit
// clock: sliding windows weighing the previous window, token buckets with burst and refill, unit_multiplier windows,
// and the local cache, shadow mode, stop-increment and headers keeping their meaning.
import { describe, expect, it } from "vitest";
import { LocalCache } from "../../../src/ratelimit/core/local-cache";
import type { RateLimitRequest } from "../../../src/ratelimit/core/types";
import { harness, loadConfigText, request } from "../../support/ratelimit-core";

const CONFIG = `
domain: algo
descriptors:
  - key: fixed2m
    rate_limit:
      unit: minute
      unit_multiplier: 2
      requests_per_unit: 3
  - key: sliding
    rate_limit:
      algorithm: sliding_window
      unit: second
      requests_per_unit: 10
  - key: bucket
    rate_limit:
      algorithm: token_bucket
      unit: second
      requests_per_unit: 10
      burst: 20
  - key: slow_bucket
    rate_limit:
      algorithm: token_bucket
      unit: minute
      unit_multiplier: 5
      requests_per_unit: 5
  - key: shadow_bucket
    shadow_mode: true
    rate_limit:
      algorithm: token_bucket
      unit: second
      requests_per_unit: 1
  - key: hourly
    rate_limit:
      unit: hour
      requests_per_unit: 100
`;
const config = loadConfigText(CONFIG);
const HEADERS = { limit: "RateLimit-Limit", remaining: "RateLimit-Remaining", reset: "RateLimit-Reset" };

/** Sends `count` single-hit requests for one descriptor at `now` and returns their codes. */
async function burst(h: ReturnType<typeof harness>, key: string, value: string, now: number, count: number) {
  const codes = [];
  for (let i = 0; i < count; i++)
    codes.push((await h.run(request("algo", [[[key, value]]]), now)).response.overallCode);
  return codes;
}

const admitted = (codes: string[]) => codes.filter((code) => code === "OK").length;

describe("sliding_window", () => {
  it("admits the limit, then lets about half of the previous second's count weigh halfway through the next", async () => {
    const h = harness(config);
    expect(admitted(await burst(h, "sliding", "a", 100.2, 15))).toBe(10);
    // 0.45 s into the next second the previous 10 still weigh floor(10 × 0.55) = 5.
    const { response } = await h.run(request("algo", [[["sliding", "a"]]]), 101.45);
    expect(response.statuses[0]).toMatchObject({ code: "OK", limitRemaining: 4 });
    // The weighted count loses its next whole request 0.05 s later.
    expect(response.statuses[0].durationUntilResetSeconds).toBeCloseTo(0.05, 9);
    expect(admitted(await burst(h, "sliding", "a", 101.45, 10))).toBe(4);
  });

  it("does not count refused requests: the next window weighs only what was admitted", async () => {
    const h = harness(config);
    expect(admitted(await burst(h, "sliding", "b", 200.1, 30))).toBe(10);
    expect(h.store.value("algo_sliding_b_200")).toBe(10);
    // At the very start of 201 the previous window weighs fully.
    expect(admitted(await burst(h, "sliding", "b", 201, 5))).toBe(0);
    expect(admitted(await burst(h, "sliding", "b", 201.8, 20))).toBe(9);
  });

  it("sends one operation naming both windows, kept two windows long", async () => {
    const h = harness(config);
    await h.run(request("algo", [[["sliding", "c"]]]), 300.25);
    expect(h.store.calls).toEqual([
      {
        method: "increment",
        items: [
          {
            key: "algo_sliding_c_300",
            counterName: "algo_sliding_c_",
            hits: 1,
            windowEnd: 302,
            windowSeconds: 2,
            perSecond: true,
            algorithm: { kind: "sliding_window", previousKey: "algo_sliding_c_299", limit: 10, previousWeight: 0.75 },
          },
        ],
      },
    ]);
  });

  it("is exact for 600 hits on a limit of 100 in one window", async () => {
    const h = harness(
      loadConfigText(
        CONFIG.replace("requests_per_unit: 10\n  - key: bucket", "requests_per_unit: 100\n  - key: bucket"),
      ),
    );
    expect(admitted(await burst(h, "sliding", "d", 400.5, 600))).toBe(100);
  });
});

describe("token_bucket", () => {
  it("admits the burst at once, then refills requests_per_unit tokens per unit", async () => {
    const h = harness(config);
    const first = await burst(h, "bucket", "a", 500, 21);
    expect(admitted(first)).toBe(20);
    const refused = await h.run(request("algo", [[["bucket", "a"]]]), 500);
    expect(refused.response.statuses[0]).toEqual({
      code: "OVER_LIMIT",
      currentLimit: { requestsPerUnit: 10, unit: "SECOND" },
      limitRemaining: 0,
      durationUntilResetSeconds: 0.1,
    });
    // 0.35 s later three whole tokens are back.
    const { response } = await h.run(request("algo", [[["bucket", "a"]]]), 500.35);
    expect(response.statuses[0]).toMatchObject({ code: "OK", limitRemaining: 2 });
    expect(response.statuses[0].durationUntilResetSeconds).toBeCloseTo(0.05, 9);
    expect(admitted(await burst(h, "bucket", "a", 500.35, 5))).toBe(2);
    // Two seconds of quiet fill the bucket again, and no further.
    expect(admitted(await burst(h, "bucket", "a", 503, 25))).toBe(20);
  });

  it("debits hits_addend tokens at once, and refuses what does not fit without taking any", async () => {
    const h = harness(config);
    const take = (hits: number) => h.run(request("algo", [[["bucket", "b"]]], hits), 600);
    expect((await take(15)).response.statuses[0]).toMatchObject({ code: "OK", limitRemaining: 5 });
    expect((await take(6)).response.statuses[0]).toMatchObject({ code: "OVER_LIMIT", limitRemaining: 0 });
    expect((await take(5)).response.statuses[0]).toMatchObject({ code: "OK", limitRemaining: 0 });
  });

  it("takes the burst from requests_per_unit by default and refills over unit × unit_multiplier", async () => {
    const h = harness(config);
    expect(admitted(await burst(h, "slow_bucket", "c", 700, 6))).toBe(5);
    const { response } = await h.run(request("algo", [[["slow_bucket", "c"]]]), 700);
    // 5 tokens per 5 minutes: one every 60 s.
    expect(response.statuses[0]).toMatchObject({ code: "OVER_LIMIT", durationUntilResetSeconds: 60 });
    expect(admitted(await burst(h, "slow_bucket", "c", 759.9, 1))).toBe(0);
    expect(admitted(await burst(h, "slow_bucket", "c", 760, 2))).toBe(1);
  });

  it("stores one TAT per key under the bucket's own key", async () => {
    const h = harness(config);
    await h.run(request("algo", [[["bucket", "d"]]]), 800);
    expect(h.store.calls[0].items[0]).toEqual({
      key: "algo_bucket_d_tb",
      counterName: "algo_bucket_d_",
      hits: 1,
      windowEnd: 802,
      windowSeconds: 2,
      perSecond: true,
      algorithm: { kind: "token_bucket", burst: 20, emissionIntervalMicros: 100_000, nowMicros: 800_000_000 },
    });
    expect(h.store.value("algo_bucket_d_tb")).toBe(800_100_000);
  });

  it("lets a shadow rule answer OK over its limit, counting the shadow hit", async () => {
    const h = harness(config);
    await h.run(request("algo", [[["shadow_bucket", "e"]]]), 900);
    const { response, stats } = await h.run(request("algo", [[["shadow_bucket", "e"]]]), 900);
    expect(response.overallCode).toBe("OK");
    expect(response.statuses[0]).toMatchObject({ code: "OK", limitRemaining: 0 });
    expect(stats.rules[0]).toMatchObject({ totalHits: 1, overLimit: 1, shadowMode: 1 });
  });

  it("answers from the local cache until the next token is due, then asks the store again", async () => {
    const h = harness(config, {}, new LocalCache(10_000));
    await burst(h, "bucket", "f", 1000, 21);
    const calls = h.store.calls.length;
    const cached = (await h.run(request("algo", [[["bucket", "f"]]]), 1000.05)).response;
    expect(cached.overallCode).toBe("OVER_LIMIT");
    expect(cached.statuses[0].durationUntilResetSeconds).toBeCloseTo(0.05, 9);
    expect(h.store.calls.length).toBe(calls);
    expect((await h.run(request("algo", [[["bucket", "f"]]]), 1000.1)).response.overallCode).toBe("OK");
    expect(h.store.calls.length).toBe(calls + 1);
  });

  it("rounds the reset header up to whole seconds", async () => {
    const h = harness(config, { responseHeaders: HEADERS });
    const { response } = await h.run(request("algo", [[["bucket", "g"]]]), 1100);
    expect(response.responseHeadersToAdd).toEqual([
      { key: "RateLimit-Limit", value: "10" },
      { key: "RateLimit-Remaining", value: "19" },
      { key: "RateLimit-Reset", value: "1" },
    ]);
  });

  it("with stop-increment, a descriptor that would exceed keeps the others' tokens", async () => {
    const h = harness(config, { stopCacheKeyIncrementWhenOverlimit: true });
    const both: RateLimitRequest = request("algo", [[["bucket", "h"]], [["hourly", "h"]]], 0);
    await h.run(request("algo", [[["bucket", "h"]]], 20), 1200);
    const { response } = await h.run(both, 1200);
    expect(response.statuses.map((s) => [s.code, s.limitRemaining])).toEqual([
      ["OVER_LIMIT", 0],
      ["OK", 100],
    ]);
    expect(h.store.value("algo_hourly_h_0")).toBe(0);
  });
});

describe("unit_multiplier on a fixed window", () => {
  it("counts over unit × K aligned to the epoch and resets at its end", async () => {
    const h = harness(config);
    const codes = await burst(h, "fixed2m", "a", 1234.5, 4);
    expect(codes).toEqual(["OK", "OK", "OK", "OVER_LIMIT"]);
    expect(h.store.value("algo_fixed2m_a_1200")).toBe(4);
    const { response } = await h.run(request("algo", [[["fixed2m", "a"]]]), 1234.5);
    expect(response.statuses[0]).toEqual({
      code: "OVER_LIMIT",
      currentLimit: { requestsPerUnit: 3, unit: "MINUTE" },
      limitRemaining: 0,
      durationUntilResetSeconds: 86,
    });
    expect(admitted(await burst(h, "fixed2m", "a", 1320, 1))).toBe(1);
  });
});

describe("per-second counters", () => {
  it("are the counters of unit SECOND × 1 rules, whatever the counter's lifetime", async () => {
    const perSecond = loadConfigText(`
domain: ps
descriptors:
  - key: hour_bucket
    rate_limit:
      algorithm: token_bucket
      unit: hour
      requests_per_unit: 3600
      burst: 1
  - key: two_seconds
    rate_limit:
      unit: second
      unit_multiplier: 2
      requests_per_unit: 5
  - key: second_bucket
    rate_limit:
      algorithm: token_bucket
      unit: second
      requests_per_unit: 1
      burst: 3
`);
    const h = harness(perSecond);
    await h.run(request("ps", [[["hour_bucket", "a"]], [["two_seconds", "a"]], [["second_bucket", "a"]]]), 500);
    // The HOUR bucket's counter lives one second, the SECOND bucket's three: the unit decides, not the lifetime.
    expect(h.store.calls[0].items.map((item) => [item.windowSeconds, item.perSecond])).toEqual([
      [1, false],
      [2, false],
      [3, true],
    ]);
  });
});
