// The CounterTable's sweep: which closed rows each alarm and each write deletes, and where the alarm goes next.
import { describe, expect, it } from "vitest";
import { alarmOf, op, rowActivity, T0, T0S, tableOver } from "./counter-table-fixtures";

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
