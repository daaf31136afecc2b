// The CounterTable's sliding windows and token buckets: what each replies, what it writes and what memory keeps.
import { describe, expect, it } from "vitest";
import { CLOSED_WINDOW_GRACE_MS, CounterTable } from "../../../src/ratelimit/core/counter-table";
import {
  alarmOf,
  bucket,
  expectRowsUntouched,
  OPTIONS,
  slide,
  sliding,
  T0,
  T0_MICROS,
  T0S,
  tableOver,
  tokens,
} from "./counter-table-fixtures";

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
