// The counters of one counter object as pure logic (src/ratelimit/core/counter-table.ts) over an in-memory fake of
// its row store that records every commit and sweep: what is counted, looked up and written, when the alarm moves,
// what the sweep deletes and what memory forgets; then the shard naming (src/ratelimit/core/counter-shards.ts).
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { slidingWindowStep, tokenBucketStep } from "../../../src/ratelimit/core/algorithms";
import { fnv1a32, shardName } from "../../../src/ratelimit/core/counter-shards";
import {
  CLOSED_WINDOW_GRACE_MS,
  emptyActivity,
  CounterTable,
  type CounterOperation,
  type CounterRow,
  type CounterRows,
  type CounterTableOptions,
} from "../../../src/ratelimit/core/counter-table";
import type { CounterReply } from "../../../src/ratelimit/core/types";

/** The table's activity with these counts of operations and rows, and no leases (these tests lend none). */
const rowActivity = (
  operations: number,
  lookups: number,
  rowsWritten: number,
  rowsDeleted: number,
  commits: number,
) => ({
  ...emptyActivity(),
  operations,
  lookups,
  rowsWritten,
  rowsDeleted,
  commits,
});

/** The CounterRows port in memory, recording every lookup, commit and deleteClosed call. */
class FakeRows implements CounterRows {
  readonly rows = new Map<string, CounterRow>();
  readonly finds: string[] = [];
  readonly commits: { rows: CounterRow[]; alarmAtMs: number | undefined }[] = [];
  readonly deletions: { nowSeconds: number; limit: number; deleted: string[] }[] = [];

  constructor(stored: CounterRow[] = []) {
    for (const row of stored) this.rows.set(row.key, { ...row });
  }

  find(key: string): CounterRow | undefined {
    this.finds.push(key);
    const row = this.rows.get(key);
    return row && { ...row };
  }

  commit(rows: CounterRow[], alarmAtMs: number | undefined): void {
    this.commits.push({ rows: rows.map((row) => ({ ...row })), alarmAtMs });
    for (const row of rows) this.rows.set(row.key, { ...row });
  }

  earliestWindowEnd(): number | undefined {
    const ends = [...this.rows.values()].map((row) => row.windowEnd);
    return ends.length === 0 ? undefined : Math.min(...ends);
  }

  deleteClosed(nowSeconds: number, limit: number): number {
    const deleted = [...this.rows.values()]
      .filter((row) => row.windowEnd <= nowSeconds)
      .slice(0, limit)
      .map((row) => row.key);
    for (const key of deleted) this.rows.delete(key);
    this.deletions.push({ nowSeconds, limit, deleted });
    return deleted.length;
  }

  /** The stored rows, sorted by key. */
  sorted(): CounterRow[] {
    return [...this.rows.values()].sort((a, b) => a.key.localeCompare(b.key));
  }
}

const OPTIONS: CounterTableOptions = {
  minIdleLifetimeMs: 10_000,
  writeBehindMs: 2_000,
  alarmJitterSeconds: 3,
  sweepDelaySeconds: 20,
  sweepBatch: 2,
};

/** 2027-01-15T08:00:00Z: a whole second, so window ends are exact. */
const T0S = 1_800_000_000;
const T0 = T0S * 1000;
const alarmOf = (windowEnd: number) => (windowEnd + OPTIONS.sweepDelaySeconds + OPTIONS.alarmJitterSeconds) * 1000;

const op = (key: string, hits: number, windowEnd: number, windowSeconds = 60): CounterOperation => ({
  key,
  hits,
  windowEnd,
  windowSeconds,
});

function tableOver(stored: CounterRow[] = [], options: Partial<CounterTableOptions> = {}) {
  const rows = new FakeRows(stored);
  return { rows, table: new CounterTable(rows, { ...OPTIONS, ...options }) };
}

/** Writes what waits and sweeps at `nowMs`: the rows were never looked up nor written, and memory is empty. */
function expectRowsUntouched(rows: FakeRows, table: CounterTable, nowMs: number) {
  table.writeUnwritten(nowMs);
  expect(table.sweep(nowMs)).toEqual({ kind: "empty" });
  expect(rows.finds).toEqual([]);
  expect(rows.commits).toEqual([]);
}

describe("CounterTable: counting", () => {
  it("returns each counter after its operation, in order, several operations on one key included", () => {
    const { rows, table } = tableOver();
    const end = T0S + 30;
    expect(table.increment([op("a", 1, end), op("a", 2, end), op("b", 0, end), op("a", 1, end)], T0)).toEqual({
      replies: [1, 3, 0, 4],
      writeDueMs: T0 + 2_000,
    });
    expect(table.increment([op("b", 5, end), op("a", 1, end)], T0 + 100)).toEqual({
      replies: [5, 5],
      writeDueMs: T0 + 2_000,
    });
    expect(table.read([op("a", 0, end), op("b", 0, end), op("c", 0, end)], T0 + 200)).toEqual([5, 5, 0]);
    // Each key was looked up once, when first seen; reading changed nothing and wrote nothing.
    expect(rows.finds).toEqual(["a", "b", "c"]);
    expect(rows.commits).toEqual([]);
    expect(table.size).toBe(3);
  });

  it("neither looks up nor writes a window no longer than the minimum idle lifetime", () => {
    const { rows, table } = tableOver();
    // 10 s windows (= minIdleLifetime) and 1 s windows, one of them ending exactly 10 s from now.
    const counts = table.increment(
      [op("ten", 3, T0S + 10, 10), op("one", 1, T0S + 1, 1), op("ten", 1, T0S + 10, 10)],
      T0,
    );
    expect(counts).toEqual({ replies: [3, 1, 4], writeDueMs: undefined });
    expect(table.read([op("one", 0, T0S + 1, 1)], T0 + 500)).toEqual([1]);
    expectRowsUntouched(rows, table, T0 + 5_000);
    expect(table.takeActivity()).toEqual(rowActivity(4, 0, 0, 0, 0));
  });

  it("writes a hit only when its window ends more than the minimum idle lifetime from now", () => {
    const { rows, table } = tableOver();
    expect(table.increment([op("soon", 1, T0S + 10), op("later", 1, T0S + 11)], T0)).toEqual({
      replies: [1, 1],
      writeDueMs: T0 + 2_000,
    });
    table.writeUnwritten(T0 + 2_000);
    expect(rows.commits).toEqual([
      { rows: [{ key: "later", count: 1, windowEnd: T0S + 11 }], alarmAtMs: alarmOf(T0S + 11) },
    ]);
    // A hit that alone would not be written leaves nothing waiting.
    expect(table.increment([op("soon", 2, T0S + 10)], T0 + 2_500)).toEqual({ replies: [3], writeDueMs: undefined });
    expect(rows.finds).toEqual(["soon", "later"]);
  });
});

describe("CounterTable: write-behind and the alarm", () => {
  it("gathers the hits before the write into one commit of the latest counts, with the alarm", () => {
    const { rows, table } = tableOver();
    expect(table.increment([op("a", 1, T0S + 60)], T0).writeDueMs).toBe(T0 + 2_000);
    expect(table.increment([op("a", 1, T0S + 60)], T0 + 500).writeDueMs).toBe(T0 + 2_000);
    expect(table.increment([op("b", 3, T0S + 120, 120)], T0 + 1_000).writeDueMs).toBe(T0 + 2_000);
    expect(table.increment([op("a", 4, T0S + 60)], T0 + 1_500).replies).toEqual([6]);
    expect(rows.commits).toEqual([]);
    table.writeUnwritten(T0 + 2_000);
    expect(rows.commits).toEqual([
      {
        rows: [
          { key: "a", count: 6, windowEnd: T0S + 60 },
          { key: "b", count: 3, windowEnd: T0S + 120 },
        ],
        alarmAtMs: alarmOf(T0S + 60),
      },
    ]);
    // Nothing waits any more; the next hit starts a new interval.
    table.writeUnwritten(T0 + 2_100);
    expect(rows.commits).toHaveLength(1);
    expect(table.increment([op("a", 1, T0S + 60)], T0 + 3_000).writeDueMs).toBe(T0 + 5_000);
    expect(table.takeActivity()).toEqual(rowActivity(5, 2, 2, 0, 1));
  });

  it("moves the alarm only earlier, never later", () => {
    const { rows, table } = tableOver();
    const write = (key: string, windowEnd: number, nowMs: number) => {
      table.increment([op(key, 1, windowEnd, 3600)], nowMs);
      table.writeUnwritten(nowMs + 2_000);
      return rows.commits.at(-1);
    };
    expect(write("b", T0S + 120, T0)).toEqual({
      rows: [{ key: "b", count: 1, windowEnd: T0S + 120 }],
      alarmAtMs: alarmOf(T0S + 120),
    });
    expect(write("a", T0S + 60, T0 + 3_000)).toEqual({
      rows: [{ key: "a", count: 1, windowEnd: T0S + 60 }],
      alarmAtMs: alarmOf(T0S + 60),
    });
    expect(write("c", T0S + 3600, T0 + 6_000)).toEqual({
      rows: [{ key: "c", count: 1, windowEnd: T0S + 3600 }],
      alarmAtMs: undefined,
    });
    expect(write("b", T0S + 120, T0 + 9_000)).toEqual({
      rows: [{ key: "b", count: 2, windowEnd: T0S + 120 }],
      alarmAtMs: undefined,
    });
    expect(rows.commits.map((commit) => commit.alarmAtMs)).toEqual([
      alarmOf(T0S + 120),
      alarmOf(T0S + 60),
      undefined,
      undefined,
    ]);
  });

  it("continues the counts of rows already stored and takes their alarm as the one set", () => {
    const stored = [
      { key: "x", count: 5, windowEnd: T0S + 60 },
      { key: "y", count: 2, windowEnd: T0S + 120 },
    ];
    const { rows, table } = tableOver(stored);
    expect(table.increment([op("x", 1, T0S + 60), op("y", 0, T0S + 120, 120)], T0).replies).toEqual([6, 2]);
    expect(table.read([op("y", 0, T0S + 120, 120)], T0)).toEqual([2]);
    table.writeUnwritten(T0 + 2_000);
    // x's alarm is the one the stored rows imply: no alarm in the commit.
    expect(rows.commits).toEqual([{ rows: [{ key: "x", count: 6, windowEnd: T0S + 60 }], alarmAtMs: undefined }]);
    table.increment([op("z", 7, T0S + 3600, 3600)], T0 + 3_000);
    table.writeUnwritten(T0 + 5_000);
    expect(rows.commits[1]).toEqual({ rows: [{ key: "z", count: 7, windowEnd: T0S + 3600 }], alarmAtMs: undefined });
    // A window ending before every stored one does move it.
    table.increment([op("w", 1, T0S + 30)], T0 + 6_000);
    table.writeUnwritten(T0 + 8_000);
    expect(rows.commits[2]).toEqual({
      rows: [{ key: "w", count: 1, windowEnd: T0S + 30 }],
      alarmAtMs: alarmOf(T0S + 30),
    });
    expect(rows.sorted()).toEqual([
      { key: "w", count: 1, windowEnd: T0S + 30 },
      { key: "x", count: 6, windowEnd: T0S + 60 },
      { key: "y", count: 2, windowEnd: T0S + 120 },
      { key: "z", count: 7, windowEnd: T0S + 3600 },
    ]);
    expect(rows.finds).toEqual(["x", "y", "z", "w"]);
  });

  it("does not write the rows of windows already closed at write time", () => {
    const { rows, table } = tableOver();
    table.increment([op("closing", 2, T0S + 15), op("open", 1, T0S + 60)], T0);
    table.writeUnwritten(T0 + 15_000);
    expect(rows.commits).toEqual([
      { rows: [{ key: "open", count: 1, windowEnd: T0S + 60 }], alarmAtMs: alarmOf(T0S + 60) },
    ]);

    const alone = tableOver();
    alone.table.increment([op("closing", 2, T0S + 15)], T0);
    alone.table.writeUnwritten(T0 + 16_000);
    expect(alone.rows.commits).toEqual([]);
    expect(alone.table.takeActivity()).toMatchObject({ rowsWritten: 0, commits: 0 });
  });
});

describe("CounterTable: the sweep", () => {
  it("deletes only closed rows, a batch at a time, then names the next alarm, then empties", () => {
    const { rows, table } = tableOver([
      { key: "c1", count: 1, windowEnd: T0S - 10 },
      { key: "c2", count: 2, windowEnd: T0S - 5 },
      { key: "c3", count: 3, windowEnd: T0S },
      { key: "o1", count: 4, windowEnd: T0S + 60 },
      { key: "o2", count: 5, windowEnd: T0S + 120 },
    ]);
    expect(table.sweep(T0 + 400)).toEqual({ kind: "again", alarmAtMs: T0 + 400 });
    expect(table.sweep(T0 + 500)).toEqual({ kind: "next", alarmAtMs: alarmOf(T0S + 60) });
    expect(rows.deletions).toEqual([
      { nowSeconds: T0S, limit: 2, deleted: ["c1", "c2"] },
      { nowSeconds: T0S, limit: 2, deleted: ["c3"] },
    ]);
    expect(rows.sorted()).toEqual([
      { key: "o1", count: 4, windowEnd: T0S + 60 },
      { key: "o2", count: 5, windowEnd: T0S + 120 },
    ]);
    expect(table.sweep((T0S + 60) * 1000)).toEqual({ kind: "next", alarmAtMs: alarmOf(T0S + 120) });
    expect(table.sweep((T0S + 121) * 1000)).toEqual({ kind: "empty" });
    expect(rows.rows.size).toBe(0);
    expect(rows.deletions.map((d) => d.deleted)).toEqual([["c1", "c2"], ["c3"], ["o1"], ["o2"]]);
    expect(rows.commits).toEqual([]);
    expect(table.takeActivity()).toEqual(rowActivity(0, 0, 0, 5, 4));
  });

  it("returns again with a full batch even when it was the last, and empty on the next", () => {
    const { rows, table } = tableOver([
      { key: "c1", count: 1, windowEnd: T0S - 10 },
      { key: "c2", count: 2, windowEnd: T0S - 5 },
    ]);
    expect(table.sweep(T0)).toEqual({ kind: "again", alarmAtMs: T0 });
    expect(table.sweep(T0)).toEqual({ kind: "empty" });
    expect(rows.deletions.map((d) => d.deleted)).toEqual([["c1", "c2"], []]);
    expect(table.takeActivity()).toMatchObject({ rowsDeleted: 2, commits: 1 });
  });

  it("writes what waits before sweeping, in the same alarm", () => {
    const { rows, table } = tableOver([{ key: "old", count: 9, windowEnd: T0S - 1 }]);
    table.increment([op("new", 2, T0S + 60)], T0);
    expect(table.sweep(T0 + 1_000)).toEqual({ kind: "next", alarmAtMs: alarmOf(T0S + 60) });
    // The write itself deleted old's closed row and moved the alarm from old's end to new's; the sweep found nothing.
    expect(rows.commits).toEqual([
      { rows: [{ key: "new", count: 2, windowEnd: T0S + 60 }], alarmAtMs: alarmOf(T0S + 60) },
    ]);
    expect(rows.deletions.map((d) => d.deleted)).toEqual([["old"], []]);
    expect(rows.sorted()).toEqual([{ key: "new", count: 2, windowEnd: T0S + 60 }]);
    expect(table.takeActivity()).toEqual(rowActivity(1, 1, 1, 1, 1));
  });

  it("deletes closed rows with each write and moves the alarm later, so a key in use never wakes by its alarm", () => {
    const { rows, table } = tableOver([
      { key: "w1", count: 4, windowEnd: T0S },
      { key: "h1", count: 7, windowEnd: T0S + 3600 },
    ]);
    // A new instance takes the alarm the stored rows imply (w1's end), deletes w1 and moves the alarm to h1's.
    table.increment([op("w2", 1, T0S + 60)], T0 + 5_000);
    table.writeUnwritten(T0 + 7_000);
    expect(rows.deletions).toEqual([{ nowSeconds: T0S + 7, limit: 2, deleted: ["w1"] }]);
    expect(rows.commits).toEqual([
      { rows: [{ key: "w2", count: 1, windowEnd: T0S + 60 }], alarmAtMs: alarmOf(T0S + 60) },
    ]);
    // The next window's write, before that alarm, deletes w2 and moves the alarm later again, to w3's end.
    table.increment([op("w3", 2, T0S + 120)], T0 + 65_000);
    table.writeUnwritten(T0 + 67_000);
    expect(rows.commits[1]).toEqual({
      rows: [{ key: "w3", count: 2, windowEnd: T0S + 120 }],
      alarmAtMs: alarmOf(T0S + 120),
    });
    expect(rows.sorted()).toEqual([
      { key: "h1", count: 7, windowEnd: T0S + 3600 },
      { key: "w3", count: 2, windowEnd: T0S + 120 },
    ]);
    // Once the key goes idle, its alarm comes and deletes what is closed.
    expect(table.sweep(alarmOf(T0S + 120))).toEqual({ kind: "next", alarmAtMs: alarmOf(T0S + 3600) });
    expect(table.takeActivity()).toMatchObject({ rowsWritten: 2, rowsDeleted: 3, commits: 3 });
  });

  it("keeps the alarm where it is while a write leaves closed rows behind, and never moves it later than a row", () => {
    const { rows, table } = tableOver([
      { key: "c1", count: 1, windowEnd: T0S - 20 },
      { key: "c2", count: 1, windowEnd: T0S - 10 },
      { key: "c3", count: 1, windowEnd: T0S - 5 },
    ]);
    table.increment([op("n", 1, T0S + 60)], T0);
    table.writeUnwritten(T0 + 2_000);
    // A full batch (2) deleted: c3 is still closed and stored, so the alarm due at c1's end stays.
    expect(rows.commits).toEqual([{ rows: [{ key: "n", count: 1, windowEnd: T0S + 60 }], alarmAtMs: undefined }]);
    expect(table.sweep(alarmOf(T0S - 20))).toEqual({ kind: "next", alarmAtMs: alarmOf(T0S + 60) });
    expect(rows.deletions.map((d) => d.deleted)).toEqual([["c1", "c2"], ["c3"]]);
    // An earlier row than any stored still moves the alarm earlier, with nothing to delete.
    table.increment([op("e", 1, T0S + 30)], T0 + 3_000);
    table.writeUnwritten(T0 + 5_000);
    expect(rows.commits[1]).toEqual({
      rows: [{ key: "e", count: 1, windowEnd: T0S + 30 }],
      alarmAtMs: alarmOf(T0S + 30),
    });
  });

  it("after an empty sweep, the next write sets the alarm again", () => {
    const { rows, table } = tableOver([{ key: "old", count: 1, windowEnd: T0S - 1 }]);
    expect(table.sweep(T0)).toEqual({ kind: "empty" });
    table.increment([op("new", 1, T0S + 3600, 3600)], T0 + 100);
    table.writeUnwritten(T0 + 2_100);
    expect(rows.commits).toEqual([
      { rows: [{ key: "new", count: 1, windowEnd: T0S + 3600 }], alarmAtMs: alarmOf(T0S + 3600) },
    ]);
  });
});

describe("CounterTable: memory", () => {
  it("forgets the entries of closed windows once the grace has passed", () => {
    const { rows, table } = tableOver();
    table.increment([op("a", 2, T0S + 15), op("b", 1, T0S + 60)], T0);
    table.writeUnwritten(T0 + 2_000);
    expect(table.size).toBe(2);
    const graceEnd = (T0S + 15) * 1000 + CLOSED_WINDOW_GRACE_MS;
    expect(table.read([], graceEnd - 1)).toEqual([]);
    expect(table.size).toBe(2);
    expect(table.read([], graceEnd)).toEqual([]);
    expect(table.size).toBe(1);
    // A late caller of the forgotten window starts again from its stored row.
    expect(table.increment([op("a", 1, T0S + 15)], graceEnd + 1).replies).toEqual([3]);
    expect(rows.finds).toEqual(["a", "b", "a"]);
    expect(table.size).toBe(2);
    table.read([], (T0S + 60) * 1000 + CLOSED_WINDOW_GRACE_MS);
    expect(table.size).toBe(0);
  });

  it("drops the unwritten counts of a forgotten window instead of writing them", () => {
    const { rows, table } = tableOver();
    table.increment([op("a", 2, T0S + 15)], T0);
    expect(table.increment([op("b", 1, T0S + 3600, 3600)], T0 + 30_000).replies).toEqual([1]);
    table.writeUnwritten(T0 + 30_000);
    expect(rows.commits).toEqual([
      { rows: [{ key: "b", count: 1, windowEnd: T0S + 3600 }], alarmAtMs: alarmOf(T0S + 3600) },
    ]);
    expect(table.size).toBe(1);
  });

  it("reports its activity since the last call, then starts again from zero", () => {
    const { table } = tableOver([{ key: "gone", count: 1, windowEnd: T0S - 1 }]);
    table.increment([op("a", 1, T0S + 60), op("a", 1, T0S + 60), op("s", 1, T0S + 1, 1)], T0);
    table.read([op("b", 0, T0S + 60)], T0);
    table.writeUnwritten(T0 + 2_000);
    expect(table.sweep(T0 + 2_000)).toEqual({ kind: "next", alarmAtMs: alarmOf(T0S + 60) });
    // The write deleted the closed row in its own commit; the sweep found nothing more.
    expect(table.takeActivity()).toEqual(rowActivity(4, 2, 1, 1, 1));
    expect(table.takeActivity()).toEqual(rowActivity(0, 0, 0, 0, 0));
  });
});

describe("CounterTable: properties", () => {
  // Counters of a few names over windows of 1 s, 10 s (= minIdleLifetime), 60 s and 3600 s, always hit in their
  // current window (as callers do), with the clock moving forward and writes and sweeps at random points.
  const WINDOWS = [1, 10, 60, 3600];
  const step = fc.oneof(
    fc.record({
      kind: fc.constant("increment" as const),
      ops: fc.array(
        fc.record({ name: fc.constantFrom("a", "b", "c"), window: fc.constantFrom(...WINDOWS), hits: fc.nat(3) }),
        { minLength: 1, maxLength: 4 },
      ),
      advanceMs: fc.nat(8_000),
    }),
    fc.record({ kind: fc.constant("write" as const), advanceMs: fc.nat(8_000) }),
    fc.record({ kind: fc.constant("sweep" as const), advanceMs: fc.nat(8_000) }),
  );

  it("counts exactly, and writes exactly the counts of open, persistable windows", () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 60 }), fc.integer({ min: 0, max: 3599 }), (steps, startOffset) => {
        const { rows, table } = tableOver([], { sweepBatch: 3 });
        let now = T0 + startOffset * 1000 + 123;
        const hitsSoFar = new Map<string, number>();
        const windowEndOf = new Map<string, number>();
        const lastHitPersistable = new Map<string, boolean>();
        // The alarm in force, as the commits and sweeps set it: never later than the earliest stored row's.
        let alarm: number | null = null;
        let commitsSeen = 0;
        const followAlarm = () => {
          for (const commit of rows.commits.slice(commitsSeen)) alarm = commit.alarmAtMs ?? alarm;
          commitsSeen = rows.commits.length;
          const earliest = rows.earliestWindowEnd();
          if (earliest !== undefined) expect(alarm).not.toBeNull();
          if (earliest !== undefined) expect(alarm!).toBeLessThanOrEqual(alarmOf(earliest));
        };
        for (const s of steps) {
          now += s.advanceMs;
          if (s.kind === "write") table.writeUnwritten(now);
          else if (s.kind === "sweep") {
            table.writeUnwritten(now);
            followAlarm();
            const outcome = table.sweep(now);
            alarm = outcome.kind === "empty" ? null : outcome.alarmAtMs;
          } else {
            const operations = s.ops.map(({ name, window, hits }) => {
              const start = Math.floor(now / 1000 / window) * window;
              return op(`${name}_${window}_${start}`, hits, start + window, window);
            });
            const expected = operations.map((o) => {
              const total = (hitsSoFar.get(o.key) ?? 0) + o.hits;
              hitsSoFar.set(o.key, total);
              windowEndOf.set(o.key, o.windowEnd);
              if (o.hits > 0) lastHitPersistable.set(o.key, o.windowEnd * 1000 - now > OPTIONS.minIdleLifetimeMs);
              return total;
            });
            expect(table.increment(operations, now).replies).toEqual(expected);
          }
          followAlarm();
        }
        table.writeUnwritten(now);
        for (const [key, total] of hitsSoFar) {
          const windowEnd = windowEndOf.get(key)!;
          const window = Number(key.split("_")[1]);
          const row = rows.rows.get(key);
          if (window * 1000 <= OPTIONS.minIdleLifetimeMs) {
            // Short windows never touch storage.
            expect(row).toBeUndefined();
            expect(rows.finds).not.toContain(key);
          } else if (windowEnd * 1000 > now && lastHitPersistable.get(key)) {
            expect(table.read([op(key, 0, windowEnd, window)], now)).toEqual([total]);
            expect(row).toEqual({ key, count: total, windowEnd });
          } else if (row) {
            // A stale row (later hits were memory-only) never counts more than was hit.
            expect(row.windowEnd).toBe(windowEnd);
            expect(row.count).toBeLessThanOrEqual(total);
          }
        }
        // A commit that moves the alarm moves it no later than its own earliest row's window end (plus the delay).
        for (const commit of rows.commits) {
          expect(commit.rows.length).toBeGreaterThan(0);
          if (commit.alarmAtMs !== undefined)
            expect(commit.alarmAtMs).toBeLessThanOrEqual(alarmOf(Math.min(...commit.rows.map((row) => row.windowEnd))));
        }
      }),
      { numRuns: 300 },
    );
  });
});

/** A sliding-window operation on window `start` of `window` seconds, as the limiter builds it. */
const slide = (
  name: string,
  start: number,
  window: number,
  hits: number,
  limit: number,
  previousWeight: number,
): CounterOperation => ({
  key: `${name}${start}`,
  hits,
  windowEnd: start + 2 * window,
  windowSeconds: 2 * window,
  algorithm: { kind: "sliding_window", previousKey: `${name}${start - window}`, limit, previousWeight },
});

/** A token-bucket operation at `nowMs`, as the limiter builds it. */
const bucket = (key: string, hits: number, nowMs: number, burst: number, intervalMicros: number): CounterOperation => {
  const nowMicros = nowMs * 1000;
  return {
    key,
    hits,
    windowEnd: Math.ceil((nowMicros + burst * intervalMicros) / 1e6),
    windowSeconds: Math.ceil((burst * intervalMicros) / 1e6),
    algorithm: { kind: "token_bucket", burst, emissionIntervalMicros: intervalMicros, nowMicros },
  };
};

const sliding = (admitted: boolean, previous: number, current: number) => ({
  kind: "sliding_window",
  admitted,
  previous,
  current,
});
const tokens = (admitted: boolean, tatMicros: number) => ({ kind: "token_bucket", admitted, tatMicros });

/** T0 in microseconds. */
const T0_MICROS = T0 * 1000;

describe("CounterTable: sliding window", () => {
  // T0S is a multiple of 60: the minute window starting there is the current one at T0.
  const S = T0S;

  it("weighs the previous window and adds the hits only while the estimate stays within the limit", () => {
    const { rows, table } = tableOver([{ key: `sw_${S - 60}`, count: 10, windowEnd: S + 60 }]);
    // 27 s into the window the previous one weighs 0.55: floor(10 × 0.55) = 5.
    expect(
      table.increment(
        [
          slide("sw_", S, 60, 10, 20, 0.55),
          slide("sw_", S, 60, 5, 20, 0.55),
          slide("sw_", S, 60, 1, 20, 0.55),
          slide("sw_", S, 60, 0, 20, 0.55),
        ],
        T0 + 27_000,
      ).replies,
    ).toEqual([sliding(true, 10, 10), sliding(true, 10, 15), sliding(false, 10, 15), sliding(true, 10, 15)]);
    // Later the previous window weighs less: floor(10 × 0.05) = 0 leaves room for 5 more.
    expect(table.read([slide("sw_", S, 60, 0, 20, 0.4)], T0 + 36_000)).toEqual([sliding(true, 10, 15)]);
    expect(
      table.increment([slide("sw_", S, 60, 6, 20, 0.05), slide("sw_", S, 60, 5, 20, 0.05)], T0 + 57_000).replies,
    ).toEqual([sliding(false, 10, 15), sliding(true, 10, 20)]);
    expect(rows.finds).toEqual([`sw_${S}`, `sw_${S - 60}`]);
    expect(table.takeActivity()).toMatchObject({ operations: 7, lookups: 2 });
  });

  it("writes the current window's admitted hits with its end, never the previous; a refused operation writes nothing", () => {
    const { rows, table } = tableOver();
    expect(table.increment([slide("sw_", S, 60, 3, 3, 1)], T0)).toEqual({
      replies: [sliding(true, 0, 3)],
      writeDueMs: T0 + 2_000,
    });
    table.writeUnwritten(T0 + 2_000);
    expect(rows.commits).toEqual([
      { rows: [{ key: `sw_${S}`, count: 3, windowEnd: S + 120 }], alarmAtMs: alarmOf(S + 120) },
    ]);
    expect(table.increment([slide("sw_", S, 60, 1, 3, 1)], T0 + 3_000)).toEqual({
      replies: [sliding(false, 0, 3)],
      writeDueMs: undefined,
    });
    table.writeUnwritten(T0 + 5_000);
    expect(rows.commits).toHaveLength(1);
    // The next window: the key of S weighs, but only the new current key is written.
    expect(table.increment([slide("sw_", S + 60, 60, 1, 3, 0.8)], (S + 72) * 1000).replies).toEqual([
      sliding(true, 3, 1),
    ]);
    table.writeUnwritten((S + 74) * 1000);
    expect(rows.commits[1]).toEqual({
      rows: [{ key: `sw_${S + 60}`, count: 1, windowEnd: S + 180 }],
      alarmAtMs: undefined,
    });
  });

  it("neither looks up nor writes a window whose two-window life is no longer than the idle lifetime", () => {
    const { rows, table } = tableOver();
    expect(table.increment([slide("short_", S, 5, 2, 3, 1), slide("short_", S, 5, 2, 3, 1)], T0).replies).toEqual([
      sliding(true, 0, 2),
      sliding(false, 0, 2),
    ]);
    expect(table.increment([slide("short_", S + 5, 5, 1, 3, 0.4)], T0 + 8_000)).toEqual({
      replies: [sliding(true, 2, 1)],
      writeDueMs: undefined,
    });
    expectRowsUntouched(rows, table, T0 + 9_000);
  });

  it("keeps the previous window in memory until the current window ends, then forgets it", () => {
    const { rows, table } = tableOver();
    table.increment([slide("sw_", S, 60, 4, 10, 1)], T0);
    // The next window: the key of S is now the previous one and still counts.
    expect(table.increment([slide("sw_", S + 60, 60, 1, 10, 0.9)], (S + 66) * 1000).replies).toEqual([
      sliding(true, 4, 1),
    ]);
    expect(table.size).toBe(3);
    // The key of S - 60 ended with the window S (plus the grace); the key of S lives until the window S + 60 ends.
    expect(table.read([], (S + 60) * 1000 + CLOSED_WINDOW_GRACE_MS)).toEqual([]);
    expect(table.size).toBe(2);
    const lastRead = (S + 120) * 1000 + CLOSED_WINDOW_GRACE_MS - 1;
    expect(table.read([slide("sw_", S + 60, 60, 0, 10, 0.01)], lastRead)).toEqual([sliding(true, 4, 1)]);
    expect(table.read([], lastRead + 1)).toEqual([]);
    expect(table.size).toBe(1);
    expect(rows.finds).toEqual([`sw_${S}`, `sw_${S - 60}`, `sw_${S + 60}`]);
  });

  it("continues from the rows in a new table", () => {
    const { rows, table } = tableOver();
    table.increment([slide("sw_", S, 60, 7, 20, 1)], T0);
    table.writeUnwritten(T0 + 2_000);
    const again = new CounterTable(rows, OPTIONS);
    // 15 s into the next window: floor(7 × 0.75) = 5.
    expect(
      again.increment([slide("sw_", S + 60, 60, 15, 20, 0.75), slide("sw_", S + 60, 60, 1, 20, 0.75)], (S + 75) * 1000)
        .replies,
    ).toEqual([sliding(true, 7, 15), sliding(false, 7, 15)]);
  });
});

describe("CounterTable: token bucket", () => {
  it("takes tokens while the bucket holds them and gives one back per emission interval", () => {
    const { table } = tableOver();
    const take = (hits: number, nowMs: number) => bucket("tb_a_tb", hits, nowMs, 3, 20_000_000);
    expect(table.increment([take(1, T0), take(1, T0), take(1, T0), take(1, T0)], T0).replies).toEqual([
      tokens(true, T0_MICROS + 20e6),
      tokens(true, T0_MICROS + 40e6),
      tokens(true, T0_MICROS + 60e6),
      tokens(false, T0_MICROS + 60e6),
    ]);
    expect(table.increment([take(1, T0 + 19_999)], T0 + 19_999).replies).toEqual([tokens(false, T0_MICROS + 60e6)]);
    expect(table.increment([take(1, T0 + 20_000)], T0 + 20_000).replies).toEqual([tokens(true, T0_MICROS + 80e6)]);
    expect(table.increment([take(2, T0 + 60_000)], T0 + 60_000).replies).toEqual([tokens(true, T0_MICROS + 120e6)]);
    expect(table.read([take(5, T0 + 60_000)], T0 + 60_000)).toEqual([tokens(true, T0_MICROS + 120e6)]);
    // A full bucket's TAT is now.
    expect(table.read([take(0, T0 + 200_000)], T0 + 200_000)).toEqual([tokens(true, T0_MICROS + 200e6)]);
  });

  it("writes a bucket once its TAT lies more than the idle lifetime ahead, with the latest window end", () => {
    const { rows, table } = tableOver();
    const take = (nowMs: number) => bucket("tb_b_tb", 1, nowMs, 5, 3_000_000);
    expect(table.increment([take(T0)], T0)).toEqual({
      replies: [tokens(true, T0_MICROS + 3e6)],
      writeDueMs: undefined,
    });
    expect(table.increment([take(T0), take(T0), take(T0)], T0).writeDueMs).toBe(T0 + 2_000);
    table.writeUnwritten(T0 + 2_000);
    expect(rows.commits).toEqual([
      { rows: [{ key: "tb_b_tb", count: T0_MICROS + 12e6, windowEnd: T0S + 15 }], alarmAtMs: alarmOf(T0S + 15) },
    ]);
    // 10 s ahead exactly: not written. 12.5 s ahead: written, with the later window end; the alarm stays.
    expect(table.increment([take(T0 + 5_000)], T0 + 5_000)).toEqual({
      replies: [tokens(true, T0_MICROS + 15e6)],
      writeDueMs: undefined,
    });
    expect(table.increment([take(T0 + 5_500)], T0 + 5_500).writeDueMs).toBe(T0 + 7_500);
    table.writeUnwritten(T0 + 7_500);
    expect(rows.commits[1]).toEqual({
      rows: [{ key: "tb_b_tb", count: T0_MICROS + 18e6, windowEnd: T0S + 21 }],
      alarmAtMs: undefined,
    });
    // A sweep while the row is still open (after the first window end) comes back at its new end.
    expect(table.sweep((T0S + 18) * 1000)).toEqual({ kind: "next", alarmAtMs: alarmOf(T0S + 21) });
    expect(rows.sorted()).toEqual([{ key: "tb_b_tb", count: T0_MICROS + 18e6, windowEnd: T0S + 21 }]);
    // Memory keeps the entry until the latest window end (plus the grace), not the first.
    expect(table.read([], (T0S + 15) * 1000 + CLOSED_WINDOW_GRACE_MS)).toEqual([]);
    expect(table.size).toBe(1);
    expect(table.read([], (T0S + 21) * 1000 + CLOSED_WINDOW_GRACE_MS)).toEqual([]);
    expect(table.size).toBe(0);
    expect(table.sweep((T0S + 21) * 1000)).toEqual({ kind: "empty" });
    expect(rows.finds).toEqual(["tb_b_tb"]);
  });

  it("neither looks up nor writes a bucket whose burst comes back within the idle lifetime", () => {
    const { rows, table } = tableOver();
    const take = (hits: number, nowMs: number) => bucket("tb_c_tb", hits, nowMs, 2, 5_000_000);
    expect(table.increment([take(2, T0), take(1, T0)], T0)).toEqual({
      replies: [tokens(true, T0_MICROS + 10e6), tokens(false, T0_MICROS + 10e6)],
      writeDueMs: undefined,
    });
    expect(table.increment([take(1, T0 + 5_000)], T0 + 5_000).replies).toEqual([tokens(true, T0_MICROS + 15e6)]);
    expectRowsUntouched(rows, table, T0 + 7_000);
  });

  it("writes nothing for a refused operation, and a new table continues from the row", () => {
    const { rows, table } = tableOver();
    const take = (nowMs: number) => bucket("tb_d_tb", 1, nowMs, 1, 60_000_000);
    expect(table.increment([take(T0), take(T0)], T0).replies).toEqual([
      tokens(true, T0_MICROS + 60e6),
      tokens(false, T0_MICROS + 60e6),
    ]);
    table.writeUnwritten(T0 + 2_000);
    expect(table.increment([take(T0 + 3_000)], T0 + 3_000)).toEqual({
      replies: [tokens(false, T0_MICROS + 60e6)],
      writeDueMs: undefined,
    });
    table.writeUnwritten(T0 + 5_000);
    expect(rows.commits).toEqual([
      { rows: [{ key: "tb_d_tb", count: T0_MICROS + 60e6, windowEnd: T0S + 60 }], alarmAtMs: alarmOf(T0S + 60) },
    ]);
    const again = new CounterTable(rows, OPTIONS);
    expect(again.increment([take(T0 + 30_000)], T0 + 30_000).replies).toEqual([tokens(false, T0_MICROS + 60e6)]);
    expect(again.increment([take(T0 + 60_000)], T0 + 60_000).replies).toEqual([tokens(true, T0_MICROS + 120e6)]);
  });
});

describe("CounterTable: algorithms against their steps", () => {
  // Fixed counters, sliding windows and token buckets of two names, the short ones (never stored) included, always
  // in their current window, with the clock moving forward, writes and sweeps at random points, and restarts: after at
  // least the idle lifetime without calls (the platform evicts no sooner), a new table over the same rows.
  const FIXED_WINDOWS = [1, 60, 3600];
  const SLIDING_WINDOWS = [3, 60, 600];
  const SLIDING_LIMIT = 6;
  const BUCKETS = [
    { burst: 3, intervalMicros: 2_000_000 },
    { burst: 2, intervalMicros: 5_000_000 },
    { burst: 4, intervalMicros: 30_000_000 },
  ];
  const operation = fc.record({
    name: fc.constantFrom("a", "b"),
    kind: fc.constantFrom("fixed" as const, "sliding" as const, "bucket" as const),
    variant: fc.nat(2),
    hits: fc.nat(3),
  });
  type Spec = typeof operation extends fc.Arbitrary<infer T> ? T : never;
  const step = fc.oneof(
    fc.record({
      kind: fc.constantFrom("increment" as const, "read" as const),
      ops: fc.array(operation, { minLength: 1, maxLength: 4 }),
      advanceMs: fc.nat(8_000),
    }),
    fc.record({ kind: fc.constantFrom("write" as const, "sweep" as const), advanceMs: fc.nat(8_000) }),
    fc.record({ kind: fc.constant("restart" as const), advanceMs: fc.integer({ min: 10_000, max: 70_000 }) }),
  );

  /** The operation the limiter would send at `nowMs`. */
  function build({ name, kind, variant, hits }: Spec, nowMs: number): CounterOperation {
    const nowSeconds = nowMs / 1000;
    if (kind === "fixed") {
      const window = FIXED_WINDOWS[variant];
      const start = Math.floor(nowSeconds / window) * window;
      return op(`${name}_f${window}_${start}`, hits, start + window, window);
    }
    if (kind === "sliding") {
      const window = SLIDING_WINDOWS[variant];
      const start = Math.floor(nowSeconds / window) * window;
      return slide(`${name}_s${window}_`, start, window, hits, SLIDING_LIMIT, 1 - (nowSeconds - start) / window);
    }
    const { burst, intervalMicros } = BUCKETS[variant];
    return bucket(`${name}_b${variant}_tb`, hits, nowMs, burst, intervalMicros);
  }

  /** algorithms.ts applied to a plain map of counts and TATs: the replies the table must give. */
  function modelReply(state: Map<string, number>, operation: CounterOperation, hits: number): CounterReply {
    const { key, algorithm } = operation;
    if (algorithm?.kind === "sliding_window") {
      const previous = state.get(algorithm.previousKey) ?? 0;
      const stepped = slidingWindowStep(previous, state.get(key) ?? 0, hits, algorithm);
      state.set(key, stepped.current);
      return { kind: "sliding_window", admitted: stepped.admitted, previous, current: stepped.current };
    }
    if (algorithm?.kind === "token_bucket") {
      const stepped = tokenBucketStep(state.get(key), hits, algorithm);
      if (stepped.admitted && hits > 0) state.set(key, stepped.tatMicros);
      return { kind: "token_bucket", admitted: stepped.admitted, tatMicros: stepped.tatMicros };
    }
    const count = (state.get(key) ?? 0) + hits;
    state.set(key, count);
    return count;
  }

  it("replies as the steps applied to a map, across writes, sweeps and new tables over the same rows", () => {
    fc.assert(
      fc.property(
        fc.array(step, { maxLength: 80, size: "max" }),
        fc.integer({ min: 0, max: 3599 }),
        (steps, startOffset) => {
          const rows = new FakeRows();
          const options = { ...OPTIONS, sweepBatch: 3 };
          let table = new CounterTable(rows, options);
          const state = new Map<string, number>();
          let now = T0 + startOffset * 1000 + 123;
          for (const s of steps) {
            if (s.kind === "restart") {
              table.writeUnwritten(now);
              now += s.advanceMs;
              table = new CounterTable(rows, options);
              continue;
            }
            now += s.advanceMs;
            if (s.kind === "write") table.writeUnwritten(now);
            else if (s.kind === "sweep") table.sweep(now);
            else if (s.kind === "increment" || s.kind === "read") {
              const operations = s.ops.map((spec) => build(spec, now));
              const counting = s.kind === "increment";
              const expected = operations.map((o) => modelReply(state, o, counting ? o.hits : 0));
              const replies = counting ? table.increment(operations, now).replies : table.read(operations, now);
              expect(replies).toEqual(expected);
            }
          }
          table.writeUnwritten(now);
          for (const row of rows.rows.values()) {
            // Short keys never reach storage; a stored TAT never passes its row's window end.
            expect(row.key).not.toMatch(/^._(f1|s3|b1)_/);
            if (row.key.endsWith("tb")) expect(row.count).toBeLessThanOrEqual(row.windowEnd * 1e6);
          }
          expect(rows.finds.filter((key) => /^._(f1|s3|b1)_/.test(key))).toEqual([]);
        },
      ),
      { numRuns: 1000 },
    );
  });
});

describe("counter shards", () => {
  it("hashes with 32-bit FNV-1a over UTF-8", () => {
    expect(fnv1a32("")).toBe(0x811c9dc5);
    expect(fnv1a32("a")).toBe(0xe40c292c);
    expect(fnv1a32("foobar")).toBe(0xbf9cf968);
    // UTF-8 bytes, not UTF-16 code units: "é" is two bytes.
    expect(fnv1a32("é")).toBe(Math.imul(Math.imul(0x811c9dc5 ^ 0xc3, 0x01000193) ^ 0xa9, 0x01000193) >>> 0);
  });

  it("names a stable shard in range that never ends with an underscore", () => {
    expect(shardName("rl_client_10.0.0.1_", 4)).toBe(`shard ${fnv1a32("rl_client_10.0.0.1_") % 4} of 4`);
    expect(shardName("a", 64)).toBe(`shard ${0xe40c292c % 64} of 64`);
    expect(shardName("a", 64)).toBe("shard 44 of 64");
    expect(shardName("foobar", 1)).toBe("shard 0 of 1");
    fc.assert(
      fc.property(fc.string(), fc.integer({ min: 1, max: 4096 }), (name, shards) => {
        const shard = shardName(name, shards);
        expect(shardName(name, shards)).toBe(shard);
        const match = /^shard (\d+) of (\d+)$/.exec(shard);
        expect(match).not.toBeNull();
        expect(Number(match![1])).toBeLessThan(shards);
        expect(Number(match![2])).toBe(shards);
        expect(shard.endsWith("_")).toBe(false);
      }),
    );
  });
});
