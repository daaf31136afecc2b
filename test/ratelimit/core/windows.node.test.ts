// Several windows on one descriptor (additional_limits) in the core: loading and every refusal naming the rule
// (memcache, strict upstream, leases, counts), the dump, and the limiter over the Durable Object's own counter table
// (core/counter-table.ts over rows in memory): all or nothing, the deciding window, per-window statistics, the local
// cache and stop-increment mode.
import { describe, expect, it } from "vitest";
import { xdsConfigsToFiles } from "../../../src/ratelimit/config/xds";
import { dumpConfig, getLimit, loadConfig, type LoadOptions } from "../../../src/ratelimit/core/config";
import { MAX_ADDITIONAL_LIMITS } from "../../../src/ratelimit/core/config-rule";
import {
  type CounterOperation,
  CounterTable,
  type CounterRow,
  type CounterRows,
} from "../../../src/ratelimit/core/counter-table";
import { LocalCache } from "../../../src/ratelimit/core/local-cache";
import { shouldRateLimit, type ServiceSettings } from "../../../src/ratelimit/core/service";
import type { CounterIncrement, CounterReply, CounterStore } from "../../../src/ratelimit/core/types";
import { DEFAULT_SETTINGS, descriptor, request } from "../../support/ratelimit-core";

const load = (text: string, options: Partial<LoadOptions> = {}) =>
  loadConfig([{ name: "f.yaml", text }], { mergeDomainConfig: false, ...options });
const errorOf = (text: string, options: Partial<LoadOptions> = {}) => {
  const result = load(text, options);
  return result.ok ? "loaded" : result.error.message;
};

const RULES = `domain: d
descriptors:
  - key: k
    rate_limit:
      name: burst_and_day
      unit: second
      requests_per_unit: 2
    additional_limits:
      - unit: minute
        requests_per_unit: 3
      - algorithm: token_bucket
        unit: hour
        unit_multiplier: 2
        requests_per_unit: 100
        burst: 50
  - key: plain
    rate_limit:
      unit: second
      requests_per_unit: 2
`;

/** One descriptor `key` with a rate_limit of `rateLimit` lines and additional_limits of `windows` lines. */
const withWindows = (windows: string, rateLimit = "unit: second\n      requests_per_unit: 2") =>
  `domain: d\ndescriptors:\n  - key: k\n    rate_limit:\n      ${rateLimit}\n    additional_limits:\n${windows}`;
const window = (...lines: string[]) => `      - ${lines.join("\n        ")}\n`;

describe("loading additional_limits", () => {
  it("loads the windows onto the matched limit and shows them in the dump", () => {
    const result = load(RULES);
    if (!result.ok) throw new Error(result.error.message);
    const limit = getLimit(result.value, "d", descriptor(["k", "x"]));
    expect(limit?.additional).toEqual([
      {
        requestsPerUnit: 3,
        unit: "MINUTE",
        algorithm: "fixed_window",
        unitMultiplier: 1,
        windowSeconds: 60,
        capacity: 3,
        emissionIntervalMicros: 0,
      },
      {
        requestsPerUnit: 100,
        unit: "HOUR",
        algorithm: "token_bucket",
        unitMultiplier: 2,
        windowSeconds: 7200,
        capacity: 50,
        emissionIntervalMicros: 72_000_000,
      },
    ]);
    expect(getLimit(result.value, "d", descriptor(["plain", "x"]))).not.toHaveProperty("additional");
    expect(dumpConfig(result.value)).toBe(
      "d.k: unit=SECOND requests_per_unit=2, shadow_mode: false, quota_mode: false, additional_limits: " +
        "[unit=MINUTE requests_per_unit=3; unit=HOUR requests_per_unit=100, algorithm: token_bucket, " +
        "unit_multiplier: 2, burst: 50]\n" +
        "d.plain: unit=SECOND requests_per_unit=2, shadow_mode: false, quota_mode: false\n",
    );
  });

  it("refuses each misuse, naming the rule", () => {
    const minute = window("unit: minute", "requests_per_unit: 3");
    expect(errorOf(`domain: d\ndescriptors:\n  - key: k\n    additional_limits:\n${minute}`)).toBe(
      "f.yaml: rule 'd.k': additional_limits needs a rate_limit beside it",
    );
    expect(errorOf(withWindows(minute, "unlimited: true"))).toBe(
      "f.yaml: rule 'd.k': additional_limits cannot be used with an unlimited rate_limit",
    );
    expect(errorOf(withWindows(minute, "unit: second\n      requests_per_unit: 2\n      lease: true"))).toBe(
      "f.yaml: rule 'd.k': rate_limit.lease is not supported with additional_limits (a leased share of one window " +
        "cannot be judged together with the other windows)",
    );
    expect(errorOf(withWindows(minute.repeat(MAX_ADDITIONAL_LIMITS + 1)))).toBe(
      "f.yaml: rule 'd.k': additional_limits has 9 windows, more than 8",
    );
    expect(errorOf(withWindows(minute.repeat(MAX_ADDITIONAL_LIMITS)))).toBe("loaded");
    expect(errorOf(withWindows(window("unit: minute", "requests_per_unit: 3", "name: x")))).toBe(
      "f.yaml: rule 'd.k': additional_limits[0].name belongs to rate_limit, not to an additional window",
    );
    expect(errorOf(withWindows(minute + window("unit: fortnight", "requests_per_unit: 3")))).toBe(
      "f.yaml: rule 'd.k': additional_limits[1]: invalid rate limit unit 'fortnight'",
    );
    expect(errorOf(withWindows(window("unit: minute", "requests_per_unit: 3", "burst: 4")))).toBe(
      "f.yaml: rule 'd.k': additional_limits[0].burst is only for algorithm token_bucket, not fixed_window",
    );
    expect(errorOf(withWindows(window("unit: minute", "requests_per_unit: 3", "unit_multiplier: 0")))).toBe(
      "f.yaml: rule 'd.k': additional_limits[0].unit_multiplier must be an integer from 1 to 1000000, but found '0'",
    );
  });

  it("is refused by the memcache store at load, and is an unknown key under strict upstream checking", () => {
    expect(errorOf(RULES, { fixedWindowOnly: "BACKEND_TYPE=memcache" })).toBe(
      "f.yaml: rule 'd.k' has additional_limits, which the counter store chosen by BACKEND_TYPE=memcache cannot " +
        "count atomically (one fixed_window per descriptor only)",
    );
    expect(errorOf(RULES, { strictUpstream: true })).toBe("f.yaml: config error, unknown key 'additional_limits'");
  });
});

describe("additional_limits over xDS", () => {
  const resource = (windows: unknown[]) => ({
    name: "win",
    domain: "d",
    descriptors: [
      {
        key: "k",
        rateLimit: {
          unit: "SECOND",
          requestsPerUnit: 2,
          algorithm: { kind: "FIXED_WINDOW", additionalLimits: windows },
        },
      },
    ],
  });

  it("carries them in the extension message and loads them as the YAML key", () => {
    const files = xdsConfigsToFiles([
      resource([
        { unit: "minute", requestsPerUnit: 3 },
        { unit: "hour", requestsPerUnit: 100, kind: "TOKEN_BUCKET", unitMultiplier: 2, burst: 50 },
      ]),
    ]);
    if (!files.ok) throw new Error(files.error);
    expect(files.value[0].text).toBe(
      "domain: d\ndescriptors:\n  - key: k\n    rate_limit:\n      unit: SECOND\n      requests_per_unit: 2\n" +
        "      algorithm: fixed_window\n    additional_limits:\n      - unit: minute\n        requests_per_unit: 3\n      - unit: hour\n" +
        "        requests_per_unit: 100\n        algorithm: token_bucket\n        unit_multiplier: 2\n        burst: 50\n",
    );
    const loaded = loadConfig(files.value, { mergeDomainConfig: false });
    if (!loaded.ok) throw new Error(loaded.error.message);
    expect(dumpConfig(loaded.value)).toContain(
      "additional_limits: [unit=MINUTE requests_per_unit=3; unit=HOUR requests_per_unit=100, algorithm: token_bucket, " +
        "unit_multiplier: 2, burst: 50]",
    );
  });

  it("refuses them under strict upstream checking, as the YAML key", () => {
    const files = xdsConfigsToFiles([resource([{ unit: "minute", requestsPerUnit: 3 }])]);
    if (!files.ok) throw new Error(files.error);
    const loaded = loadConfig(files.value, { mergeDomainConfig: false, strictUpstream: true });
    expect(loaded.ok ? "loaded" : loaded.error.message).toBe("win: config error, unknown key 'algorithm'");
  });
});

/** Rows in memory for the real counter table. */
class MemoryRows implements CounterRows {
  readonly rows = new Map<string, CounterRow>();
  find = (key: string) => this.rows.get(key);
  commit(rows: CounterRow[]) {
    for (const row of rows) this.rows.set(row.key, { ...row });
  }
  earliestWindowEnd = () => undefined;
  deleteClosed = () => 0;
}

/** A CounterStore over one CounterTable (as one Durable Object applies its operations), recording the operations. */
function tableStore(clock: { nowMs: number }) {
  const table = new CounterTable(new MemoryRows(), {
    minIdleLifetimeMs: 10_000,
    writeBehindMs: 2_000,
    alarmJitterSeconds: 0,
    sweepDelaySeconds: 0,
    sweepBatch: 100,
  });
  const sent: CounterIncrement[][] = [];
  // As the Durable Object store passes them on (no lease ask: these descriptors are never leased).
  const asOperations = (items: CounterIncrement[]): CounterOperation[] =>
    items.map(({ key, hits, windowEnd, windowSeconds, algorithm }) => ({
      key,
      hits,
      windowEnd,
      windowSeconds,
      algorithm,
    }));
  const store: CounterStore = {
    increment: async (items) => {
      sent.push(items);
      return table.increment(asOperations(items), clock.nowMs).replies as CounterReply[];
    },
    get: async (items) => table.read(asOperations(items), clock.nowMs),
  };
  return { store, sent, table };
}

const T0 = 1_800_000_000; // a whole minute

function service(settings: Partial<ServiceSettings> = {}, localCache?: LocalCache) {
  const result = load(RULES);
  if (!result.ok) throw new Error(result.error.message);
  const clock = { nowMs: T0 * 1000 };
  const { store, sent, table } = tableStore(clock);
  const deps = { config: result.value, store, settings: { ...DEFAULT_SETTINGS, ...settings }, localCache };
  const run = async (value: string, at: number, hits = 0) => {
    clock.nowMs = at * 1000;
    const decided = await shouldRateLimit(deps, request("d", [[["k", value]]], hits), at);
    if (!decided.ok) throw new Error(decided.error.message);
    return decided.value;
  };
  return { run, sent, table };
}

describe("the limiter with several windows", () => {
  it("sends one windows operation with a distinct key per window under the descriptor's counter name", async () => {
    const { run, sent } = service();
    await run("v", T0 + 0.5);
    expect(sent[0]).toEqual([
      {
        key: `d_k_v_${T0}`,
        counterName: "d_k_v_",
        hits: 1,
        windowEnd: T0 + 3601,
        windowSeconds: 3600,
        perSecond: false,
        algorithm: {
          kind: "windows",
          windows: [
            { key: `d_k_v_${T0}`, windowEnd: T0 + 1, windowSeconds: 1, limit: 2 },
            { key: `d_k_v_${T0}_w1`, windowEnd: T0 + 60, windowSeconds: 60, limit: 3 },
            {
              key: "d_k_v_tb_w2",
              windowEnd: T0 + 3601,
              windowSeconds: 3600,
              limit: 50,
              algorithm: {
                kind: "token_bucket",
                burst: 50,
                emissionIntervalMicros: 72_000_000,
                nowMicros: 1_800_000_000_500_000,
              },
            },
          ],
        },
      },
    ]);
  });

  it("takes nothing from any window when one refuses, and counts statistics per window", async () => {
    const { run } = service();
    const codes = [];
    const stats = [];
    for (let i = 0; i < 4; i++) {
      const { response, stats: s } = await run("all", T0 + 0.1);
      codes.push(response.overallCode);
      stats.push(s.rules);
    }
    expect(codes).toEqual(["OK", "OK", "OVER_LIMIT", "OVER_LIMIT"]);
    // The third hit: the second's window refuses; the minute's had room but took nothing.
    expect(stats[2].map((rule) => [rule.key, rule.totalHits, rule.withinLimit, rule.overLimit])).toEqual([
      ["d.k", 1, 0, 1],
      ["d.k.window_1", 1, 0, 0],
      ["d.k.window_2", 1, 0, 0],
    ]);
    // Next second: one more fits the minute (2 + 1 = 3), then the minute's window decides.
    const next = await run("all", T0 + 1.1);
    expect(next.response.statuses[0]).toEqual({
      code: "OK",
      currentLimit: { requestsPerUnit: 3, unit: "MINUTE", name: "burst_and_day" },
      limitRemaining: 0,
      durationUntilResetSeconds: 59,
    });
    const refused = await run("all", T0 + 1.2);
    expect(refused.response.statuses[0]).toEqual({
      code: "OVER_LIMIT",
      currentLimit: { requestsPerUnit: 3, unit: "MINUTE", name: "burst_and_day" },
      limitRemaining: 0,
      durationUntilResetSeconds: 59,
    });
    expect(refused.stats.rules.map((rule) => [rule.key, rule.withinLimit, rule.overLimit])).toEqual([
      ["d.k", 0, 0],
      ["d.k.window_1", 0, 1],
      ["d.k.window_2", 0, 0],
    ]);
  });

  it("lets the local cache answer for the window that refused, until that window ends", async () => {
    const cache = new LocalCache(1024 * 1024);
    const { run, sent } = service({}, cache);
    for (let i = 0; i < 3; i++) await run("cached", T0 + 10);
    await run("cached", T0 + 11); // the minute's third
    const before = sent.length;
    await run("cached", T0 + 11.5); // refused by the minute's window, now cached
    const cached = await run("cached", T0 + 30);
    expect(sent.length).toBe(before + 1);
    expect(cached.response.statuses[0]).toMatchObject({ code: "OVER_LIMIT", durationUntilResetSeconds: 30 });
    expect(cached.stats.rules.map((rule) => [rule.key, rule.overLimit, rule.overLimitWithLocalCache])).toEqual([
      ["d.k", 0, 0],
      ["d.k.window_1", 1, 1],
      ["d.k.window_2", 0, 0],
    ]);
  });

  it("refuses a hits_addend larger than a window's room without counting any of it", async () => {
    const { run, table } = service();
    expect((await run("big", T0 + 5, 3)).response.overallCode).toBe("OVER_LIMIT");
    const read = table.read(
      [{ key: `d_k_big_${T0}_w1`, hits: 0, windowEnd: T0 + 60, windowSeconds: 60 }],
      (T0 + 5) * 1000,
    );
    expect(read).toEqual([0]);
    expect((await run("big", T0 + 5, 2)).response.overallCode).toBe("OK");
  });
});
