// The per-object call coalescing of src/ratelimit/core/call-coalescer.ts: replies equal to one-by-one serving in
// arrival order (a property over random arrivals, call timings and algorithms, against the real CounterTable), the
// in-flight bound, the linger, the per-call cap, failures, that only a request in its own flow makes calls, and that an
// idle object leaves nothing behind.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CallCoalescer, type CoalescerTimer } from "../../../src/ratelimit/core/call-coalescer";
import {
  CounterTable,
  type CounterOperation,
  type CounterRow,
  type ObjectReply,
} from "../../../src/ratelimit/core/counter-table";

const tableOptions = {
  minIdleLifetimeMs: 10_000,
  writeBehindMs: 0,
  alarmJitterSeconds: 0,
  sweepDelaySeconds: 0,
  sweepBatch: 100,
};
const NOW_MS = 1_700_000_000_000;
const WINDOW_END = NOW_MS / 1000 + 60;

/** A CounterTable over rows held in memory: the counting rules of one real counter object. */
function counterObject(): CounterTable {
  const rows = new Map<string, CounterRow>();
  return new CounterTable(
    {
      find: (key) => rows.get(key),
      commit: (written) => written.forEach((row) => rows.set(row.key, row)),
      earliestWindowEnd: () => undefined,
      deleteClosed: () => 0,
    },
    tableOptions,
  );
}

/** One request's operation on one of three keys, with one of the three algorithms. */
const operation = fc
  .record({ key: fc.constantFrom("a", "b", "c"), hits: fc.integer({ min: 0, max: 3 }), kind: fc.nat(2) })
  .map(({ key, hits, kind }): CounterOperation => {
    const base = { key: `${key}_${kind}`, hits, windowEnd: WINDOW_END, windowSeconds: 120 };
    if (kind === 1)
      return {
        ...base,
        algorithm: { kind: "sliding_window", previousKey: `${key}_prev`, limit: 5, previousWeight: 0.5 },
      };
    if (kind === 2)
      return {
        ...base,
        algorithm: { kind: "token_bucket", burst: 4, emissionIntervalMicros: 1_000_000, nowMicros: NOW_MS * 1000 },
      };
    return base;
  });

const request = fc.record({
  object: fc.constantFrom("object-1", "object-2"),
  operations: fc.array(operation, { minLength: 1, maxLength: 3 }),
});

/** Lets every pending promise continuation run (the leaders make their calls a few microtasks after submitting). */
const settled = () => new Promise((resolve) => setTimeout(resolve, 0));

describe("CallCoalescer", () => {
  it("gives every request the replies of one-by-one serving in arrival order", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        fc.array(request, { minLength: 1, maxLength: 30 }),
        fc.integer({ min: 1, max: 400 }),
        async (scheduler, requests, maxOperationsPerCall) => {
          const objects = new Map([
            ["object-1", counterObject()],
            ["object-2", counterObject()],
          ]);
          const calls: number[] = [];
          const coalescer = new CallCoalescer<CounterOperation, ObjectReply>(
            // Each call is applied by the object when the scheduler delivers it, as an RPC would be.
            (object, operations) => {
              calls.push(operations.length);
              return scheduler
                .schedule(Promise.resolve(), `call to ${object}`)
                .then(() => objects.get(object)!.increment(operations, NOW_MS).replies);
            },
            { maxInFlight: 1, lingerMs: 0, maxOperationsPerCall, maxWaitMs: 60_000, handoffMs: 60_000 },
          );
          const arrivals: number[] = [];
          const answers = new Map<number, ObjectReply[]>();
          const pending = requests.map((req, index) =>
            scheduler.schedule(Promise.resolve(), `request ${index}`).then(async () => {
              arrivals.push(index);
              answers.set(index, await coalescer.submit(req.object, req.operations));
            }),
          );
          await scheduler.waitFor(Promise.all(pending));

          const oneByOne = new Map([
            ["object-1", counterObject()],
            ["object-2", counterObject()],
          ]);
          for (const index of arrivals) {
            const { object, operations } = requests[index];
            expect(answers.get(index)).toEqual(oneByOne.get(object)!.increment(operations, NOW_MS).replies);
          }
          expect(calls.length).toBeLessThanOrEqual(requests.length);
          expect(coalescer.busyObjects).toBe(0);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("keeps at most maxInFlight calls per object and sends what waited in one call", async () => {
    const releases: (() => void)[] = [];
    const sent: { object: string; operations: number[] }[] = [];
    const coalescer = new CallCoalescer<number, number>(
      (object, operations) => {
        sent.push({ object, operations });
        return new Promise((resolve) => releases.push(() => resolve(operations.map((n) => n * 10))));
      },
      { maxInFlight: 1, lingerMs: 0, maxOperationsPerCall: 100, maxWaitMs: 60_000, handoffMs: 60_000 },
    );
    const first = coalescer.submit("x", [1]);
    const other = coalescer.submit("y", [5]);
    await settled();
    expect(sent).toEqual([
      { object: "x", operations: [1] },
      { object: "y", operations: [5] },
    ]);
    // Arrivals while x's call is in flight wait, then travel together in arrival order.
    const second = coalescer.submit("x", [2, 3]);
    const third = coalescer.submit("x", [4]);
    await settled();
    expect(sent).toHaveLength(2);
    releases.shift()!();
    expect(await first).toEqual([10]);
    await settled();
    expect(sent[2]).toEqual({ object: "x", operations: [2, 3, 4] });
    releases.shift()!();
    expect(await other).toEqual([50]);
    releases.shift()!();
    expect([await second, await third]).toEqual([[20, 30], [40]]);
    expect(coalescer.takeActivity()).toEqual({ calls: 3, groups: 4 });
    expect(coalescer.busyObjects).toBe(0);
  });

  it("splits what waits into calls of at most maxOperationsPerCall operations, keeping each request whole", async () => {
    const sent: number[][] = [];
    const releases: (() => void)[] = [];
    const coalescer = new CallCoalescer<number, number>(
      (_object, operations) => {
        sent.push(operations);
        return new Promise((resolve) => releases.push(() => resolve(operations)));
      },
      { maxInFlight: 2, lingerMs: 0, maxOperationsPerCall: 3, maxWaitMs: 60_000, handoffMs: 60_000 },
    );
    const replies = [1, 2, 3, 4, 5].map((n) => coalescer.submit("x", [n]));
    replies.push(coalescer.submit("x", [6, 7, 8, 9]), coalescer.submit("x", [10]));
    await settled();
    // Two runs, each taking what waits from the head up to three operations.
    expect(sent).toEqual([
      [1, 2, 3],
      [4, 5],
    ]);
    releases.shift()!();
    await replies[0];
    await settled();
    // A request larger than the cap still travels whole, alone.
    expect(sent.at(-1)).toEqual([6, 7, 8, 9]);
    releases.shift()!();
    await replies[1];
    await settled();
    expect(sent.at(-1)).toEqual([10]);
    releases.shift()!();
    releases.shift()!();
    expect(await Promise.all(replies)).toEqual([[1], [2], [3], [4], [5], [6, 7, 8, 9], [10]]);
    expect(coalescer.busyObjects).toBe(0);
  });

  it("holds a call back for lingerMs to gather more operations, unless a full call waits", async () => {
    const timers = new Set<{ ms: number; run: () => void }>();
    const timer: CoalescerTimer = {
      now: () => 0,
      schedule: (ms, run) => {
        const entry = { ms, run };
        timers.add(entry);
        return () => timers.delete(entry);
      },
    };
    const lingers = () => [...timers].filter((entry) => entry.ms === 5);
    const sent: number[][] = [];
    const coalescer = new CallCoalescer<number, number>(
      async (_object, operations) => {
        sent.push(operations);
        return operations;
      },
      { maxInFlight: 1, lingerMs: 5, maxOperationsPerCall: 3, maxWaitMs: 60_000, handoffMs: 60_000 },
      timer,
    );
    const early = [coalescer.submit("x", [1]), coalescer.submit("x", [2])];
    await settled();
    expect(sent).toEqual([]);
    expect(lingers()).toHaveLength(1);
    const [linger] = lingers();
    timers.delete(linger);
    linger.run();
    expect(await Promise.all(early)).toEqual([[1], [2]]);
    expect(sent).toEqual([[1, 2]]);
    // A full call goes at once: the leader's linger is cut short.
    const full = [coalescer.submit("x", [3]), coalescer.submit("x", [4, 5])];
    await settled();
    expect(sent).toEqual([
      [1, 2],
      [3, 4, 5],
    ]);
    expect(await Promise.all(full)).toEqual([[3], [4, 5]]);
    // Nothing left pending: every linger and wait timer was cancelled.
    expect([...timers]).toEqual([]);
  });

  it("fails a request that waits longer than maxWaitMs, and serves the others", async () => {
    const timers: { ms: number; run: () => void }[] = [];
    const timer: CoalescerTimer = { now: () => 0, schedule: (ms, run) => (timers.push({ ms, run }), () => {}) };
    let release!: () => void;
    const coalescer = new CallCoalescer<number, number>(
      (_object, operations) =>
        operations[0] === 1
          ? new Promise((resolve) => (release = () => resolve(operations)))
          : Promise.resolve(operations),
      { maxInFlight: 1, lingerMs: 0, maxOperationsPerCall: 10, maxWaitMs: 7, handoffMs: 60_000 },
      timer,
    );
    const stuck = coalescer.submit("x", [1]);
    await settled();
    const waiting = coalescer.submit("x", [2]);
    // The second request's wait bound fires while the first call hangs.
    timers.filter((entry) => entry.ms === 7)[1].run();
    await expect(waiting).rejects.toThrow("waited 7 ms for counter object x");
    release();
    expect(await stuck).toEqual([1]);
    expect(await coalescer.submit("x", [3])).toEqual([3]);
    expect(coalescer.busyObjects).toBe(0);
  });

  it("keeps one timer per waiting request: its handoff checks, the last of which is its wait bound", async () => {
    let now = 0;
    const timers: { ms: number; run: () => void }[] = [];
    const timer: CoalescerTimer = { now: () => now, schedule: (ms, run) => (timers.push({ ms, run }), () => {}) };
    const coalescer = new CallCoalescer<number, number>(
      () => new Promise<number[]>(() => {}),
      { maxInFlight: 1, lingerMs: 0, maxOperationsPerCall: 10, maxWaitMs: 700, handoffMs: 300 },
      timer,
    );
    const stuck = coalescer.submit("x", [1]);
    await settled();
    expect(timers.map((entry) => entry.ms)).toEqual([300]);
    // Its operation left the queue in the call: the next timer is the rest of the bound, not another check.
    now = 300;
    timers.shift()!.run();
    expect(timers.map((entry) => entry.ms)).toEqual([400]);
    now = 700;
    timers.shift()!.run();
    await expect(stuck).rejects.toThrow("waited 700 ms for counter object x");
    expect(timers).toEqual([]);
  });

  it("stops waiting for a leader that never finishes once maxWaitMs has passed", async () => {
    let now = 0;
    const timers: { ms: number; run: () => void }[] = [];
    const timer: CoalescerTimer = { now: () => now, schedule: (ms, run) => (timers.push({ ms, run }), () => {}) };
    const sent: number[][] = [];
    const coalescer = new CallCoalescer<number, number>(
      // The first call never returns, as when its leader's request is cancelled with the call in flight.
      (_object, operations) => (
        sent.push(operations),
        sent.length === 1 ? new Promise(() => {}) : Promise.resolve(operations)
      ),
      { maxInFlight: 1, lingerMs: 0, maxOperationsPerCall: 10, maxWaitMs: 7, handoffMs: 60_000 },
      timer,
    );
    void coalescer.submit("x", [1]);
    await settled();
    const stuck = coalescer.submit("x", [2]);
    await settled();
    expect(sent).toEqual([[1]]);
    now = 8;
    timers.filter((entry) => entry.ms === 7)[1].run();
    await expect(stuck).rejects.toThrow("waited 7 ms for counter object x");
    // The blocked call no longer counts: the next request leads at once.
    expect(await coalescer.submit("x", [3])).toEqual([3]);
    expect(sent).toEqual([[1], [3]]);
  });

  /**
   * Requests as workerd runs them: `current` is the request whose own flow runs (a submit's synchronous part, or a timer
   * it scheduled). keepAlive is the current request's waitUntil, so what it records is which request makes calls.
   */
  function requestsHarness(handoffMs = 300) {
    let current: string | undefined;
    let now = 0;
    const timers: { ms: number; run: () => void; owner: string | undefined; cancelled: boolean }[] = [];
    const timer: CoalescerTimer = {
      now: () => now,
      schedule: (ms, run) => {
        const entry = { ms, run, owner: current, cancelled: false };
        timers.push(entry);
        return () => (entry.cancelled = true);
      },
    };
    const sent: number[][] = [];
    const releases: (() => void)[] = [];
    const callers: (string | undefined)[] = [];
    const coalescer = new CallCoalescer<number, number>(
      (_object, operations) => (
        sent.push(operations),
        new Promise((resolve) => releases.push(() => resolve(operations.map((n) => n * 10))))
      ),
      { maxInFlight: 1, lingerMs: 0, maxOperationsPerCall: 10, maxWaitMs: 1000, handoffMs },
      timer,
      () => callers.push(current),
    );
    const submitAs = (name: string, operations: number[]) => {
      current = name;
      const reply = coalescer.submit("x", operations);
      current = undefined;
      return reply;
    };
    const fire = (owner: string, ms: number) => {
      const entry = timers.find((t) => t.owner === owner && t.ms === ms && !t.cancelled)!;
      entry.cancelled = true;
      current = owner;
      entry.run();
      current = undefined;
    };
    return { coalescer, sent, releases, callers, submitAs, fire, setNow: (ms: number) => (now = ms) };
  }

  it("has the request that found no call in flight make the calls for those that arrive meanwhile", async () => {
    const { coalescer, sent, releases, callers, submitAs } = requestsHarness();
    const first = submitAs("r1", [1]);
    await settled();
    const later = [submitAs("r2", [2]), submitAs("r3", [3])];
    releases.shift()!();
    expect(await first).toEqual([10]);
    await settled();
    // r2 and r3 are only woken with their replies: r1 (kept alive by its waitUntil) made both calls.
    releases.shift()!();
    expect(await Promise.all(later)).toEqual([[20], [30]]);
    expect(sent).toEqual([[1], [2, 3]]);
    expect(callers).toEqual(["r1"]);
    expect(coalescer.busyObjects).toBe(0);
  });

  it("has a waiting request make the call itself, from its own timer, once no call is in flight for it", async () => {
    const { coalescer, sent, releases, callers, submitAs, fire, setNow } = requestsHarness();
    const first = submitAs("r1", [1]);
    await settled();
    setNow(500);
    const second = submitAs("r2", [2]);
    // r1's run stops calling past maxWaitMs: its call is still in flight, and then no longer counts.
    setNow(1001);
    fire("r2", 300);
    await settled();
    expect(sent).toEqual([[1], [2]]);
    expect(callers).toEqual(["r1", "r2"]);
    releases[1]();
    expect(await second).toEqual([20]);
    releases[0]();
    expect(await first).toEqual([10]);
    await settled();
    expect(coalescer.busyObjects).toBe(0);
  });

  it("leaves the check alone while a call is in flight for the waiting request", async () => {
    const { sent, releases, callers, submitAs, fire } = requestsHarness();
    const first = submitAs("r1", [1]);
    await settled();
    const second = submitAs("r2", [2]);
    fire("r2", 300);
    await settled();
    expect(sent).toEqual([[1]]);
    releases.shift()!();
    await first;
    await settled();
    releases.shift()!();
    expect(await second).toEqual([20]);
    expect(callers).toEqual(["r1"]);
  });

  it("fails every request of a failed call and goes on with the next", async () => {
    let calls = 0;
    const coalescer = new CallCoalescer<number, number>(
      async (_object, operations) => {
        calls++;
        if (calls === 1) throw new Error("object overloaded");
        return operations;
      },
      { maxInFlight: 1, lingerMs: 0, maxOperationsPerCall: 10, maxWaitMs: 60_000, handoffMs: 60_000 },
    );
    const carried = [coalescer.submit("x", [1]), coalescer.submit("x", [2])];
    const outcomes = await Promise.allSettled(carried);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(["rejected", "rejected"]);
    expect(await coalescer.submit("x", [3])).toEqual([3]);
    expect(calls).toBe(2);
    expect(coalescer.busyObjects).toBe(0);
  });

  it("refuses a call whose reply count does not match its operations", async () => {
    const coalescer = new CallCoalescer<number, number>(async () => [1], {
      maxInFlight: 1,
      lingerMs: 0,
      maxOperationsPerCall: 10,
      maxWaitMs: 60_000,
      handoffMs: 60_000,
    });
    await expect(coalescer.submit("x", [1, 2])).rejects.toThrow("counter object x answered 1 replies to 2");
    expect(coalescer.busyObjects).toBe(0);
  });
});
