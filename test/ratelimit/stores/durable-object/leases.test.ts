// Leases in the Workers runtime: POST /json with COUNTER_LEASES=true (a burst never admits more than the limit, and
// nearly all of it), a rule's own `lease: true`, an algorithm that does not lease counted exactly as without; then the
// store itself over counted calls: a burst and a steady stream answered in far fewer calls than decisions, shares given
// back once their key idles (the object's count is then exactly the hits), a new window starting without a share;
// the objects' lease statistics on /stats; and the lease settings refused by name.
import { env } from "cloudflare:workers";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { shardName } from "../../../../src/ratelimit/core/counter-shards";
import type { CounterIncrement } from "../../../../src/ratelimit/core/types";
import { durableObjectStore } from "../../../../src/ratelimit/stores/durable-object/store";
import { descriptor, parseStats, RATELIMIT_ADMIN, statDelta } from "../../../support/ratelimit-calls";
import { atNowWithConfig, NOW } from "../../../support/ratelimit-decision-suite";
import { refusedAnswer, workerWith } from "../../../support/ratelimit-stores";
import { countingNamespace, ONE_AT_A_TIME } from "../../../support/ratelimit-counting-namespace";

const CONFIG = `
domain: lease
descriptors:
  - key: hot
    rate_limit: { unit: hour, requests_per_unit: 100 }
  - key: flagged
    rate_limit: { unit: hour, requests_per_unit: 100, lease: true }
  - key: sliding
    rate_limit: { unit: hour, requests_per_unit: 100, algorithm: sliding_window }
`;

/** 600 concurrent POST /json hits on `key=value`; their statuses (code and limitRemaining), 429 exactly when over. */
async function burst(worker: ReturnType<typeof workerWith>, key: string, value: string) {
  const answers = await Promise.all(
    Array.from({ length: 600 }, () => worker.rateLimit({ domain: "lease", descriptors: [descriptor([key, value])] })),
  );
  // proto3 JSON leaves a limitRemaining of 0 out.
  const statuses = answers.map(({ body }): { code: string; limitRemaining: number } => ({
    code: body.statuses[0].code,
    limitRemaining: body.statuses[0].limitRemaining ?? 0,
  }));
  expect(answers.map((answer) => answer.status)).toEqual(
    statuses.map((status) => (status.code === "OVER_LIMIT" ? 429 : 200)),
  );
  return statuses;
}

describe("POST /json with leases", () => {
  atNowWithConfig({ "lease.yaml": CONFIG });

  it("admits 95 to 100 of 600 concurrent hits limited to 100 with COUNTER_LEASES=true, never more", async () => {
    const statuses = await burst(workerWith({ COUNTER_LEASES: "true", CACHE_KEY_PREFIX: "all_" }), "hot", "a");
    const ok = statuses.filter((status) => status.code === "OK");
    expect(ok.length).toBeGreaterThanOrEqual(95);
    expect(ok.length).toBeLessThanOrEqual(100);
    // limitRemaining under a lease stays within the limit, and a refusal reports none left.
    expect(ok.map((status) => status.limitRemaining).filter((left) => left < 0 || left >= 100)).toEqual([]);
    expect(statuses.filter((status) => status.code === "OVER_LIMIT").map((status) => status.limitRemaining)).toEqual(
      Array.from({ length: 600 - ok.length }, () => 0),
    );
  }, 60_000);

  it("leases a rule with lease: true without the setting, and never more than its limit", async () => {
    const statuses = await burst(workerWith({ CACHE_KEY_PREFIX: "flag_" }), "flagged", "a");
    const ok = statuses.filter((status) => status.code === "OK").length;
    expect(ok).toBeGreaterThanOrEqual(95);
    expect(ok).toBeLessThanOrEqual(100);
  }, 60_000);

  it("counts a sliding window exactly under COUNTER_LEASES=true: it does not lease", async () => {
    const statuses = await burst(workerWith({ COUNTER_LEASES: "true", CACHE_KEY_PREFIX: "sw_" }), "sliding", "a");
    const remaining = statuses.filter((status) => status.code === "OK").map((status) => status.limitRemaining);
    expect(remaining.sort((a, b) => a - b)).toEqual(Array.from({ length: 100 }, (_, i) => i));
  }, 60_000);
});

const HOUR = 3600;

/** A leased fixed-window hit of `counterName` in the hour starting at `start`. */
const hitOf = (counterName: string, limit: number, start: number): CounterIncrement => ({
  key: `${counterName}${start}`,
  counterName,
  hits: 1,
  windowEnd: start + HOUR,
  windowSeconds: HOUR,
  lease: { limit },
});

/** The object's own count of `item` (a plain read, no lease); `shards` for the sharded layout. */
const objectCount = async (item: CounterIncrement, shards?: number) =>
  (
    await env.RATE_LIMIT_COUNTER.getByName(shards ? shardName(item.counterName, shards) : item.counterName).read([
      { key: item.key, hits: 0, windowEnd: item.windowEnd, windowSeconds: item.windowSeconds },
    ])
  )[0];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.each([
  ["per_key", { kind: "per_key", activeLimit: 0, admissionMaxWaitMs: 2_000, writeBehindMs: 2_000 }],
  ["sharded", { kind: "sharded", shards: 4 }],
] as const)("the leased store, %s layout", (layoutName, layout) => {
  it("answers 600 concurrent hits limited to 100 in a handful of calls, never over the limit", async () => {
    const { namespace, counted } = countingNamespace();
    const store = durableObjectStore(namespace, layout, ONE_AT_A_TIME, { maxUnits: 1000 });
    const start = Math.floor(Date.now() / 1000 / HOUR) * HOUR;
    const item = hitOf(`lb_${layoutName}_`, 100, start);
    const counts = (await Promise.all(Array.from({ length: 600 }, () => store.increment([item])))).map(([c]) => c);
    const admitted = counts.filter((count) => (count as number) <= 100).length;
    expect(admitted).toBeGreaterThanOrEqual(95);
    expect(admitted).toBeLessThanOrEqual(100);
    expect(counted.calls).toBeLessThan(20);
  }, 60_000);

  it("answers a steady stream mostly from shares, and gives back what idles: the count is then the hits", async () => {
    const { namespace, counted } = countingNamespace();
    const store = durableObjectStore(namespace, layout, ONE_AT_A_TIME, { maxUnits: 1000 });
    const start = Math.floor(Date.now() / 1000 / HOUR) * HOUR;
    const item = hitOf(`ls_${layoutName}_`, 1_000_000, start);
    // 64 clients, each sending 40 hits one after the other.
    const clients = Array.from({ length: 64 }, async () => {
      for (let i = 0; i < 40; i++) await store.increment([item]);
    });
    await Promise.all(clients);
    expect(counted.calls / 2560).toBeLessThanOrEqual(0.05);
    // The shares' unused units come back once the key has been idle 300 ms.
    const shards = layout.kind === "sharded" ? layout.shards : undefined;
    let count = await objectCount(item, shards);
    for (let i = 0; i < 40 && count !== 2560; i++) {
      await sleep(100);
      count = await objectCount(item, shards);
    }
    expect(count).toBe(2560);
  }, 60_000);
});

describe("a new window", () => {
  beforeAll(() => vi.useFakeTimers({ toFake: ["Date"], now: NOW }));
  afterAll(() => vi.useRealTimers());

  it("starts without a share: the first hit of the next window is counted from 0 by its object", async () => {
    const { namespace, counted } = countingNamespace();
    const store = durableObjectStore(namespace, { kind: "sharded", shards: 2 }, ONE_AT_A_TIME, { maxUnits: 1000 });
    const start = Math.floor(NOW / 1000 / HOUR) * HOUR;
    const old = hitOf("lw_", 1000, start);
    const counts = await Promise.all(Array.from({ length: 100 }, () => store.increment([old])));
    expect(counts.map(([count]) => count).sort((a, b) => (a as number) - (b as number))).toEqual(
      Array.from({ length: 100 }, (_, i) => i + 1),
    );
    // One call counted the first hit, the next lent what waited.
    expect(counted.calls).toBe(2);
    vi.setSystemTime(NOW + HOUR * 1000);
    const next = hitOf("lw_", 1000, start + HOUR);
    expect(await store.increment([next])).toEqual([1]);
    expect(counted.calls).toBe(3);
    vi.setSystemTime(NOW);
  }, 60_000);
});

describe("the lease statistics", () => {
  const statsOf = async () => {
    const answer = await workerWith({}).fetch("/stats", { headers: RATELIMIT_ADMIN });
    return parseStats(answer.body as string);
  };
  const NAMES = ["leases_granted", "lease_units_lent", "leases_returned", "leases_expired"];
  const leaseCounters = (stats: Record<string, number>) =>
    JSON.stringify(NAMES.map((name) => stats[`ratelimit.durable_object.${name}`] ?? 0));
  // Earlier tests in this file share the aggregate: their shares come back once their key idles 300 ms and reach it
  // up to 1 s later (later still on a loaded machine). Counting starts once the counters have held still this long.
  const QUIET_MS = 2_500;

  /** /stats once the lease counters have not moved for QUIET_MS. */
  async function settledStats() {
    let last = await statsOf();
    let since = Date.now();
    return vi.waitUntil(
      async () => {
        const now = await statsOf();
        if (leaseCounters(now) !== leaseCounters(last)) [last, since] = [now, Date.now()];
        return Date.now() - since >= QUIET_MS && now;
      },
      { timeout: 30_000, interval: 250 },
    );
  }

  it("counts leases granted, returned and expired, and the units lent, on /stats", async () => {
    const before = await settledStats();
    const object = env.RATE_LIMIT_COUNTER.getByName("lstat_");
    const nowS = Math.floor(Date.now() / 1000);
    const op = { key: `lstat_${nowS}`, hits: 1, windowEnd: nowS + 2, windowSeconds: 2 };
    const ask = (holder: string, want: number, giveBack = 0, used = 0) => ({
      holder,
      limit: 100,
      want,
      giveBack,
      used,
    });
    expect(await object.increment([{ ...op, lease: ask("h1", 10) }])).toEqual([
      { kind: "lease", count: 1, granted: 10 },
    ]);
    // 89 left, two holders: floor(89 / 4) = 22.
    expect(await object.increment([{ ...op, hits: 0, lease: ask("h2", 50) }])).toEqual([
      { kind: "lease", count: 11, granted: 22 },
    ]);
    // h1 used 6 and gives back 4.
    expect(await object.increment([{ ...op, hits: 0, lease: ask("h1", 0, 4, 6) }])).toEqual([
      { kind: "lease", count: 29, granted: 0 },
    ]);
    // The window leaves the object's memory 10 s after its end, with h2's 22 units still lent: one lease expired.
    // The object forgets it on its next operation, so each poll gives it one (a read of another window).
    const other = { key: "lstat_other", hits: 0, windowEnd: nowS + 600, windowSeconds: 600 };
    const expected: Record<string, number> = {
      leases_granted: 2,
      lease_units_lent: 32,
      leases_returned: 1,
      leases_expired: 1,
    };
    let deltas: Record<string, number> = {};
    await vi.waitUntil(
      async () => {
        await object.read([other]);
        const after = await statsOf();
        deltas = Object.fromEntries(
          NAMES.map((name) => [name, statDelta(before, after, `ratelimit.durable_object.${name}`)]),
        );
        return NAMES.every((name) => deltas[name] >= expected[name]);
      },
      { timeout: 45_000, interval: 500 },
    );
    expect(deltas).toEqual(expected);
  }, 90_000);
});

describe("the lease settings", () => {
  it.each([
    [{ COUNTER_LEASES: "maybe" }, 'COUNTER_LEASES: Invalid option: expected one of "true"|"1"|"t"|"false"|"0"|"f"'],
    [{ COUNTER_LEASE_MAX_UNITS: "0" }, "COUNTER_LEASE_MAX_UNITS: Too small: expected number to be >=1"],
    [{ COUNTER_LEASE_MAX_UNITS: "1000001" }, "COUNTER_LEASE_MAX_UNITS: must be at most 1000000"],
  ])("refuses %j with a 500 naming the variable", async (vars, message) => {
    const answer = await refusedAnswer(workerWith(vars), {
      domain: "lease",
      descriptors: [descriptor(["hot", "refused"])],
    });
    expect(answer.status).toBe(500);
    expect(answer.body).toBe(`ratelimit settings are invalid: ${message}`);
  });
});
