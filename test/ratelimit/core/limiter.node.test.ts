// The base limiter through the service: stop-increment mode (rule 13), the local over-limit cache,
// stat deltas and response headers.

import { describe, expect, it } from "vitest";
import { LocalCache } from "../../../src/ratelimit/core/local-cache";
import { doLimit } from "../../../src/ratelimit/core/limiter";
import { nearLimitThreshold, type RuleStatDelta, sanitizeStatName } from "../../../src/ratelimit/core/stats";
import { descriptor, harness, loadFixtures, request } from "../../support/ratelimit-core";
import { MemoryStore } from "../../support/ratelimit-memory-store";

const basic = loadFixtures(["basic.yaml"]);
const stop = loadFixtures(["stop-increment.yaml"]);
const HEADERS = { limit: "RateLimit-Limit", remaining: "RateLimit-Remaining", reset: "RateLimit-Reset" };

function sum(deltas: RuleStatDelta[]): Omit<RuleStatDelta, "key"> {
  const total = {
    totalHits: 0,
    overLimit: 0,
    nearLimit: 0,
    withinLimit: 0,
    shadowMode: 0,
    overLimitWithLocalCache: 0,
  };
  for (const delta of deltas) {
    for (const name of Object.keys(total) as (keyof typeof total)[]) total[name] += delta[name];
  }
  return total;
}

describe("stopCacheKeyIncrementWhenOverlimit (rule 13)", () => {
  const both = request("stop", [[["key2", "value2"]], [["key3", "value3"]]]);

  it("without the flag, key2 keeps counting while key3 is over the limit", async () => {
    const h = harness(stop);
    const remaining: number[][] = [];
    for (let i = 0; i < 15; i++) {
      remaining.push((await h.run(both)).response.statuses.map((s) => s.limitRemaining));
    }
    expect(remaining.map((r) => r[0])).toEqual([19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5]);
    expect(remaining.map((r) => r[1])).toEqual([9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 0, 0, 0, 0, 0]);
  });

  it("with the flag, key2's remaining freezes at 10 from the 11th request on", async () => {
    const h = harness(stop, { stopCacheKeyIncrementWhenOverlimit: true });
    const results = [];
    for (let i = 0; i < 15; i++) results.push((await h.run(both)).response);
    expect(results.map((r) => r.statuses[0].limitRemaining)).toEqual([
      19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 10, 10, 10, 10, 10,
    ]);
    expect(results.map((r) => r.statuses[1].code)).toEqual([
      ...Array<string>(10).fill("OK"),
      ...Array<string>(5).fill("OVER_LIMIT"),
    ]);
    expect(h.store.value("stop_key2_value2_1200")).toBe(10);
    expect(h.store.value("stop_key3_value3_0")).toBe(15);
    // Each request reads first, then increments once.
    expect(h.store.calls.slice(20, 22).map((call) => [call.method, call.items.map((item) => item.hits)])).toEqual([
      ["get", [0, 0]],
      ["increment", [0, 1]],
    ]);
  });

  it("increments every descriptor that would exceed, and only those", async () => {
    const h = harness(basic, { stopCacheKeyIncrementWhenOverlimit: true });
    await h.run(request("test-domain", [[["key3", "a"]], [["key4", "b"]]]));
    const decision = await h.run(request("test-domain", [[["key3", "a"]], [["key2", "c"]], [["key4", "b"]]]));
    expect(h.store.calls.at(-1)?.items.map((item) => [item.key, item.hits])).toEqual([
      ["test-domain_key3_a_0", 1],
      ["test-domain_key2_c_1200", 0],
      ["test-domain_key4_b_0", 1],
    ]);
    expect(decision.response.statuses.map((s) => [s.code, s.limitRemaining])).toEqual([
      ["OVER_LIMIT", 0],
      ["OK", 20],
      ["OVER_LIMIT", 0],
    ]);
  });

  it("skips the read for a single counter, whose outcome it cannot change", async () => {
    const h = harness(basic, { stopCacheKeyIncrementWhenOverlimit: true });
    await h.run(request("test-domain", [[["key2", "x"]], [["key6", "unlimited"]]]));
    expect(h.store.calls.map((call) => call.method)).toEqual(["increment"]);
  });

  it("only reads the other counters when a descriptor is over limit in the local cache", async () => {
    const cache = new LocalCache(4096);
    const h = harness(stop, { stopCacheKeyIncrementWhenOverlimit: true }, cache);
    for (let i = 0; i < 11; i++) await h.run(request("stop", [[["key3", "value3"]]]));
    expect(cache.isOverLimit("stop_key3_value3_0", 1234)).toBe(true);
    h.store.calls.length = 0;

    const decision = await h.run(both);
    expect(h.store.calls).toEqual([
      {
        method: "increment",
        items: [
          {
            key: "stop_key2_value2_1200",
            counterName: "stop_key2_value2_",
            hits: 0,
            windowEnd: 1260,
            windowSeconds: 60,
            perSecond: false,
          },
        ],
      },
    ]);
    expect(decision.response.statuses.map((s) => [s.code, s.limitRemaining])).toEqual([
      ["OK", 20],
      ["OVER_LIMIT", 0],
    ]);
  });
});

describe("local over-limit cache", () => {
  it("answers a cached key without the store until the window ends", async () => {
    const cache = new LocalCache(4096);
    const h = harness(basic, {}, cache);
    await h.run(request("test-domain", [[["key3", "x"]]]), 1234);
    expect((await h.run(request("test-domain", [[["key3", "x"]]]), 1234)).response.overallCode).toBe("OVER_LIMIT");
    expect(h.store.calls).toHaveLength(2);

    const cached = await h.run(request("test-domain", [[["key3", "x"]]]), 3599);
    expect(h.store.calls).toHaveLength(2);
    expect(cached.response.statuses).toEqual([
      {
        code: "OVER_LIMIT",
        currentLimit: { requestsPerUnit: 1, unit: "HOUR" },
        limitRemaining: 0,
        durationUntilResetSeconds: 1,
      },
    ]);
    expect(cached.stats.rules).toEqual([
      {
        key: "test-domain.key3",
        totalHits: 1,
        overLimit: 1,
        nearLimit: 0,
        withinLimit: 0,
        shadowMode: 0,
        overLimitWithLocalCache: 1,
      },
    ]);

    // The next window has its own key and the cached entry has expired.
    const next = await h.run(request("test-domain", [[["key3", "x"]]]), 3600);
    expect(next.response.overallCode).toBe("OK");
    expect(h.store.calls).toHaveLength(3);
    expect(cache.isOverLimit("test-domain_key3_x_0", 3600)).toBe(false);
  });

  it("still sends the other descriptors of the request to the store", async () => {
    const cache = new LocalCache(4096);
    const h = harness(basic, {}, cache);
    await h.run(request("test-domain", [[["key3", "x"]]]));
    await h.run(request("test-domain", [[["key3", "x"]]]));
    const decision = await h.run(request("test-domain", [[["key3", "x"]], [["key2", "y"]]]));
    expect(h.store.calls.at(-1)?.items.map((item) => [item.key, item.hits])).toEqual([["test-domain_key2_y_1200", 1]]);
    expect(decision.response.statuses.map((s) => s.limitRemaining)).toEqual([0, 19]);
  });

  it("lets a shadow rule answer OK from the cache and counts it", async () => {
    const cache = new LocalCache(4096);
    const h = harness(loadFixtures(["shadow.yaml"]), {}, cache);
    await h.run(request("shadow", [[["user", "user-a"]]]));
    await h.run(request("shadow", [[["user", "user-a"]]]));
    const decision = await h.run(request("shadow", [[["user", "user-a"]]]));
    expect(h.store.calls).toHaveLength(2);
    expect(decision.response.statuses[0]).toMatchObject({ code: "OK", limitRemaining: 0 });
    expect(decision.stats.rules[0]).toMatchObject({
      overLimit: 1,
      overLimitWithLocalCache: 1,
      shadowMode: 1,
    });
  });

  it("forgets the least recently used key when full", async () => {
    // Room for exactly one of these keys.
    const cache = new LocalCache("test-domain_key3_a_0".length + 64);
    const h = harness(basic, {}, cache);
    for (const value of ["a", "a", "b", "b"]) await h.run(request("test-domain", [[["key3", value]]]));
    expect(cache.isOverLimit("test-domain_key3_b_0", 1234)).toBe(true);
    expect(cache.isOverLimit("test-domain_key3_a_0", 1234)).toBe(false);
    await h.run(request("test-domain", [[["key3", "a"]]]));
    expect(h.store.value("test-domain_key3_a_0")).toBe(3);
  });
});

describe("stat deltas", () => {
  it("counts 25 requests at 20 per minute as 20 within, 4 near and 5 over", async () => {
    const h = harness(basic);
    const deltas: RuleStatDelta[] = [];
    for (let i = 0; i < 25; i++) deltas.push(...(await h.run(request("test-domain", [[["key2", "x"]]]))).stats.rules);
    expect(new Set(deltas.map((d) => d.key))).toEqual(new Set(["test-domain.key2"]));
    expect(sum(deltas)).toEqual({
      totalHits: 25,
      overLimit: 5,
      nearLimit: 4,
      withinLimit: 20,
      shadowMode: 0,
      overLimitWithLocalCache: 0,
    });
  });

  it("splits a batch of hits across the near and over thresholds", async () => {
    const h = harness(basic);
    const deltas = [];
    for (const hits of [14, 5, 5, 5]) {
      deltas.push((await h.run(request("test-domain", [[["key2", "x"]]], hits))).stats.rules[0]);
    }
    expect(
      deltas.map(({ totalHits, withinLimit, nearLimit, overLimit }) => [totalHits, withinLimit, nearLimit, overLimit]),
    ).toEqual([
      [14, 14, 0, 0],
      [5, 5, 3, 0],
      [5, 0, 1, 4],
      [5, 0, 0, 5],
    ]);
  });

  it("counts only the over part of a batch as shadow hits", async () => {
    const h = harness(loadFixtures(["shadow.yaml"]));
    const decision = await h.run(request("shadow", [[["user", "user-a"]]], 3));
    expect(decision.stats.rules[0]).toMatchObject({
      totalHits: 3,
      overLimit: 2,
      shadowMode: 2,
      nearLimit: 1,
    });
  });

  it("uses the configured near-limit ratio, in float32 like the reference", () => {
    expect(nearLimitThreshold(20, 0.8)).toBe(16);
    expect(nearLimitThreshold(10, 0.8)).toBe(8);
    expect(nearLimitThreshold(3, 0.5)).toBe(1);
    expect(nearLimitThreshold(0, 0.8)).toBe(0);
  });

  it("reports near-limit hits with a different ratio", async () => {
    const h = harness(basic, { nearLimitRatio: 0.5 });
    const deltas = [];
    for (let i = 0; i < 12; i++) deltas.push(...(await h.run(request("test-domain", [[["key2", "x"]]]))).stats.rules);
    expect(sum(deltas).nearLimit).toBe(2);
  });

  it("sanitises stat keys", async () => {
    expect(sanitizeStatName("d.k_a:b|c")).toBe("d.k_a_b_c");
    expect(sanitizeStatName("d.client_10.0.0.1.sub")).toBe("d.client_10_0_0_1.sub");
    const h = harness(loadFixtures(["value-to-metric.yaml"]));
    const decision = await h.run(request("metrics", [[["host", "10.1.2.3:8080"]], [["client", "10.0.0.1"]]]));
    expect(decision.stats.rules.map((r) => r.key)).toEqual(["metrics.host_10_1_2_3_8080", "metrics.client_10_0_0_1"]);
  });
});

describe("response headers", () => {
  it("describes the only limited descriptor", async () => {
    const h = harness(basic, { responseHeaders: HEADERS });
    expect((await h.run(request("test-domain", [[["key2", "x"]]]), 2222)).response.responseHeadersToAdd).toEqual([
      { key: "RateLimit-Limit", value: "20" },
      { key: "RateLimit-Remaining", value: "19" },
      { key: "RateLimit-Reset", value: "58" },
    ]);
  });

  it("chooses the fewest remaining, the first one on ties", async () => {
    const h = harness(basic, { responseHeaders: HEADERS });
    const fewest = await h.run(request("test-domain", [[["key2", "x"]], [["key3", "y"]]]), 2222);
    expect(fewest.response.responseHeadersToAdd.map((header) => header.value)).toEqual(["1", "0", "1378"]);
    const tie = await h.run(request("test-domain", [[["key4", "a"]], [["key3", "b"]]]), 2222);
    expect(tie.response.responseHeadersToAdd.map((header) => header.value)).toEqual(["1", "0", "84178"]);
  });

  it("lets the last over-limit descriptor win", async () => {
    const h = harness(basic, { responseHeaders: HEADERS });
    await h.run(request("test-domain", [[["key4", "a"]], [["key3", "b"]]]), 2222);
    const over = await h.run(request("test-domain", [[["key4", "a"]], [["key3", "b"]]]), 2222);
    expect(over.response.responseHeadersToAdd.map((header) => header.value)).toEqual(["1", "0", "1378"]);
  });

  it("sends none when no descriptor has a limit, or when disabled", async () => {
    const enabled = harness(basic, { responseHeaders: HEADERS });
    expect(
      (await enabled.run(request("test-domain", [[["key6", "x"]], [["key2", "value3"]]]))).response
        .responseHeadersToAdd,
    ).toEqual([]);
    const disabled = harness(basic);
    expect((await disabled.run(request("test-domain", [[["key2", "x"]]]))).response.responseHeadersToAdd).toEqual([]);
  });
});

describe("doLimit", () => {
  it("answers OK without limits and never calls the store for an unusable limit", async () => {
    const store = new MemoryStore();
    const result = await doLimit(
      store,
      { stopCacheKeyIncrementWhenOverlimit: false, nearLimitRatio: 0.8, cacheKeyPrefix: "" },
      {
        domain: "d",
        descriptors: [descriptor(["k", "v"]), descriptor(["k", "w"])],
        limits: [
          undefined,
          {
            requestsPerUnit: 1,
            unit: "UNKNOWN",
            name: "",
            unlimited: false,
            shadowMode: false,
            replaces: [],
            metricKey: "d.k",
            override: true,
            quotaMode: false,
            algorithm: "fixed_window",
            windowSeconds: 0,
            unitMultiplier: 1,
            capacity: 1,
            emissionIntervalMicros: 0,
            lease: false,
          },
        ],
        hits: [1, 1],
      },
      1234,
    );
    expect(result).toEqual({
      ok: true,
      value: {
        statuses: [
          { code: "OK", limitRemaining: 0 },
          { code: "OK", limitRemaining: 0 },
        ],
        counts: [undefined, undefined],
        rules: [],
      },
    });
    expect(store.calls).toEqual([]);
  });
});
