// Fixtures of the CounterTable tests: an in-memory fake of its row store that records every lookup, commit and sweep,
// the options and clock they share, and the operations the limiter would send for each algorithm.
import { expect } from "vitest";
import {
  emptyActivity,
  CounterTable,
  type CounterOperation,
  type CounterRow,
  type CounterRows,
  type CounterTableOptions,
} from "../../../src/ratelimit/core/counter-table";

/** The table's activity with these counts of operations and rows, and no leases (these tests lend none). */
export const rowActivity = (
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
export class FakeRows implements CounterRows {
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

export const OPTIONS: CounterTableOptions = {
  minIdleLifetimeMs: 10_000,
  writeBehindMs: 2_000,
  alarmJitterSeconds: 3,
  sweepDelaySeconds: 20,
  sweepBatch: 2,
};

/** 2027-01-15T08:00:00Z: a whole second, so window ends are exact. */
export const T0S = 1_800_000_000;
export const T0 = T0S * 1000;
export const alarmOf = (windowEnd: number) =>
  (windowEnd + OPTIONS.sweepDelaySeconds + OPTIONS.alarmJitterSeconds) * 1000;

export const op = (key: string, hits: number, windowEnd: number, windowSeconds = 60): CounterOperation => ({
  key,
  hits,
  windowEnd,
  windowSeconds,
});

export function tableOver(stored: CounterRow[] = [], options: Partial<CounterTableOptions> = {}) {
  const rows = new FakeRows(stored);
  return { rows, table: new CounterTable(rows, { ...OPTIONS, ...options }) };
}

/** Writes what waits and sweeps at `nowMs`: the rows were never looked up nor written, and memory is empty. */
export function expectRowsUntouched(rows: FakeRows, table: CounterTable, nowMs: number) {
  table.writeUnwritten(nowMs);
  expect(table.sweep(nowMs)).toEqual({ kind: "empty" });
  expect(rows.finds).toEqual([]);
  expect(rows.commits).toEqual([]);
}

/** A sliding-window operation on window `start` of `window` seconds, as the limiter builds it. */
export const slide = (
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
export const bucket = (
  key: string,
  hits: number,
  nowMs: number,
  burst: number,
  intervalMicros: number,
): CounterOperation => {
  const nowMicros = nowMs * 1000;
  return {
    key,
    hits,
    windowEnd: Math.ceil((nowMicros + burst * intervalMicros) / 1e6),
    windowSeconds: Math.ceil((burst * intervalMicros) / 1e6),
    algorithm: { kind: "token_bucket", burst, emissionIntervalMicros: intervalMicros, nowMicros },
  };
};

export const sliding = (admitted: boolean, previous: number, current: number) => ({
  kind: "sliding_window",
  admitted,
  previous,
  current,
});
export const tokens = (admitted: boolean, tatMicros: number) => ({ kind: "token_bucket", admitted, tatMicros });

/** T0 in microseconds. */
export const T0_MICROS = T0 * 1000;
