// Counter leases end to end in plain Node: the lending of one counter object (core/counter-leases.ts inside
// core/counter-table.ts) and the borrowing isolates (core/lease-cache.ts), with calls delivered in any order per
// isolate in one call each as the coalescer would. Checked: never more admitted than the limit; at every refusal the admissions plus
// the units lent and unused are exactly the limit (the documented under-admission); give-backs restore the quota;
// shares shrink with the remainder; a window's end voids its shares and counts them expired.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { shareFor } from "../../../src/ratelimit/core/counter-leases";
import {
  CounterTable,
  type CounterOperation,
  type CounterRow,
  type ObjectReply,
} from "../../../src/ratelimit/core/counter-table";
import { LeaseCache, type Ask, type LeasedItem } from "../../../src/ratelimit/core/lease-cache";

/** 2027-01-15T08:00:00Z; the hour's window ends at T0S + 3600. */
const T0S = 1_800_000_000;
const T0 = T0S * 1000;
const IDLE_MS = 300;

const rowsInMemory = () => {
  const rows = new Map<string, CounterRow>();
  return {
    find: (key: string) => rows.get(key),
    commit: (written: CounterRow[]) => written.forEach((row) => rows.set(row.key, { ...row })),
    earliestWindowEnd: () => undefined,
    deleteClosed: () => 0,
  };
};

const newTable = () =>
  new CounterTable(rowsInMemory(), {
    minIdleLifetimeMs: 10_000,
    writeBehindMs: 0,
    alarmJitterSeconds: 0,
    sweepDelaySeconds: 0,
    sweepBatch: 10,
  });

const itemOf = (limit: number, hits: number, windowStart = T0S, windowSeconds = 3600): LeasedItem => ({
  key: `k_${windowStart}`,
  counterName: "k_",
  hits,
  windowEnd: windowStart + windowSeconds,
  windowSeconds,
  limit,
});

const leasedOp = (item: LeasedItem, ask: Ask, hits = item.hits): CounterOperation => ({
  key: item.key,
  hits,
  windowEnd: item.windowEnd,
  windowSeconds: item.windowSeconds,
  lease: ask,
});

const ask = (holder: string, limit: number, want: number, extra: Partial<Ask> = {}): Ask => ({
  holder,
  limit,
  want,
  giveBack: 0,
  used: 0,
  ...extra,
});

describe("the object lends", () => {
  it("counts the hits, then lends at most half the remainder split among holders, shrinking to nothing", () => {
    const table = newTable();
    const item = itemOf(100, 1);
    const one = (holder: string, want: number) =>
      table.increment([leasedOp(item, ask(holder, 100, want))], T0).replies[0];
    // 1 counted, then half of the 99 left: 49.
    expect(one("a", 500)).toEqual({ kind: "lease", count: 1, granted: 49 });
    // Another holder: 51 → 50 left, split between two holders, halved: 12.
    expect(one("b", 500)).toEqual({ kind: "lease", count: 51, granted: 12 });
    // Never more than asked.
    expect(one("c", 3)).toEqual({ kind: "lease", count: 64, granted: 3 });
    expect(shareFor(36, 2)).toBe(6);
    expect(shareFor(7, 1)).toBe(0);
    expect(shareFor(3, 0)).toBe(0);
    expect(shareFor(4, 0)).toBe(2);
    expect(table.takeActivity()).toMatchObject({ leasesGranted: 3, leaseUnitsLent: 64, leasesReturned: 0 });
  });

  it("takes back only what the holder still holds, same window only, and brings a count over the limit down first", () => {
    const table = newTable();
    const item = itemOf(10, 1);
    const call = (operation: CounterOperation, nowMs = T0) => table.increment([operation], nowMs).replies[0];
    expect(call(leasedOp(item, ask("a", 10, 100), 0))).toEqual({ kind: "lease", count: 0, granted: 5 });
    // 5 plain hits fill the limit, one more is refused and still counted (count 11), as in the reference.
    for (let i = 0; i < 6; i++) call({ key: item.key, hits: 1, windowEnd: item.windowEnd, windowSeconds: 3600 });
    // "a" used 2 and gives back 3 (more is ignored): 11 → 10 (the limit) − 3 = 7 = 5 plain + 2 used.
    expect(call(leasedOp(item, ask("a", 10, 0, { used: 2, giveBack: 9 }), 0))).toEqual({
      kind: "lease",
      count: 7,
      granted: 0,
    });
    // A holder the object does not know gives back nothing.
    expect(call(leasedOp(item, ask("z", 10, 0, { giveBack: 4 }), 0))).toEqual({ kind: "lease", count: 7, granted: 0 });
    // After the window's end nothing is taken back nor lent.
    const late = T0 + 3600_000;
    expect(call(leasedOp(item, ask("a", 10, 5, { giveBack: 1 }), 0), late)).toEqual({
      kind: "lease",
      count: 7,
      granted: 0,
    });
    expect(table.takeActivity()).toMatchObject({ leasesGranted: 1, leasesReturned: 1 });
  });

  it("counts a share still held when its window leaves memory as expired, once", () => {
    const table = newTable();
    const item = itemOf(100, 0, T0S, 1);
    table.increment([leasedOp(item, ask("a", 100, 10)), leasedOp(item, ask("b", 100, 10))], T0);
    table.increment([leasedOp(item, ask("b", 100, 0, { used: 1, giveBack: 4 }), 0)], T0 + 100);
    expect(table.takeActivity()).toMatchObject({ leasesGranted: 2, leasesReturned: 1, leasesExpired: 0 });
    // The 1 s window ends at T0 + 1 s and leaves memory 10 s later: "a" (10 held) and "b" (5 held) expired.
    table.read([{ key: "other", hits: 0, windowEnd: T0S + 100, windowSeconds: 100 }], T0 + 11_001);
    expect(table.takeActivity()).toMatchObject({ leasesExpired: 2 });
    expect(table.size).toBe(1);
  });
});

/** Isolates borrowing from one object, each call delivered when a command says so (per isolate, in order). */
class Simulation {
  readonly table = newTable();
  readonly caches: LeaseCache[];
  readonly pending: { onReply: (reply: ObjectReply) => void; operation: CounterOperation }[][];
  readonly waiting: number[][];
  admitted = 0;
  refused = 0;
  givingBack = 0;
  now = T0;
  readonly problems: string[] = [];

  constructor(
    isolates: number,
    readonly limit: number,
    maxUnits: number,
  ) {
    this.caches = Array.from(
      { length: isolates },
      (_, i) =>
        new LeaseCache({
          holder: `isolate ${i}`,
          maxUnits,
          minSpanMs: 50,
          idleMs: IDLE_MS,
          retryMs: 250,
          maxCounters: 10,
        }),
    );
    this.pending = this.caches.map(() => []);
    this.waiting = this.caches.map(() => []);
  }

  get held(): number {
    return this.caches.reduce((sum, cache) => sum + cache.heldUnits, 0) + this.givingBack;
  }

  hit(isolate: number, hits: number, arrival = true): void {
    const cache = this.caches[isolate];
    const item = itemOf(this.limit, hits);
    const answered = cache.take(item, this.now, arrival);
    if (answered !== undefined) {
      if (answered > this.limit) this.problems.push(`a share answered ${answered} over ${this.limit}`);
      this.judge(answered, hits);
      const refill = cache.refill(item, this.now);
      if (refill) this.lead(isolate, { ...item, hits: 0 }, refill);
      return;
    }
    const plan = cache.plan(item, this.now);
    if (plan.kind === "wait") this.waiting[isolate].push(hits);
    else if (plan.kind === "lead") this.lead(isolate, item, plan.ask);
    else {
      const operation = { key: item.key, hits, windowEnd: item.windowEnd, windowSeconds: item.windowSeconds };
      this.pending[isolate].push({ operation, onReply: (reply) => this.judge(reply as number, hits) });
    }
  }

  idle(): void {
    this.now += IDLE_MS;
    this.caches.forEach((cache, isolate) => {
      for (const back of cache.idle(this.now)) {
        this.givingBack += back.ask.giveBack;
        this.pending[isolate].push({
          operation: leasedOp(back.item, back.ask, 0),
          onReply: () => (this.givingBack -= back.ask.giveBack),
        });
      }
    });
  }

  /** One call: everything the isolate has waiting for the object, as its coalescer sends it. */
  deliver(isolate: number): boolean {
    const calls = this.pending[isolate].splice(0);
    if (calls.length === 0) return false;
    const { replies } = this.table.increment(
      calls.map((call) => call.operation),
      this.now,
    );
    calls.forEach((call, i) => call.onReply(replies[i]));
    return true;
  }

  /** Delivers every call and retries every waiting request until nothing is left. */
  drain(): void {
    for (let busy = true; busy;) {
      busy = false;
      for (let i = 0; i < this.caches.length; i++) while (this.deliver(i)) busy = true;
    }
  }

  private lead(isolate: number, item: LeasedItem, leaseAsk: Ask): void {
    this.pending[isolate].push({
      operation: leasedOp(item, leaseAsk),
      onReply: (reply) => {
        const lease = reply as Extract<ObjectReply, { kind: "lease" }>;
        this.caches[isolate].settle(item, leaseAsk, lease, this.now);
        if (item.hits > 0) this.judge(lease.count, item.hits);
        const woken = this.waiting[isolate].splice(0);
        for (const hits of woken) this.hit(isolate, hits, false);
      },
    });
  }

  private judge(count: number, hits: number): void {
    if (count <= this.limit) {
      this.admitted += hits;
      return;
    }
    this.refused += hits;
    // One hit at a time: a refusal finds the admissions and the unused shares filling the limit exactly.
    if (hits === 1 && this.admitted + this.held !== this.limit)
      this.problems.push(`refused with ${this.admitted} admitted and ${this.held} held, limit ${this.limit}`);
  }
}

type Command = { kind: "hit"; isolate: number } | { kind: "deliver"; isolate: number } | { kind: "tick"; ms: number };

const commands = (isolates: number) =>
  fc.array(
    fc.oneof(
      { weight: 6, arbitrary: fc.record({ kind: fc.constant("hit" as const), isolate: fc.nat(isolates - 1) }) },
      { weight: 4, arbitrary: fc.record({ kind: fc.constant("deliver" as const), isolate: fc.nat(isolates - 1) }) },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant("tick" as const), ms: fc.integer({ min: 1, max: 400 }) }) },
    ),
    { maxLength: 400 },
  );

function run(simulation: Simulation, script: Command[], hitsOf: () => number): void {
  for (const command of script) {
    if (command.kind === "hit") simulation.hit(command.isolate, hitsOf());
    else if (command.kind === "deliver") simulation.deliver(command.isolate);
    else if (command.ms > IDLE_MS) simulation.idle();
    else simulation.now += command.ms;
  }
  simulation.drain();
}

describe("isolates borrowing from one object", () => {
  it("never admit more than the limit, and at each refusal only the unused shares are missing from it", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 0, max: 150 }),
        fc.integer({ min: 1, max: 64 }),
        fc.integer({ min: 1, max: 4 }).chain((isolates) => fc.tuple(fc.constant(isolates), commands(isolates))),
        (_, limit, maxUnits, [isolates, script]) => {
          const simulation = new Simulation(isolates, limit, maxUnits);
          run(simulation, script, () => 1);
          expect(simulation.problems).toEqual([]);
          expect(simulation.admitted).toBeLessThanOrEqual(limit);
          // Each isolate holds at most its maximum.
          for (const cache of simulation.caches) expect(cache.heldUnits).toBeLessThanOrEqual(maxUnits);
          // Shares unused for IDLE_MS come back: then nothing is held, and hits spaced that far apart, from any
          // isolate, are admitted up to exactly the limit.
          simulation.idle();
          simulation.drain();
          expect(simulation.held).toBe(0);
          for (let i = 0; i < 3 * limit + 3; i++) {
            simulation.idle();
            simulation.hit(i % isolates, 1);
            simulation.drain();
          }
          expect(simulation.admitted).toBe(limit);
          expect(simulation.problems).toEqual([]);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("never admit more than the limit with requests of several hits", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 150 }),
        fc.integer({ min: 1, max: 4 }).chain((isolates) => fc.tuple(fc.constant(isolates), commands(isolates))),
        fc.array(fc.integer({ min: 1, max: 5 }), { minLength: 1, maxLength: 50 }),
        (limit, [isolates, script], sizes) => {
          const simulation = new Simulation(isolates, limit, 32);
          let next = 0;
          run(simulation, script, () => sizes[next++ % sizes.length]);
          expect(simulation.problems.filter((problem) => problem.startsWith("a share"))).toEqual([]);
          expect(simulation.admitted).toBeLessThanOrEqual(limit);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("answer a burst of 600 on a limit of 100 with 100 admitted in a handful of calls", () => {
    const simulation = new Simulation(1, 100, 1000);
    let calls = 0;
    for (let i = 0; i < 600; i++) simulation.hit(0, 1);
    for (let busy = true; busy;) {
      busy = simulation.deliver(0);
      if (busy) calls++;
    }
    expect(simulation.admitted).toBe(100);
    expect(simulation.refused).toBe(500);
    // One call counts the first hit, then shares of 49, 25, 12, ... while the object lends, then the rest together.
    expect(calls).toBeLessThan(12);
  });
});
