// The isolate's statistics buffer: what known decisions add, under which names, the batches a flush takes, the
// retry queue, and merging batches from several isolates (the aggregate's arithmetic) without losing a count.
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/ratelimit/core/config";
import {
  addTimer,
  batchEntries,
  emptyTimer,
  emptyTotals,
  mergeTotals,
  partsOf,
  RetryQueue,
  snapshotEntries,
  StatsBuffer,
  TIMER_BOUNDS_MS,
  type AggregatePart,
  type StatsTotals,
} from "../../../src/ratelimit/stats/buffer";
import { statsRecord, statsText } from "../../../src/ratelimit/stats/text";
import { harness, request } from "../../support/ratelimit-core";
import { expectedRuleStats, STATS_CONFIG, statsSequence } from "../../support/ratelimit-stats-fixture";

function configFor(domain: string) {
  const loaded = loadConfig([{ name: "stats.yaml", text: STATS_CONFIG(domain) }], { mergeDomainConfig: false });
  if (!loaded.ok) throw new Error(loaded.error.message);
  return loaded.value;
}

/** Runs the fixture's sequence through the pure core, recording every decision into one buffer. */
async function recordSequence(buffer: StatsBuffer, domain = "stats", unknown = "nowhere") {
  const h = harness(configFor(domain));
  const codes: string[] = [];
  for (const step of statsSequence(domain, unknown)) {
    const decision = await h.run(request(step.domain, step.descriptors));
    codes.push(decision.response.overallCode);
    buffer.addRequestStats(step.domain, decision.stats);
  }
  return codes;
}

/** Applies a batch's parts the way the aggregate does (adding), returning the merged totals. */
function apply(parts: AggregatePart[], into: StatsTotals = emptyTotals()): StatsTotals {
  for (const part of parts) mergeTotals(into, { counters: part.counters, rules: part.rules, timers: part.timers });
  return into;
}

const asRecord = (totals: StatsTotals) =>
  Object.fromEntries(
    snapshotEntries(totals).map((entry) => [entry.name, entry.kind === "counter" ? entry.value : entry.timer.count]),
  );

describe("StatsBuffer", () => {
  it("records the exact per-rule statistics of a known sequence (near, over, shadow, replaces, detailed, value_to_metric)", async () => {
    const buffer = new StatsBuffer({ keepSamples: false });
    const codes = await recordSequence(buffer);
    expect(codes).toEqual(statsSequence("stats", "nowhere").map((step) => step.code));
    const batch = buffer.take("isolate-1")!;
    expect(batch.id).toBe("isolate-1");
    expect(asRecord(apply(partsOf(batch)))).toEqual(expectedRuleStats("stats", "nowhere"));
    expect(buffer.isEmpty).toBe(true);
    expect(buffer.take("isolate-2")).toBeUndefined();
  });

  it("counts global shadow overrides and errors as service-level counters", async () => {
    const h = harness(configFor("g"), { shadowMode: true });
    const buffer = new StatsBuffer({ keepSamples: false });
    for (let i = 0; i < 8; i++) buffer.addRequestStats("g", (await h.run(request("g", [[["near", "b"]]]))).stats);
    buffer.addCounter("ratelimit.service.call.should_rate_limit.service_error");
    const batch = buffer.take("b")!;
    expect(batch.counters).toEqual({
      "ratelimit.service.global_shadow_mode": 3,
      "ratelimit.service.call.should_rate_limit.service_error": 1,
    });
    expect(batch.domains).toEqual({ g: { "g.near": [8, 3, 1, 5, 0, 0] } });
  });

  it("keeps a timer's count, sum and buckets exact, and samples only when asked", () => {
    const withSamples = new StatsBuffer({ keepSamples: true, maxSamples: 2 });
    const without = new StatsBuffer({ keepSamples: false });
    for (const ms of [0, 3, 7, 70000]) {
      withSamples.addTiming("ratelimit_server.ShouldRateLimit.response_time", ms);
      without.addTiming("ratelimit_server.ShouldRateLimit.response_time", ms);
    }
    const batch = withSamples.take("t")!;
    const timer = batch.timers["ratelimit_server.ShouldRateLimit.response_time"];
    expect(timer.count).toBe(4);
    expect(timer.sumMs).toBe(70010);
    // 0 ms falls in the first bucket (<= 0.1), 3 ms in (2.5, 5], 7 ms in (5, 10], 70 s beyond the last bound.
    const expected = new Array(TIMER_BOUNDS_MS.length + 1).fill(0);
    expected[0] = 1;
    expected[TIMER_BOUNDS_MS.indexOf(5)] = 1;
    expected[TIMER_BOUNDS_MS.indexOf(10)] = 1;
    expected[TIMER_BOUNDS_MS.length] = 1;
    expect(timer.buckets).toEqual(expected);
    expect(batch.samples).toEqual({ "ratelimit_server.ShouldRateLimit.response_time": [0, 3] });
    expect(without.take("u")!.samples).toEqual({});
  });

  it("splits a batch into the service part (with the domain list) and one part per domain, all with its id", async () => {
    const buffer = new StatsBuffer({ keepSamples: false });
    await recordSequence(buffer, "split", "missing");
    buffer.addCounter("ratelimit.service.config_load_success");
    const parts = partsOf(buffer.take("iso-7")!);
    expect(parts.map((part) => [part.target, part.id, part.domains])).toEqual([
      ["service", "iso-7", ["split"]],
      ["domain:split", "iso-7", []],
    ]);
    expect(parts[0].counters).toEqual({
      "ratelimit.service.rate_limit.missing.domain_not_found": 2,
      "ratelimit.service.config_load_success": 1,
    });
    expect(Object.keys(parts[1].rules).sort()).toEqual([
      "split.client_10_0_0_1",
      "split.detailed_x",
      "split.detailed_y",
      "split.near",
      "split.new",
      "split.route_draw.method",
      "split.shadow",
    ]);
  });

  it("loses no count when many isolates' batches are merged in any order", async () => {
    const buffers = Array.from({ length: 5 }, () => new StatsBuffer({ keepSamples: false }));
    for (const buffer of buffers) {
      await recordSequence(buffer, "many", "gone");
      buffer.addTiming("ratelimit_server.ShouldRateLimit.response_time", 1);
    }
    const parts = buffers.flatMap((buffer, i) => partsOf(buffer.take(`iso-${i}`)!)).reverse();
    const merged = asRecord(apply(parts));
    const once = expectedRuleStats("many", "gone");
    expect(merged).toEqual({
      ...Object.fromEntries(Object.entries(once).map(([name, value]) => [name, value * 5])),
      "ratelimit_server.ShouldRateLimit.response_time": 5,
    });
  });
});

describe("flush entries and /stats text", () => {
  it("lists only the counters a batch moved, and every timer with its samples", () => {
    const buffer = new StatsBuffer({ keepSamples: true });
    buffer.addRequestStats("d", {
      rules: [
        {
          key: "d.k",
          totalHits: 2,
          overLimit: 0,
          nearLimit: 0,
          withinLimit: 2,
          shadowMode: 0,
          overLimitWithLocalCache: 0,
        },
      ],
      domainNotFound: 0,
      globalShadowMode: 0,
    });
    buffer.addTiming("ratelimit_server.ShouldRateLimit.response_time", 4);
    buffer.addCounter("ratelimit_server.ShouldRateLimit.total_requests");
    expect(batchEntries(buffer.take("x")!)).toEqual([
      { name: "ratelimit.service.rate_limit.d.k.total_hits", kind: "counter", value: 2 },
      { name: "ratelimit.service.rate_limit.d.k.within_limit", kind: "counter", value: 2 },
      {
        name: "ratelimit_server.ShouldRateLimit.response_time",
        kind: "timer",
        timer: expect.objectContaining({ count: 1, sumMs: 4 }),
        samples: [4],
      },
      { name: "ratelimit_server.ShouldRateLimit.total_requests", kind: "counter", value: 1 },
    ]);
  });

  it("prints every statistic as `name: value`, sorted, with EXTRA_TAGS in the names", () => {
    const timer = emptyTimer();
    addTimer(timer, { count: 2, sumMs: 3.5, buckets: [] });
    const totals: StatsTotals = {
      counters: { "ratelimit.service.config_load_success": 2 },
      rules: { "d.k_v": [3, 1, 1, 2, 0, 0] },
      timers: { "ratelimit_server.ShouldRateLimit.response_time": timer },
    };
    expect(statsText(snapshotEntries(totals), [])).toBe(
      [
        "ratelimit.service.config_load_success: 2",
        "ratelimit.service.rate_limit.d.k_v.near_limit: 1",
        "ratelimit.service.rate_limit.d.k_v.over_limit: 1",
        "ratelimit.service.rate_limit.d.k_v.over_limit_with_local_cache: 0",
        "ratelimit.service.rate_limit.d.k_v.shadow_mode: 0",
        "ratelimit.service.rate_limit.d.k_v.total_hits: 3",
        "ratelimit.service.rate_limit.d.k_v.within_limit: 2",
        'ratelimit_server.ShouldRateLimit.response_time: {"count":2,"sum_ms":3.5}',
        "",
      ].join("\n"),
    );
    expect(statsRecord(snapshotEntries({ ...totals, rules: {}, timers: {} }), [["env", "prod"]])).toEqual({
      "ratelimit.service.config_load_success.__env=prod": 2,
    });
  });
});

describe("RetryQueue", () => {
  const part = (id: string): AggregatePart => ({
    target: "service",
    id,
    counters: { c: 1 },
    timers: {},
    rules: {},
    domains: [],
  });

  it("gives back the failed parts in order, once", () => {
    const queue = new RetryQueue();
    queue.push([part("a"), part("b")]);
    queue.push([part("c")]);
    expect(queue.size).toBe(3);
    expect(queue.takeAll().map((p) => p.id)).toEqual(["a", "b", "c"]);
    expect(queue.takeAll()).toEqual([]);
  });

  it("drops the oldest parts beyond its limit and counts them", () => {
    const queue = new RetryQueue(2);
    queue.push([part("a"), part("b"), part("c")]);
    expect(queue.dropped).toBe(1);
    expect(queue.takeAll().map((p) => p.id)).toEqual(["b", "c"]);
  });
});
