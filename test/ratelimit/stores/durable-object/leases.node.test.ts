// The waiting side of leased counters (src/ratelimit/stores/durable-object/leases.ts) in plain Node, against the real
// counting rules of a counter object (core/counter-table.ts): requests waiting for another's lease call are answered
// from the new share or ride one per-request call made in another request's own flow, in arrival order.
import { describe, expect, it } from "vitest";
import {
  CounterTable,
  type CounterOperation,
  type CounterRow,
  type ObjectReply,
} from "../../../../src/ratelimit/core/counter-table";
import { LeaseCache } from "../../../../src/ratelimit/core/lease-cache";
import type { CounterIncrement } from "../../../../src/ratelimit/core/types";
import { LeasedCounters } from "../../../../src/ratelimit/stores/durable-object/leases";

const HOUR = 3600;

/** One counter object over rows in memory, answering each call a millisecond later; counts the calls and operations. */
function counterObject() {
  const rows = new Map<string, CounterRow>();
  const table = new CounterTable(
    {
      find: (key) => rows.get(key),
      commit: (written) => written.forEach((row) => rows.set(row.key, row)),
      earliestWindowEnd: () => undefined,
      deleteClosed: () => 0,
    },
    { minIdleLifetimeMs: 10_000, writeBehindMs: 0, alarmJitterSeconds: 0, sweepDelaySeconds: 0, sweepBatch: 100 },
  );
  const counted = { calls: 0, operations: [] as number[] };
  const call = async (_object: string, operations: CounterOperation[]): Promise<ObjectReply[]> => {
    counted.calls++;
    counted.operations.push(operations.length);
    await new Promise((resolve) => setTimeout(resolve, 1));
    return table.increment(operations, Date.now()).replies;
  };
  return { call, counted };
}

function leasedCounters(call: (object: string, operations: CounterOperation[]) => Promise<ObjectReply[]>) {
  const cache = new LeaseCache({
    holder: "isolate-1",
    maxUnits: 1000,
    minSpanMs: 50,
    idleMs: 300,
    retryMs: 250,
    maxCounters: 100,
  });
  const background: Promise<unknown>[] = [];
  const counters = new LeasedCounters(
    cache,
    call,
    (name) => name,
    (work) => background.push(work),
    {
      maxWaitMs: 5_000,
      idleMs: 300,
      maxOperationsPerCall: 1000,
    },
  );
  return { counters, background };
}

const hitOf = (counterName: string): CounterIncrement => {
  const start = Math.floor(Date.now() / 1000 / HOUR) * HOUR;
  return { key: `${counterName}${start}`, counterName, hits: 1, windowEnd: start + HOUR, windowSeconds: HOUR };
};

describe("LeasedCounters", () => {
  it("answers requests that waited for a lease call from the share the next call brings, in arrival order", async () => {
    const { call, counted } = counterObject();
    const { counters } = leasedCounters(call);
    const item = hitOf("burst_");
    // The first request's ask knows no traffic yet and brings no share; the first of the 49 waiting to look again asks
    // for all their hits, and the share it brings answers the others without calls of their own.
    const counts = await Promise.all(Array.from({ length: 50 }, () => counters.increment(item, 100)));
    expect(counts).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    expect(counted.operations).toEqual([1, 1]);
  });

  it("near the limit, has the waiting requests ride one per-request call, in arrival order", async () => {
    const { call, counted } = counterObject();
    const { counters } = leasedCounters(call);
    const item = hitOf("near_");
    await call("near_", [{ key: item.key, hits: 95, windowEnd: item.windowEnd, windowSeconds: HOUR }]);
    // 5 left. The first request's ask wants nothing beyond its hit; the next, for the 8 still waiting, gets nothing
    // lent, so the key is counted per request, and those 8 travel together in one call made by the first of them to
    // look again.
    const counts = await Promise.all(Array.from({ length: 10 }, () => counters.increment(item, 100)));
    expect(counts).toEqual(Array.from({ length: 10 }, (_, i) => 96 + i));
    expect(counted.operations).toEqual([1, 1, 1, 8]);
  });

  it("answers waiting requests from the share a lease call brought, without calls of their own", async () => {
    const { call, counted } = counterObject();
    const { counters } = leasedCounters(call);
    const item = hitOf("steady_");
    // Traffic measured first: 20 requests one after another, so that an ask wants more than its own hit.
    for (let i = 0; i < 20; i++) await counters.increment(item, 1_000_000);
    const callsBefore = counted.calls;
    const counts = await Promise.all(Array.from({ length: 30 }, () => counters.increment(item, 1_000_000)));
    expect(counts).toEqual(Array.from({ length: 30 }, (_, i) => 21 + i));
    // At most one call for the 30: a lease ask (or none, if the share already covered them).
    expect(counted.calls - callsBefore).toBeLessThanOrEqual(1);
  });

  it("gives every request riding a per-request call that call's failure", async () => {
    const object = counterObject();
    let calls = 0;
    const failingThird = async (name: string, operations: CounterOperation[]): Promise<ObjectReply[]> => {
      if (++calls === 4) throw new Error("object gone");
      return object.call(name, operations);
    };
    const { counters } = leasedCounters(failingThird);
    const item = hitOf("failing_");
    await failingThird("failing_", [{ key: item.key, hits: 95, windowEnd: item.windowEnd, windowSeconds: HOUR }]);
    const outcomes = await Promise.allSettled(Array.from({ length: 10 }, () => counters.increment(item, 100)));
    expect(outcomes.map((outcome) => outcome.status)).toEqual(["fulfilled", "fulfilled", ...Array(8).fill("rejected")]);
    expect(outcomes.slice(2).map((outcome) => (outcome as PromiseRejectedResult).reason.message)).toEqual(
      Array(8).fill("object gone"),
    );
    expect(calls).toBe(4);
  });
});
