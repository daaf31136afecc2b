// The key-value store itself with the sliding-window and token-bucket algorithms: exact under concurrency, the steps
// of core/algorithms.ts to the last double (a property against the in-memory store), the keys' names and expiries,
// nothing written when refused, and the EVAL fallback once the server forgot the scripts.
import { env } from "cloudflare:workers";
import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
import type {
  AlgorithmReply,
  CounterIncrement,
  SlidingWindowOperation,
  TokenBucketOperation,
} from "../../../../src/ratelimit/core/types";
import { counterStoreSettings } from "../../../../src/ratelimit/counter-store-settings";
import { redisOptions } from "../../../../src/ratelimit/stores/redis/options";
import { scriptShas, SLIDING_WINDOW_SCRIPT, TOKEN_BUCKET_SCRIPT } from "../../../../src/ratelimit/stores/redis/scripts";
import { redisCounterStore } from "../../../../src/ratelimit/stores/redis/store";
import { CLOSED_WINDOW_GRACE_MS } from "../../../../src/ratelimit/core/counter-table";
import { MemoryStore } from "../../../support/ratelimit-memory-store";
import { atNowWithConfig, NOW } from "../../../support/ratelimit-decision-suite";
import { redis } from "../../../support/ratelimit-stores";
import { CONFIG, URL } from "./store-fixtures";

// The same frozen clock and rules as the store's other files, so the store runs here as it does there.
atNowWithConfig({ "rl.yaml": CONFIG });

/** The store itself, over the suite's Redis, with these settings. */
const storeWith = (vars: Record<string, string> = {}) =>
  redisCounterStore(
    env.KVSTORE_CONNECTION,
    redisOptions(counterStoreSettings({ ...env, BACKEND_TYPE: "redis", KVSTORE_URL: URL, ...vars })),
  );

const WINDOW = 60;

/** A sliding-window item on the window starting at `start`, as the limiter builds it. */
function slide(counterName: string, start: number, hits: number, limit: number, weight: number): CounterIncrement {
  const algorithm: SlidingWindowOperation = {
    kind: "sliding_window",
    previousKey: `${counterName}${start - WINDOW}`,
    limit,
    previousWeight: weight,
  };
  return {
    key: `${counterName}${start}`,
    counterName,
    hits,
    windowEnd: start + 2 * WINDOW,
    windowSeconds: 2 * WINDOW,
    algorithm,
  };
}

/** A token-bucket item at `nowMicros`, as the limiter builds it. */
function take(
  counterName: string,
  hits: number,
  nowMicros: number,
  burst: number,
  emissionIntervalMicros: number,
): CounterIncrement {
  const algorithm: TokenBucketOperation = { kind: "token_bucket", burst, emissionIntervalMicros, nowMicros };
  return {
    key: `${counterName}tb`,
    counterName,
    hits,
    windowEnd: Math.ceil((nowMicros + burst * emissionIntervalMicros) / 1e6),
    windowSeconds: Math.ceil((burst * emissionIntervalMicros) / 1e6),
    algorithm,
  };
}

const START = 1893456000;
const NOW_MICROS = NOW * 1000;

describe("the algorithms", () => {
  const store = storeWith({ EXPIRATION_JITTER_MAX_SECONDS: "0" });

  it.each([
    ["sliding window", slide("alg_race_sw_", START, 1, 100, 0.5)],
    ["token bucket", take("alg_race_", 1, NOW_MICROS, 100, 36_000_000)],
  ])(
    "admit exactly 100 of 600 concurrent single hits (%s)",
    async (_name, item) => {
      const replies = await Promise.all(Array.from({ length: 600 }, () => store.increment([item])));
      const admitted = replies.filter(([reply]) => (reply as AlgorithmReply).admitted);
      expect([admitted.length, replies.length - admitted.length]).toEqual([100, 500]);
    },
    60_000,
  );

  it("weigh the previous window to the last double, and store both windows under the counter name's hash tag", async () => {
    const name = "alg_weight_";
    await redis(env.TEST_REDIS_PORT, [["SET", `{${name}}${START - WINDOW}`, "100"]]);
    // 100 × 0.29 is 28.999999999999996 in doubles: 28 of the limit are taken, not 29.
    expect(await store.increment([slide(name, START, 100, 128, 0.29), slide(name, START, 1, 128, 0.29)])).toEqual([
      { kind: "sliding_window", admitted: true, previous: 100, current: 100 },
      { kind: "sliding_window", admitted: false, previous: 100, current: 100 },
    ]);
    expect(await store.get([slide(name, START, 1, 128, 0.05)])).toEqual([
      { kind: "sliding_window", admitted: true, previous: 100, current: 100 },
    ]);
    // The current window expires after its life of two windows (no jitter here).
    const [value, ttl] = await redis(env.TEST_REDIS_PORT, [
      ["GET", `{${name}}${START}`],
      ["TTL", `{${name}}${START}`],
    ]);
    expect(value).toBe("100");
    expect([2 * WINDOW - 1, 2 * WINDOW]).toContain(ttl);
  });

  it("refill the token bucket one token per emission interval of the caller's clock", async () => {
    const name = "alg_refill_";
    const at = (hits: number, offsetMicros: number) => take(name, hits, NOW_MICROS + offsetMicros, 3, 20_000_000);
    expect(await store.increment([at(2, 0), at(1, 0), at(1, 0)])).toEqual([
      { kind: "token_bucket", admitted: true, tatMicros: NOW_MICROS + 40e6 },
      { kind: "token_bucket", admitted: true, tatMicros: NOW_MICROS + 60e6 },
      { kind: "token_bucket", admitted: false, tatMicros: NOW_MICROS + 60e6 },
    ]);
    expect(await store.increment([at(1, 19_999_999)])).toEqual([
      { kind: "token_bucket", admitted: false, tatMicros: NOW_MICROS + 60e6 },
    ]);
    expect(await store.increment([at(1, 20_000_000)])).toEqual([
      { kind: "token_bucket", admitted: true, tatMicros: NOW_MICROS + 80e6 },
    ]);
    expect(await store.get([at(1, 200_000_000)])).toEqual([
      { kind: "token_bucket", admitted: true, tatMicros: NOW_MICROS + 200e6 },
    ]);
    // The TAT is stored whole; the key expires the grace after it (60 s after the caller's clock; no jitter here).
    const [value, pttl] = (await redis(env.TEST_REDIS_PORT, [
      ["GET", `${name}tb`],
      ["PTTL", `${name}tb`],
    ])) as [string, number];
    expect(value).toBe(String(NOW_MICROS + 80e6));
    expect(pttl).toBeGreaterThan(59_000 + CLOSED_WINDOW_GRACE_MS);
    expect(pttl).toBeLessThanOrEqual(60_000 + CLOSED_WINDOW_GRACE_MS);
  });

  it("keep a bucket's TAT the grace past it whatever the jitter, for a caller whose clock has not moved on", async () => {
    // Found by the property below: with a jitter of 0 a TAT 4 µs ahead expired a millisecond later on the server's
    // clock, and the caller, its clock still before the TAT, found the bucket full (admitted, TAT now + 2).
    const now = 1893456047942196;
    const at = (hits: number, burst: number) => take("alg_grace_", hits, now, burst, 1);
    expect(await store.increment([at(4, 5)])).toEqual([{ kind: "token_bucket", admitted: true, tatMicros: now + 4 }]);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await store.increment([at(2, 3)])).toEqual([{ kind: "token_bucket", admitted: false, tatMicros: now + 4 }]);
    expect(await store.get([at(0, 5)])).toEqual([{ kind: "token_bucket", admitted: true, tatMicros: now + 4 }]);
    // ceil(4 µs) = 1 ms, plus the grace; no jitter here.
    const [value, pttl] = (await redis(env.TEST_REDIS_PORT, [
      ["GET", "alg_grace_tb"],
      ["PTTL", "alg_grace_tb"],
    ])) as [string, number];
    expect(value).toBe(String(now + 4));
    expect(pttl).toBeGreaterThan(CLOSED_WINDOW_GRACE_MS - 1000);
    expect(pttl).toBeLessThanOrEqual(CLOSED_WINDOW_GRACE_MS + 1);
  });

  it("write nothing for a refused or read-only operation", async () => {
    expect(
      await store.increment([slide("alg_refused_", START, 4, 3, 1), take("alg_refused_", 4, NOW_MICROS, 3, 1_000_000)]),
    ).toEqual([
      { kind: "sliding_window", admitted: false, previous: 0, current: 0 },
      { kind: "token_bucket", admitted: false, tatMicros: NOW_MICROS },
    ]);
    await store.get([slide("alg_read_", START, 1, 3, 1), take("alg_read_", 1, NOW_MICROS, 3, 1_000_000)]);
    expect(
      await redis(env.TEST_REDIS_PORT, [
        ["EXISTS", `{alg_refused_}${START}`, "alg_refused_tb", `{alg_read_}${START}`, "alg_read_tb"],
      ]),
    ).toEqual([0]);
  });

  it("add jitter to both expiries", async () => {
    const jittered = storeWith({ EXPIRATION_JITTER_MAX_SECONDS: "20" });
    // The largest jitter below 20 (floor(0.999 × 20) = 19 s), which no expiry without jitter reaches.
    const random = vi.spyOn(Math, "random").mockReturnValue(0.999);
    await jittered
      .increment([slide("alg_jitter_", START, 1, 3, 1), take("alg_jitter_", 1, NOW_MICROS, 3, 10_000_000)])
      .finally(() => random.mockRestore());
    const [slidingTtl, bucketPttl] = (await redis(env.TEST_REDIS_PORT, [
      ["TTL", `{alg_jitter_}${START}`],
      ["PTTL", "alg_jitter_tb"],
    ])) as number[];
    expect(slidingTtl).toBeGreaterThanOrEqual(2 * WINDOW - 1);
    expect(slidingTtl).toBeLessThan(2 * WINDOW + 20);
    expect(bucketPttl).toBeGreaterThan(9_000 + CLOSED_WINDOW_GRACE_MS);
    expect(bucketPttl).toBeLessThanOrEqual(10_000 + CLOSED_WINDOW_GRACE_MS + 19_000);
    // The window plus 19 s; the TAT (10 s ahead) plus the grace plus 19 000 ms.
    expect([2 * WINDOW + 18, 2 * WINDOW + 19]).toContain(slidingTtl);
    expect(bucketPttl).toBeGreaterThan(10_000 + CLOSED_WINDOW_GRACE_MS + 18_000);
  });

  it("go with the fixed counters of the request, and only per-second fixed counters to the per-second store", async () => {
    const split = storeWith({
      KVSTORE_PERSECOND: "true",
      KVSTORE_PERSECOND_URL: `127.0.0.1:${env.TEST_REDIS_PERSECOND_PORT}`,
    });
    const second = {
      key: `alg_split_s_${NOW / 1000}`,
      counterName: "alg_split_s_",
      hits: 2,
      windowEnd: NOW / 1000 + 1,
      windowSeconds: 1,
      perSecond: true,
    };
    const hour = {
      key: `alg_split_h_${START}`,
      counterName: "alg_split_h_",
      hits: 1,
      windowEnd: START + 3600,
      windowSeconds: 3600,
    };
    expect(
      await split.increment([
        second,
        slide("alg_split_", START, 1, 3, 1),
        hour,
        take("alg_split_", 1, NOW_MICROS, 3, 1_000_000),
        second,
      ]),
    ).toEqual([
      2,
      { kind: "sliding_window", admitted: true, previous: 0, current: 1 },
      1,
      { kind: "token_bucket", admitted: true, tatMicros: NOW_MICROS + 1_000_000 },
      4,
    ]);
    const keys = [second.key, `{alg_split_}${START}`, hour.key, "alg_split_tb"];
    expect(await redis(env.TEST_REDIS_PERSECOND_PORT, [["EXISTS", ...keys]])).toEqual([1]);
    expect(await redis(env.TEST_REDIS_PORT, [["EXISTS", ...keys]])).toEqual([3]);
  });

  it("call the scripts by SHA-1, and by their text once the server forgot them (SCRIPT FLUSH)", async () => {
    // A server of this test's own: no other file's EVAL reloads the scripts between the flush and the calls.
    const port = env.TEST_REDIS_SCRIPTS_PORT;
    const flushed = storeWith({ EXPIRATION_JITTER_MAX_SECONDS: "0", KVSTORE_URL: `127.0.0.1:${port}` });
    const evals = async () => {
      const [info] = await redis(port, [["INFO", "commandstats"]]);
      return Number(/cmdstat_eval:calls=(\d+)/.exec(String(info))?.[1] ?? 0);
    };
    const shas = await scriptShas();
    expect(
      await redis(port, [
        ["SCRIPT", "LOAD", SLIDING_WINDOW_SCRIPT],
        ["SCRIPT", "LOAD", TOKEN_BUCKET_SCRIPT],
        ["SCRIPT", "FLUSH"],
        ["SCRIPT", "EXISTS", shas.slidingWindow, shas.tokenBucket],
      ]),
    ).toEqual([shas.slidingWindow, shas.tokenBucket, "OK", [0, 0]]);
    const evalsBefore = await evals();
    const name = "alg_flushed_";
    const fixed = {
      key: `${name}f_${START}`,
      counterName: `${name}f_`,
      hits: 1,
      windowEnd: START + 60,
      windowSeconds: 60,
    };
    expect(
      await flushed.increment([
        slide(name, START, 1, 3, 1),
        fixed,
        take(name, 1, NOW_MICROS, 3, 1_000_000),
        slide(name, START, 1, 3, 1),
      ]),
    ).toEqual([
      { kind: "sliding_window", admitted: true, previous: 0, current: 1 },
      1,
      { kind: "token_bucket", admitted: true, tatMicros: NOW_MICROS + 1_000_000 },
      { kind: "sliding_window", admitted: true, previous: 0, current: 2 },
    ]);
    // The three script calls the server answered NOSCRIPT went again as EVAL, once each.
    expect((await evals()) - evalsBefore).toBe(3);
    // The fixed counter was counted once; the EVALs left both scripts cached for the next EVALSHA.
    expect(
      await redis(port, [
        ["GET", fixed.key],
        ["SCRIPT", "EXISTS", shas.slidingWindow, shas.tokenBucket],
      ]),
    ).toEqual(["1", [1, 1]]);
    expect(await flushed.get([slide(name, START, 0, 3, 1)])).toEqual([
      { kind: "sliding_window", admitted: true, previous: 0, current: 2 },
    ]);
    expect((await evals()) - evalsBefore).toBe(3);
  });

  it("reply as the steps of core/algorithms.ts do, for any sequence of requests", async () => {
    const item = fc.oneof(
      fc.record({
        kind: fc.constant("fixed" as const),
        name: fc.constantFrom("a", "b"),
        hits: fc.nat(3),
      }),
      fc.record({
        kind: fc.constant("sliding" as const),
        name: fc.constantFrom("a", "b"),
        window: fc.integer({ min: 1, max: 3 }),
        hits: fc.nat(4),
        limit: fc.integer({ min: 0, max: 8 }),
        weight: fc.double({ min: 0, max: 1, noNaN: true }),
      }),
      fc.record({
        kind: fc.constant("bucket" as const),
        name: fc.constantFrom("a", "b"),
        hits: fc.nat(4),
        burst: fc.integer({ min: 1, max: 5 }),
        interval: fc.constantFrom(1, 999_999, 7_000_000, 30_000_000),
      }),
    );
    const request = fc.record({
      counting: fc.boolean(),
      items: fc.array(item, { minLength: 1, maxLength: 4 }),
      advanceMicros: fc.oneof(fc.constant(0), fc.nat(1_000_000), fc.nat(40_000_000)),
    });
    // The model forgets nothing, but the server expires keys on its own clock, which this property's does not follow.
    // A random jitter may be 0 (then a bucket lives the grace past its TAT); the largest of the default 300 s (299 s)
    // keeps every key past this test's timeout, so the replies depend on the steps alone.
    const jittered = storeWith();
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(request, { minLength: 1, maxLength: 16, size: "max" }), async (requests) => {
        const prefix = `alg_prop${run++}_`;
        const model = new MemoryStore();
        let nowMicros = NOW_MICROS + 123_457;
        for (const { counting, items, advanceMicros } of requests) {
          nowMicros += advanceMicros;
          const built = items.map((spec): CounterIncrement => {
            const counterName = `${prefix}${spec.kind}_${spec.name}_`;
            if (spec.kind === "fixed")
              return {
                key: `${counterName}${START}`,
                counterName,
                hits: spec.hits,
                windowEnd: START + 60,
                windowSeconds: 60,
              };
            if (spec.kind === "sliding")
              return slide(counterName, START + spec.window * WINDOW, spec.hits, spec.limit, spec.weight);
            return take(counterName, spec.hits, nowMicros, spec.burst, spec.interval);
          });
          const expected = counting ? await model.increment(built) : await model.get(built);
          // Mocked only around the store's call: fast-check takes its seed from Math.random.
          const longest = vi.spyOn(Math, "random").mockReturnValue(0.999);
          const replies = counting ? jittered.increment(built) : jittered.get(built);
          expect(await replies.finally(() => longest.mockRestore())).toEqual(expected);
        }
      }),
      { numRuns: 150 },
    );
  }, 120_000);
});
