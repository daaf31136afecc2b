// Property tests of the CounterTable: random steps of hits, writes, sweeps and restarts against a plain model of the
// counts, of the stored rows and of the alarm in force.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { slidingWindowStep, tokenBucketStep } from "../../../src/ratelimit/core/algorithms";
import { CounterTable, type CounterOperation } from "../../../src/ratelimit/core/counter-table";
import type { CounterReply } from "../../../src/ratelimit/core/types";
import { alarmOf, bucket, FakeRows, op, OPTIONS, slide, T0, tableOver } from "./counter-table-fixtures";

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
