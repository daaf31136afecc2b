// The counters of one counter object as pure logic (src/ratelimit/core/counter-table.ts) over an in-memory fake of
// its row store: what is counted, looked up and written, when the alarm moves, and what memory forgets.
import { describe, expect, it } from "vitest";
import { CLOSED_WINDOW_GRACE_MS } from "../../../src/ratelimit/core/counter-table";
import { alarmOf, expectRowsUntouched, op, rowActivity, T0, T0S, tableOver } from "./counter-table-fixtures";

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
