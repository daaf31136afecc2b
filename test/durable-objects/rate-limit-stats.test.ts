// The statistics aggregate: batch parts add up exactly when many isolates flush at once, a retried part (same id)
// counts once, a failed delivery is retried without loss, the stored totals survive a new instance, and the names
// callers choose (unknown domains, rule keys) are bounded.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { emptyTimer, partsOf, RetryQueue, StatsBuffer, type AggregatePart } from "../../src/ratelimit/stats/buffer";
import { DOMAIN_NOT_FOUND_OVERFLOW } from "../../src/ratelimit/stats/names";
import { SINK_TIMEOUT_MS } from "../../src/ratelimit/stats/config";
import { deliverParts, readAggregate } from "../../src/ratelimit/stats/sinks";

const part = (target: string, id: string, fields: Partial<AggregatePart>): AggregatePart => ({
  target,
  id,
  counters: {},
  timers: {},
  rules: {},
  domains: [],
  ...fields,
});

/**
 * One isolate's buffer after `hits` decisions on two rules of `domain`, one unknown-domain descriptor and a call; the
 * counter and timer are named after the domain too, so that each test reads only its own totals.
 */
function isolateBuffer(domain: string, hits: number): StatsBuffer {
  const buffer = new StatsBuffer({ keepSamples: false });
  for (let i = 0; i < hits; i++) {
    buffer.addRequestStats(domain, {
      rules: [
        {
          key: `${domain}.a`,
          totalHits: 1,
          overLimit: 0,
          nearLimit: 0,
          withinLimit: 1,
          shadowMode: 0,
          overLimitWithLocalCache: 0,
        },
        {
          key: `${domain}.b_x`,
          totalHits: 2,
          overLimit: 1,
          nearLimit: 1,
          withinLimit: 1,
          shadowMode: 1,
          overLimitWithLocalCache: 0,
        },
      ],
      domainNotFound: 0,
      globalShadowMode: 0,
    });
    buffer.addCounter(`test.${domain}.calls`);
    buffer.addTiming(`test.${domain}.time`, 3);
  }
  return buffer;
}

describe("RateLimitStats", () => {
  it("applies a part once and ignores the same id again", async () => {
    const stub = env.RATE_LIMIT_STATS.getByName("test-dedup");
    const counted = part("test-dedup", "iso-a-1", {
      counters: { c: 2 },
      rules: { "d.k": [1, 0, 0, 1, 0, 0] },
      domains: ["d"],
    });
    expect(await stub.add(counted)).toBe(true);
    expect(await stub.add(counted)).toBe(false);
    expect(await stub.add({ ...counted, id: "iso-a-2" })).toBe(true);
    expect(await stub.snapshot()).toEqual({
      counters: { c: 4 },
      rules: { "d.k": [2, 0, 0, 2, 0, 0] },
      timers: {},
      domains: ["d"],
    });
  });

  it("stores at most 100 unknown-domain counters, later new domains adding to the overflow name", async () => {
    const stub = env.RATE_LIMIT_STATS.getByName("test-unknown-domains");
    const notFound = (domain: string) => `ratelimit.service.rate_limit.${domain}.domain_not_found`;
    const first = Object.fromEntries(Array.from({ length: 99 }, (_, i) => [notFound(`x${i}`), 1]));
    await stub.add(part("test-unknown-domains", "u-1", { counters: first }));
    const second = { [notFound("x0")]: 2, [notFound("y1")]: 1, [notFound("y2")]: 5, other: 1 };
    await stub.add(part("test-unknown-domains", "u-2", { counters: second }));
    const { counters } = await stub.snapshot();
    const named = Object.keys(counters).filter((name) => name.endsWith(".domain_not_found"));
    expect(named.length).toBe(100);
    expect([counters[notFound("x0")], counters[notFound("y1")], counters[notFound("y2")]]).toEqual([3, 1, undefined]);
    expect([counters[DOMAIN_NOT_FOUND_OVERFLOW], counters.other]).toEqual([5, 1]);
  });

  it("stores at most 1000 rule keys of a domain, later new keys adding to the domain's overflow key", async () => {
    const stub = env.RATE_LIMIT_STATS.getByName("domain:test-rule-keys");
    const hit = [1, 0, 0, 1, 0, 0];
    const first = Object.fromEntries(Array.from({ length: 999 }, (_, i) => [`test-rule-keys.k_${i}`, hit]));
    await stub.add(part("domain:test-rule-keys", "r-1", { rules: first }));
    const second = {
      "test-rule-keys.k_0": [2, 1, 0, 1, 0, 0],
      "test-rule-keys.new_1": hit,
      "test-rule-keys.new_2": [5, 0, 2, 5, 0, 0],
      "test-rule-keys.rule_stats_overflow": [3, 3, 0, 0, 0, 3],
    };
    await stub.add(part("domain:test-rule-keys", "r-2", { rules: second }));
    await stub.add(part("domain:test-rule-keys", "r-3", { rules: { "test-rule-keys.new_3": hit } }));
    const { rules } = await stub.snapshot();
    expect(Object.keys(rules).length).toBe(1001);
    expect(rules["test-rule-keys.k_0"]).toEqual([3, 1, 0, 2, 0, 0]);
    expect(rules["test-rule-keys.new_1"]).toEqual(hit);
    expect([rules["test-rule-keys.new_2"], rules["test-rule-keys.new_3"]]).toEqual([undefined, undefined]);
    expect(rules["test-rule-keys.rule_stats_overflow"]).toEqual([9, 3, 2, 6, 0, 3]);
  });

  it("adds timers bucket by bucket and keeps everything in storage", async () => {
    const stub = env.RATE_LIMIT_STATS.getByName("test-timers");
    const timer = emptyTimer();
    timer.count = 2;
    timer.sumMs = 7;
    timer.buckets[3] = 2;
    await stub.add(part("test-timers", "t-1", { timers: { t: timer } }));
    await stub.add(
      part("test-timers", "t-2", {
        timers: { t: { ...timer, buckets: timer.buckets.map((n, i) => (i === 5 ? 1 : n)) } },
      }),
    );
    const stored = await runInDurableObject(stub, (_instance, state) =>
      state.storage.sql.exec("SELECT count, sum_ms, buckets FROM timers WHERE name = 't'").toArray(),
    );
    const buckets = emptyTimer().buckets;
    buckets[3] = 4;
    buckets[5] = 1;
    expect(stored).toEqual([{ count: 4, sum_ms: 14, buckets: JSON.stringify(buckets) }]);
  });

  it("loses no count when several isolates' buffers flush at once", async () => {
    const isolates = [3, 5, 7, 11, 13].map((hits) => isolateBuffer("multi", hits));
    const batches = isolates.map((buffer, i) => buffer.take(`isolate-${i}-1`)!);
    const failed = await Promise.all(batches.map((batch) => deliverParts(env, partsOf(batch), SINK_TIMEOUT_MS)));
    expect(failed.flat()).toEqual([]);
    // One isolate's answer was lost and it sends its parts again: they are not counted twice.
    expect(await deliverParts(env, partsOf(batches[2]), SINK_TIMEOUT_MS)).toEqual([]);

    const totals = await readAggregate(env, SINK_TIMEOUT_MS);
    const hits = 3 + 5 + 7 + 11 + 13;
    expect(totals.rules["multi.a"]).toEqual([hits, 0, 0, hits, 0, 0]);
    expect(totals.rules["multi.b_x"]).toEqual([2 * hits, hits, hits, hits, hits, 0]);
    expect(totals.counters["test.multi.calls"]).toBe(hits);
    expect(totals.timers["test.multi.time"]).toMatchObject({ count: hits, sumMs: 3 * hits });
  });

  it("keeps parts that could not be delivered and delivers them later exactly once", async () => {
    const batch = isolateBuffer("retried", 4).take("isolate-r-1")!;
    vi.spyOn(console, "warn").mockImplementation(() => {});
    const down = {
      ...env,
      RATE_LIMIT_STATS: { getByName: () => ({ add: async () => Promise.reject(new Error("aggregate unavailable")) }) },
    } as unknown as Env;
    const queue = new RetryQueue();
    queue.push(await deliverParts(down, partsOf(batch), SINK_TIMEOUT_MS));
    expect(queue.size).toBe(2);
    expect(await deliverParts(env, queue.takeAll(), SINK_TIMEOUT_MS)).toEqual([]);
    const totals = await readAggregate(env, SINK_TIMEOUT_MS);
    expect(totals.rules["retried.a"]).toEqual([4, 0, 0, 4, 0, 0]);
    vi.restoreAllMocks();
  });
});
