// The RateLimitCounter Durable Object in workerd: counting and reading, the write-behind into its SQLite table
// `counters(key, count, window_end)` that a new instance continues from, exactness under concurrency, closed rows
// deleted by the next write, the alarm's sweep 10 minutes after a window's end (only closed rows, 500 at a time, the
// whole storage dropped once empty) and windows too short to be stored.
// Real time throughout (no fake Date): the object computes what to write from Date.now().
import {
  abortAllDurableObjects,
  listDurableObjectIds,
  runDurableObjectAlarm,
  runInDurableObject,
} from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { fnv1a32 } from "../../src/ratelimit/core/counter-shards";
import type { CounterOperation } from "../../src/ratelimit/core/counter-table";

type Stub = DurableObjectStub<import("../../durable-objects/rate-limit-counter").RateLimitCounter>;
type Row = {
  key: string;
  count: number;
  window_end: number;
};

const nowSeconds = () => Math.floor(Date.now() / 1000);
/** A minute window that ends well past the write-behind and the minimum idle lifetime (10 s). */
const future = () => nowSeconds() + 60;
const op = (key: string, hits: number, windowEnd: number, windowSeconds = 60): CounterOperation => ({
  key,
  hits,
  windowEnd,
  windowSeconds,
});
/** How long after a window's end its row waits for a later write before the alarm sweeps it (SWEEP_DELAY_SECONDS). */
const SWEEP_DELAY_SECONDS = 600;
/** The object's alarm: the delay, plus fnv1a32 of its id modulo EXPIRATION_JITTER_MAX_SECONDS (300 by default). */
const alarmOf = (stub: Stub, windowEnd: number) =>
  (windowEnd + SWEEP_DELAY_SECONDS + (fnv1a32(stub.id.toString()) % 300)) * 1000;

const rowsOf = (stub: Stub) =>
  runInDurableObject(stub, (_instance, state) => {
    const hasTable = state.storage.sql
      .exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'counters'")
      .toArray().length;
    if (!hasTable) return undefined;
    return state.storage.sql.exec<Row>("SELECT key, count, window_end FROM counters ORDER BY key").toArray();
  });
const alarmAt = (stub: Stub) => runInDurableObject(stub, (_instance, state) => state.storage.getAlarm());
const tables = (stub: Stub) =>
  runInDurableObject(stub, (_instance, state) =>
    state.storage.sql
      .exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'counters'")
      .toArray()
      .map((row) => row.name),
  );

/** Stores rows directly (the object's own schema) and an alarm far away, so that only the test runs it. */
function seed(stub: Stub, rows: Row[]) {
  return runInDurableObject(stub, async (_instance, state) => {
    const sql = state.storage.sql;
    sql.exec(
      "CREATE TABLE IF NOT EXISTS counters (key TEXT PRIMARY KEY, count INTEGER NOT NULL, window_end INTEGER NOT NULL) WITHOUT ROWID",
    );
    sql.exec("CREATE INDEX IF NOT EXISTS counters_by_window_end ON counters (window_end)");
    for (const row of rows) sql.exec("INSERT INTO counters VALUES (?, ?, ?)", row.key, row.count, row.window_end);
    await state.storage.setAlarm(Date.now() + 3_600_000);
  });
}

const WRITTEN = { timeout: 6_000, interval: 100 };

describe("RateLimitCounter", { timeout: 30_000 }, () => {
  it("counts hits per key in order and reads without counting", async () => {
    const stub = env.RATE_LIMIT_COUNTER.getByName("d_k_v_");
    const end = future();
    expect(await stub.increment([op("d_k_v_60", 1, end)])).toEqual([1]);
    expect(
      await stub.increment([op("d_k_v_60", 2, end), op("d_k_v_60", 1, end), op("d_k_v_120", 0, end + 60, 120)]),
    ).toEqual([3, 4, 0]);
    expect(await stub.read([op("d_k_v_60", 0, end), op("d_k_v_absent", 0, end)])).toEqual([4, 0]);
    expect(await stub.read([op("d_k_v_60", 0, end)])).toEqual([4]);
  });

  it("writes its counts behind into its table, so a new instance continues from them", async () => {
    const stub = env.RATE_LIMIT_COUNTER.getByName("d_durable_");
    const end = future();
    expect(await stub.increment([op("d_durable_0", 2, end)])).toEqual([2]);
    expect(await stub.increment([op("d_durable_0", 1, end), op("d_durable_1", 4, end)])).toEqual([3, 4]);
    // Nothing is written at once; within COUNTER_WRITE_BEHIND (2 s) both calls land in one write.
    await vi.waitUntil(async () => (await rowsOf(stub)) !== undefined, WRITTEN);
    expect(await rowsOf(stub)).toEqual([
      { key: "d_durable_0", count: 3, window_end: end },
      { key: "d_durable_1", count: 4, window_end: end },
    ]);
    expect(await alarmAt(stub)).toBe(alarmOf(stub, end));

    // A new instance (the old one aborted, its memory with it) starts from the rows.
    const marked = await runInDurableObject(stub, (instance) => Object.assign(instance, { marked: true }).marked);
    await abortAllDurableObjects();
    const again = env.RATE_LIMIT_COUNTER.getByName("d_durable_");
    expect([marked, await runInDurableObject(again, (instance) => "marked" in instance)]).toEqual([true, false]);
    expect(await again.read([op("d_durable_0", 0, end), op("d_durable_1", 0, end)])).toEqual([3, 4]);
    expect(await again.increment([op("d_durable_0", 1, end)])).toEqual([4]);
    await vi.waitUntil(async () => (await rowsOf(again))?.[0].count === 4, WRITTEN);
    expect(await rowsOf(again)).toEqual([
      { key: "d_durable_0", count: 4, window_end: end },
      { key: "d_durable_1", count: 4, window_end: end },
    ]);
    expect(await alarmAt(again)).toBe(alarmOf(again, end));
  });

  it("is exact under concurrent increments, in memory and in storage", async () => {
    const stub = env.RATE_LIMIT_COUNTER.getByName("d_concurrent_");
    const end = future();
    const results = await Promise.all(Array.from({ length: 50 }, () => stub.increment([op("d_concurrent_0", 1, end)])));
    expect(results.map(([n]) => n as number).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 50 }, (_, i) => i + 1),
    );
    await vi.waitUntil(async () => (await rowsOf(stub)) !== undefined, WRITTEN);
    expect(await rowsOf(stub)).toEqual([{ key: "d_concurrent_0", count: 50, window_end: end }]);
  });

  it("deletes closed windows at the alarm and drops the whole storage once empty", async () => {
    const stub = env.RATE_LIMIT_COUNTER.getByName("d_expiring_");
    const past = nowSeconds() - 1;
    const openEnd = future();
    await seed(stub, [
      { key: "d_expiring_old", count: 5, window_end: past },
      { key: "d_expiring_new", count: 7, window_end: openEnd },
    ]);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await rowsOf(stub)).toEqual([{ key: "d_expiring_new", count: 7, window_end: openEnd }]);
    expect(await alarmAt(stub)).toBe(alarmOf(stub, openEnd));
    expect(await stub.read([op("d_expiring_old", 0, past), op("d_expiring_new", 0, openEnd)])).toEqual([0, 7]);

    const emptying = env.RATE_LIMIT_COUNTER.getByName("d_emptying_");
    await seed(emptying, [{ key: "d_emptying_0", count: 1, window_end: past }]);
    expect(await runDurableObjectAlarm(emptying)).toBe(true);
    expect(await alarmAt(emptying)).toBeNull();
    expect(await tables(emptying)).toEqual([]);
    // Usable again: it counts, writes and sets its alarm as a new object would.
    const end = future();
    expect(await emptying.increment([op("d_emptying_1", 2, end)])).toEqual([2]);
    await vi.waitUntil(async () => (await rowsOf(emptying)) !== undefined, WRITTEN);
    expect(await rowsOf(emptying)).toEqual([{ key: "d_emptying_1", count: 2, window_end: end }]);
    expect(await alarmAt(emptying)).toBe(alarmOf(emptying, end));
  });

  it("deletes closed rows with its next write and moves its alarm to 10 minutes past the open window's end", async () => {
    const stub = env.RATE_LIMIT_COUNTER.getByName("d_lazy_");
    const past = nowSeconds() - 1;
    await seed(stub, [{ key: "d_lazy_old", count: 5, window_end: past }]);
    const end = future();
    expect(await stub.increment([op("d_lazy_new", 2, end)])).toEqual([2]);
    await vi.waitUntil(async () => (await rowsOf(stub))?.some((row) => row.key === "d_lazy_new"), WRITTEN);
    // The write's commit deleted the closed row, so no alarm has to open the object for it: the alarm left is the
    // open row's, which a later write moves again while the key is in use.
    expect(await rowsOf(stub)).toEqual([{ key: "d_lazy_new", count: 2, window_end: end }]);
    expect(await alarmAt(stub)).toBe(alarmOf(stub, end));
    expect(await alarmAt(stub)).toBeGreaterThanOrEqual((end + SWEEP_DELAY_SECONDS) * 1000);
  });

  it("sweeps only the rows of closed windows", async () => {
    const stub = env.RATE_LIMIT_COUNTER.getByName("d_sweep_");
    const now = nowSeconds();
    await seed(stub, [
      { key: "d_sweep_a", count: 1, window_end: now - 3600 },
      { key: "d_sweep_b", count: 2, window_end: now - 60 },
      { key: "d_sweep_c", count: 3, window_end: now - 1 },
      { key: "d_sweep_d", count: 4, window_end: now + 300 },
      { key: "d_sweep_e", count: 5, window_end: now + 120 },
      { key: "d_sweep_f", count: 6, window_end: now + 86400 },
    ]);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await rowsOf(stub)).toEqual([
      { key: "d_sweep_d", count: 4, window_end: now + 300 },
      { key: "d_sweep_e", count: 5, window_end: now + 120 },
      { key: "d_sweep_f", count: 6, window_end: now + 86400 },
    ]);
    expect(await alarmAt(stub)).toBe(alarmOf(stub, now + 120));
  });

  it("deletes at most 500 rows per alarm and comes back at once for the rest", async () => {
    const stub = env.RATE_LIMIT_COUNTER.getByName("d_many_");
    const now = nowSeconds();
    const openEnd = now + 600;
    await seed(stub, [
      ...Array.from({ length: 700 }, (_, i) => ({ key: `d_many_${i}`, count: 1, window_end: now - 1 - (i % 7) })),
      { key: "d_many_open", count: 9, window_end: openEnd },
    ]);
    // Run the handler inside the object, so that the alarm it sets again cannot fire before we look.
    const first = await runInDurableObject(stub, async (instance, state) => {
      const before = Date.now();
      await instance.alarm();
      const left = state.storage.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM counters").one().n;
      const alarm = await state.storage.getAlarm();
      return { left, alarmDue: alarm !== null && alarm >= before && alarm <= Date.now() };
    });
    expect(first).toEqual({ left: 201, alarmDue: true });
    // The second run (ours, or the runtime's own since it is due) deletes the other 200.
    await runDurableObjectAlarm(stub);
    await vi.waitUntil(async () => (await rowsOf(stub))?.length === 1, WRITTEN);
    expect(await rowsOf(stub)).toEqual([{ key: "d_many_open", count: 9, window_end: openEnd }]);
    expect(await alarmAt(stub)).toBe(alarmOf(stub, openEnd));
  });

  it("after a sweep of fewer than 500 closed rows, sets the alarm for the next open window", async () => {
    const stub = env.RATE_LIMIT_COUNTER.getByName("d_some_");
    const now = nowSeconds();
    const openEnd = now + 600;
    await seed(stub, [
      ...Array.from({ length: 300 }, (_, i) => ({ key: `d_some_${i}`, count: 1, window_end: now - 1 })),
      { key: "d_some_open", count: 9, window_end: openEnd },
    ]);
    const swept = await runInDurableObject(stub, async (instance, state) => {
      await instance.alarm();
      return { alarm: await state.storage.getAlarm() };
    });
    expect(swept).toEqual({ alarm: alarmOf(stub, openEnd) });
    expect(await rowsOf(stub)).toEqual([{ key: "d_some_open", count: 9, window_end: openEnd }]);
  });

  it("never stores windows no longer than the minimum idle lifetime", async () => {
    const short = env.RATE_LIMIT_COUNTER.getByName("d_short_");
    const control = env.RATE_LIMIT_COUNTER.getByName("d_control_");
    const now = nowSeconds();
    expect(
      await short.increment([
        op("d_short_1", 3, now + 1, 1),
        op("d_short_10", 2, now + 10, 10),
        op("d_short_1", 1, now + 1, 1),
      ]),
    ).toEqual([3, 2, 4]);
    const end = future();
    await control.increment([op("d_control_0", 1, end)]);
    // Once the control object's write has landed, the short windows' would have too.
    await vi.waitUntil(async () => (await rowsOf(control)) !== undefined, WRITTEN);
    expect(await rowsOf(control)).toEqual([{ key: "d_control_0", count: 1, window_end: end }]);
    expect(await tables(short)).toEqual([]);
    expect(await alarmAt(short)).toBeNull();
  });

  it("lives as one object per rate-limit key", async () => {
    const before = (await listDurableObjectIds(env.RATE_LIMIT_COUNTER)).length;
    await env.RATE_LIMIT_COUNTER.getByName("d_one_").increment([op("d_one_1", 1, future())]);
    await env.RATE_LIMIT_COUNTER.getByName("d_one_").increment([op("d_one_2", 1, future())]);
    await env.RATE_LIMIT_COUNTER.getByName("d_two_").increment([op("d_two_1", 1, future())]);
    expect((await listDurableObjectIds(env.RATE_LIMIT_COUNTER)).length).toBe(before + 2);
  });
});
