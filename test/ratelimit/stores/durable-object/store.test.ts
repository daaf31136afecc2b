// POST /json with the Durable Object store in its sharded layout (COUNTER_OBJECT_LAYOUT=sharded): the same decisions
// as the per-key layout (routes/http.test.ts), each counter in the shard object shardName(counterName, shards) and no
// per-key object made for it; exact admission under concurrency on both layouts (fixed window, and the sliding-window
// and token-bucket algorithms through the store itself), the same decisions on both, and the layout settings refused
// by name when malformed.
import { listDurableObjectIds, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { shardName } from "../../../../src/ratelimit/core/counter-shards";
import type { AlgorithmReply, CounterIncrement } from "../../../../src/ratelimit/core/types";
import { durableObjectStore } from "../../../../src/ratelimit/stores/durable-object/store";
import { descriptor } from "../../../support/ratelimit-calls";
import { atNowWithConfig, DECISION_CONFIG, decisionSuite, NOW } from "../../../support/ratelimit-decision-suite";
import { eventually, refusedAnswer, workerWith, type Answer } from "../../../support/ratelimit-stores";
import { countingNamespace, ONE_AT_A_TIME } from "../../../support/ratelimit-counting-namespace";

// NOW is 30 s into the hour starting here.
const HOUR_START = 1893456000;
const SHARDS = 4;

const sharded = workerWith({
  COUNTER_OBJECT_LAYOUT: "sharded",
  COUNTER_OBJECT_SHARDS: String(SHARDS),
  CACHE_KEY_PREFIX: "sh_",
});
const layouts = [
  ["per_key", workerWith({ CACHE_KEY_PREFIX: "pk_" })],
  ["sharded", workerWith({ COUNTER_OBJECT_LAYOUT: "SHARDED", COUNTER_OBJECT_SHARDS: "4", CACHE_KEY_PREFIX: "sk_" })],
] as const;

const idsOf = async () => (await listDurableObjectIds(env.RATE_LIMIT_COUNTER)).map((id) => id.toString());
const idOf = (name: string) => env.RATE_LIMIT_COUNTER.idFromName(name).toString();

/** The rows of these keys in the object's `counters` table (none when the table does not exist). */
const storedRows = (object: DurableObjectStub, ...keys: string[]) =>
  runInDurableObject(object, (_instance, state) => {
    const sql = state.storage.sql;
    if (sql.exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'counters'").toArray().length === 0)
      return [];
    return sql
      .exec(
        `SELECT key, count, window_end FROM counters WHERE key IN (${keys.map(() => "?").join(",")}) ORDER BY key`,
        ...keys,
      )
      .toArray();
  });

atNowWithConfig({ "rl.yaml": DECISION_CONFIG });

describe("the sharded layout decides as the per-key layout does", () => {
  decisionSuite(sharded.rateLimit, {
    // The counter is a row of its shard's table; no object of its own was made.
    afterKeyOnlyRule: async () => {
      const counterName = "sh_rl_client_10.0.0.1_";
      const key = `${counterName}${HOUR_START}`;
      const shard = env.RATE_LIMIT_COUNTER.getByName(shardName(counterName, SHARDS));
      expect(await shard.read([{ key, hits: 0, windowEnd: HOUR_START + 3600, windowSeconds: 3600 }])).toEqual([4]);
      // Written behind (COUNTER_WRITE_BEHIND, 2 s); polled on real timers, as vi.waitUntil would move the frozen clock.
      const row = { key, count: 4, window_end: HOUR_START + 3600 };
      expect(await eventually(() => storedRows(shard, key), [row])).toEqual([row]);
      const ids = await idsOf();
      expect(ids).toContain(idOf(shardName(counterName, SHARDS)));
      expect(ids).not.toContain(idOf(counterName));
      expect(ids).not.toContain(idOf("sh_rl_client_10.0.0.2_"));
    },
  });

  it("makes no object but its shards, however many keys it counts", async () => {
    const before = new Set(await idsOf());
    const counted = workerWith({
      COUNTER_OBJECT_LAYOUT: "sharded",
      COUNTER_OBJECT_SHARDS: "2",
      CACHE_KEY_PREFIX: "few_",
    });
    const names = Array.from({ length: 12 }, (_, i) => `few_rl_client_c${i}_`);
    const statuses = [];
    for (let i = 0; i < names.length; i++)
      statuses.push((await counted.rateLimit({ domain: "rl", descriptors: [descriptor(["client", `c${i}`])] })).status);
    expect(statuses).toEqual(Array(12).fill(200));
    const shards = [...new Set(names.map((name) => shardName(name, 2)))].sort();
    expect(shards).toEqual(["shard 0 of 2", "shard 1 of 2"]);
    const made = async () => (await idsOf()).filter((id) => !before.has(id)).sort();
    const expected = shards.map(idOf).sort();
    expect(await eventually(made, expected)).toEqual(expected);
  });
});

describe.each(layouts)("the %s layout under concurrency", (_name, layout) => {
  it("admits exactly 100 of 300 concurrent hits on a key limited to 100", async () => {
    const request = { domain: "rl", descriptors: [descriptor(["hot", "concurrent"])] };
    const statuses = await Promise.all(
      Array.from({ length: 300 }, () => layout.rateLimit(request).then((a) => a.status)),
    );
    const counts: Record<number, number> = {};
    for (const status of statuses) counts[status] = (counts[status] ?? 0) + 1;
    expect(counts).toEqual({ 200: 100, 429: 200 });
  }, 60_000);
});

const PER_KEY = { kind: "per_key", activeLimit: 0, admissionMaxWaitMs: 2_000, writeBehindMs: 2_000 } as const;
const SHARDED = { kind: "sharded", shards: SHARDS } as const;
const FOUR_LINGERING = { maxInFlight: 4, lingerMs: 2, maxOperationsPerCall: 50, maxWaitMs: 10_000, handoffMs: 500 };

describe.each([
  ["per_key", "one call in flight", PER_KEY, ONE_AT_A_TIME],
  ["sharded", "one call in flight", SHARDED, ONE_AT_A_TIME],
  ["per_key", "four calls in flight, 2 ms linger, 50 per call", PER_KEY, FOUR_LINGERING],
  ["sharded", "four calls in flight, 2 ms linger, 50 per call", SHARDED, FOUR_LINGERING],
] as const)("the algorithms on the %s layout under concurrency, %s", (layoutName, variant, layoutOf, coalescing) => {
  const { namespace, counted } = countingNamespace();
  const store = durableObjectStore(namespace, layoutOf, coalescing);
  const layout = `${layoutName}_${coalescing.maxInFlight}`;
  const WINDOW = 60;
  // NOW is 30 s into its minute: the previous minute weighs 0.5.
  const START = Math.floor(NOW / 1000 / WINDOW) * WINDOW;

  const slide = (
    counterName: string,
    start: number,
    hits: number,
    limit: number,
    weight: number,
  ): CounterIncrement => ({
    key: `${counterName}${start}`,
    counterName,
    hits,
    windowEnd: start + 2 * WINDOW,
    windowSeconds: 2 * WINDOW,
    algorithm: {
      kind: "sliding_window",
      previousKey: `${counterName}${start - WINDOW}`,
      limit,
      previousWeight: weight,
    },
  });
  /** 600 concurrent single-hit calls of `item`; their replies. */
  const race = async (item: CounterIncrement) =>
    (await Promise.all(Array.from({ length: 600 }, () => store.increment([item])))).map(
      ([reply]) => reply as AlgorithmReply,
    );
  const admitted = (replies: AlgorithmReply[]) => replies.filter((reply) => reply.admitted);

  it("admits exactly 100 of 600 sliding-window hits limited to 100, each seeing its own count", async () => {
    const name = `alg_${layout}_sw_`;
    const replies = await race(slide(name, START, 1, 100, 0.5));
    const counts = admitted(replies).map((reply) => (reply.kind === "sliding_window" ? reply.current : -1));
    expect(counts.sort((a, b) => a - b)).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
    // A read is the step with 0 hits: at the limit, not over it.
    expect(await store.get([slide(name, START, 1, 100, 0.5)])).toEqual([
      { kind: "sliding_window", admitted: true, previous: 0, current: 100 },
    ]);
  }, 60_000);

  it("admits exactly the weighted remainder when the previous window holds 10", async () => {
    const name = `alg_${layout}_swprev_`;
    expect(await store.increment([slide(name, START - WINDOW, 10, 100, 0)])).toEqual([
      { kind: "sliding_window", admitted: true, previous: 0, current: 10 },
    ]);
    // floor(10 × 0.55) = 5 of the 100 are taken by the previous window.
    const replies = await race(slide(name, START, 1, 100, 0.55));
    expect(admitted(replies)).toHaveLength(95);
    expect(replies.every((reply) => reply.kind === "sliding_window" && reply.previous === 10)).toBe(true);
  }, 60_000);

  it("admits exactly 100 of 600 token-bucket hits with a burst of 100", async () => {
    const nowMicros = NOW * 1000;
    const interval = 36_000_000;
    const replies = await race({
      key: `alg_${layout}_tb_tb`,
      counterName: `alg_${layout}_tb_`,
      hits: 1,
      windowEnd: Math.ceil((nowMicros + 100 * interval) / 1e6),
      windowSeconds: 3600,
      algorithm: { kind: "token_bucket", burst: 100, emissionIntervalMicros: interval, nowMicros },
    });
    const tats = admitted(replies).map((reply) => (reply.kind === "token_bucket" ? reply.tatMicros : -1));
    expect(tats.sort((a, b) => a - b)).toEqual(Array.from({ length: 100 }, (_, i) => nowMicros + (i + 1) * interval));
    expect(replies.filter((reply) => !reply.admitted)).toHaveLength(500);
  }, 60_000);

  it("admits exactly 100 of 600 fixed-window hits limited to 100, in far fewer calls than hits", async () => {
    const before = { ...counted };
    const counterName = `alg_${layout}_fixed_`;
    const item = {
      key: `${counterName}${START}`,
      counterName,
      hits: 1,
      windowEnd: START + WINDOW,
      windowSeconds: WINDOW,
    };
    const replies = (await Promise.all(Array.from({ length: 600 }, () => store.increment([item])))).map(([c]) => c);
    // Every hit is counted once and each sees its own count: 1 to 600, as one by one.
    expect(replies.sort((a, b) => (a as number) - (b as number))).toEqual(Array.from({ length: 600 }, (_, i) => i + 1));
    expect(counted.operations - before.operations).toBe(600);
    // All 600 are sent in one turn: the first leader takes what waits, up to the per-call cap.
    const calls = counted.calls - before.calls;
    expect(calls).toBeGreaterThanOrEqual(Math.ceil(600 / coalescing.maxOperationsPerCall));
    expect(calls).toBeLessThanOrEqual(coalescing.maxInFlight === 1 ? 2 : 600 / coalescing.maxOperationsPerCall + 4);
  }, 60_000);
});

describe("both layouts", () => {
  it("take the same decisions on the same sequence of requests", async () => {
    const sequence = [
      { domain: "rl", descriptors: [descriptor(["client", "same"]), descriptor(["path", "/login"])] },
      { domain: "rl", hitsAddend: 2, descriptors: [descriptor(["client", "same"])] },
      { domain: "rl", descriptors: [descriptor(["path", "/login"]), descriptor(["wild", "api/1"])] },
      { domain: "rl", descriptors: [descriptor(["wild", "api/2"]), descriptor(["client", "other"])] },
      { domain: "rl", descriptors: [descriptor(["wild", "api/3"])] },
      { domain: "rl", descriptors: [{ ...descriptor(["client", "same"]), hitsAddend: "0" }] },
      { domain: "rl", descriptors: [descriptor(["client", "other"]), descriptor(["blocked", "x"])] },
    ];
    const run = async (rateLimit: (body: unknown) => Promise<Answer>) => {
      const answers = [];
      for (const body of sequence) {
        const { status, body: answer } = await rateLimit(body);
        answers.push({ status, answer });
      }
      return answers;
    };
    const [perKey, shardedAnswers] = [await run(layouts[0][1].rateLimit), await run(layouts[1][1].rateLimit)];
    expect(shardedAnswers).toEqual(perKey);
    expect(perKey.map((a) => a.status)).toEqual([200, 200, 200, 200, 429, 200, 429]);
    expect(perKey.map((a) => a.answer.statuses.map((s: any) => s.limitRemaining ?? 0))).toEqual([
      [2, 1],
      [0],
      [0, 1],
      [0, 2],
      [0],
      [0],
      [1, 0],
    ]);
  });
});

describe("the layout settings", () => {
  it.each([
    [{ COUNTER_OBJECT_SHARDS: "0" }, "COUNTER_OBJECT_SHARDS: Too small: expected number to be >=1"],
    [{ COUNTER_OBJECT_SHARDS: "5000" }, "COUNTER_OBJECT_SHARDS: Too big: expected number to be <=4096"],
    [{ COUNTER_WRITE_BEHIND: "6s" }, "COUNTER_WRITE_BEHIND: must be at most 5s"],
    [{ COUNTER_OBJECT_MIN_IDLE_LIFETIME: "2m" }, "COUNTER_OBJECT_MIN_IDLE_LIFETIME: must be at most 60s"],
    [{ COUNTER_OBJECT_LAYOUT: "bogus" }, 'COUNTER_OBJECT_LAYOUT: Invalid option: expected one of "per_key"|"sharded"'],
    [{ COUNTER_MAX_IN_FLIGHT: "0" }, "COUNTER_MAX_IN_FLIGHT: Too small: expected number to be >=1"],
    [{ COUNTER_MAX_IN_FLIGHT: "65" }, "COUNTER_MAX_IN_FLIGHT: must be at most 64"],
    [{ COUNTER_BATCH_LINGER_MS: "51" }, "COUNTER_BATCH_LINGER_MS: must be at most 50"],
    [{ COUNTER_BATCH_LINGER_MS: "1.5" }, "COUNTER_BATCH_LINGER_MS: Invalid input: expected int, received number"],
    [{ COUNTER_OBJECT_ACTIVE_LIMIT: "-1" }, "COUNTER_OBJECT_ACTIVE_LIMIT: Too small: expected number to be >=0"],
    [{ COUNTER_OBJECT_ADMISSION_MAX_WAIT: "31s" }, "COUNTER_OBJECT_ADMISSION_MAX_WAIT: must be at most 30s"],
    [
      { COUNTER_OBJECT_ADMISSION_MAX_WAIT: "soon" },
      'COUNTER_OBJECT_ADMISSION_MAX_WAIT: expected a duration such as "10s", "500ms" or "1m"',
    ],
  ])("refuses %j with a 500 naming the variable", async (vars, message) => {
    const answer = await refusedAnswer(workerWith({ COUNTER_OBJECT_LAYOUT: "sharded", ...vars }), {
      domain: "rl",
      descriptors: [descriptor(["client", "refused"])],
    });
    expect(answer.status).toBe(500);
    expect(answer.body).toBe(`ratelimit settings are invalid: ${message}`);
  });

  it("accepts the bounds", async () => {
    const bounds = workerWith({
      COUNTER_OBJECT_LAYOUT: "sharded",
      COUNTER_OBJECT_SHARDS: "4096",
      COUNTER_WRITE_BEHIND: "5s",
      COUNTER_OBJECT_MIN_IDLE_LIFETIME: "1m",
      COUNTER_OBJECT_ADMISSION_MAX_WAIT: "30s",
      CACHE_KEY_PREFIX: "bounds_",
    });
    const answer = await bounds.rateLimit({ domain: "rl", descriptors: [descriptor(["client", "bounds"])] });
    expect(answer.status).toBe(200);
    expect(answer.body.statuses[0].limitRemaining).toBe(2);
  });
});
