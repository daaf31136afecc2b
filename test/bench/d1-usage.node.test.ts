// The benchmarks' reading of D1 work (bench/d1-usage.mjs): the Server-Timing entry the Worker and the floors answer
// (src/shared/d1-meter.ts writes it), its sums and its figures per 1,000 operations.
import { describe, expect, it } from "vitest";
import { D1Tally, d1Line, d1UsageOf } from "../../bench/d1-usage.mjs";
import { d1ServerTiming } from "../../src/shared/d1-meter";

const answer = (serverTiming: string | null) => ({ headers: { get: () => serverTiming } });

describe("d1UsageOf", () => {
  it("reads the entry the Worker writes, among others", () => {
    const entry = d1ServerTiming({ calls: 2, statements: 5, rowsWritten: 7, rowsRead: 11, unmetered: 1 });
    expect(d1UsageOf(answer(`cache;desc="hit", ${entry}`))).toEqual({
      calls: 2,
      statements: 5,
      rows_written: 7,
      rows_read: 11,
      unmetered: 1,
    });
  });

  it("answers undefined without a d1 entry", () => {
    expect(d1UsageOf(answer(null))).toBeUndefined();
    expect(d1UsageOf(answer('cache;desc="calls=1"'))).toBeUndefined();
  });
});

describe("D1Tally", () => {
  const usage = { calls: 3, statements: 4, rows_written: 10, rows_read: 0, unmetered: 0 };

  it("sums answers and gives each figure per 1,000 operations", () => {
    const tally = new D1Tally();
    tally.add(usage);
    tally.add({ ...usage, calls: 1 });
    expect(tally.perThousand()).toEqual({
      calls: 2000,
      statements: 4000,
      rows_written: 10000,
      rows_read: 0,
      unmetered: 0,
    });
    expect(tally.perThousand(1000)).toEqual({ calls: 2, statements: 4, rows_written: 10, rows_read: 0, unmetered: 0 });
  });

  it("gives no figures when an answer carried none, and says how many", () => {
    const tally = new D1Tally();
    tally.add(usage);
    tally.add(answer(null));
    expect(tally.perThousand()).toBeUndefined();
    expect(d1Line("x", tally, 4)).toBe("x    n/a (1 of 2 answers without Server-Timing d1)");
  });

  it("marks the rows figures as lower bounds when statements were unmetered", () => {
    const tally = new D1Tally();
    tally.add({ ...usage, unmetered: 1 });
    expect(d1Line("x", tally, 1).split(/\s+/)).toEqual(["x", "3000", "4000", "10000+", "0.00+", "1000"]);
  });
});
