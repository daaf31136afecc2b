// The CounterStore the core uses, over RateLimitCounter Durable Objects: one per rate-limit key (per_key, the default)
// or COUNTER_OBJECT_SHARDS shards each holding many keys (sharded).
import { waitUntil } from "cloudflare:workers";
import { CallCoalescer, type CoalescerOptions } from "../../core/call-coalescer";
import { shardName } from "../../core/counter-shards";
import type { CounterOperation, ObjectReply } from "../../core/counter-table";
import { LeaseCache } from "../../core/lease-cache";
import type { CounterIncrement, CounterReply, CounterStore } from "../../core/types";
import { ObjectAdmission } from "./admission";
import { LeasedCounters } from "./leases";
import type { RateLimitCounter } from "../../../../durable-objects/rate-limit-counter";

// The objects of one request are reached in parallel; the operations for one object wait in this isolate's queue for
// that object and travel in one RPC with those of other requests that arrived meanwhile (core/call-coalescer.ts), so a
// hot key costs its object one call per round trip, not one per request. Both windows of a sliding window share the
// counter name, so one object holds both. Fixed-window items that carry a lease (COUNTER_LEASES, or a rule's `lease:
// true`) are answered from this isolate's leased shares where they can be (leases.ts), without a call.

type Namespace = DurableObjectNamespace<RateLimitCounter>;

/**
 * Where the counters live: one object per rate-limit key (at most `activeLimit` of them called by one isolate while
 * they may still be open, 0: no limit, a call to a further one waiting at most `admissionMaxWaitMs`; see
 * admission.ts), or this many shards. `writeBehindMs` is the objects' write delay (COUNTER_WRITE_BEHIND), which keeps
 * them open longer.
 */
export type CounterObjectLayout =
  | { kind: "per_key"; activeLimit: number; admissionMaxWaitMs: number; writeBehindMs: number }
  | { kind: "sharded"; shards: number };

/**
 * How long a per-key object stays open after this isolate's last call to it: workerd closes an object 10 s after its
 * last activity, which may be the write-behind's commit, and checks every few seconds (11 to 13 s measured), plus a
 * margin.
 */
const objectResidencyMs = (writeBehindMs: number): number => writeBehindMs + 13_000;

/** Groups the items by counter object, remembering each item's position in the request. */
function groupByObject(items: CounterIncrement[], objectOf: (item: CounterIncrement) => string) {
  const groups = new Map<string, { positions: number[]; operations: CounterOperation[] }>();
  items.forEach((item, position) => {
    const name = objectOf(item);
    let group = groups.get(name);
    if (!group) groups.set(name, (group = { positions: [], operations: [] }));
    group.positions.push(position);
    group.operations.push({
      key: item.key,
      hits: item.hits,
      windowEnd: item.windowEnd,
      windowSeconds: item.windowSeconds,
      ...(item.algorithm && { algorithm: item.algorithm }),
    });
  });
  return [...groups.entries()];
}

/** Leases: the most units of one counter an isolate holds at once (COUNTER_LEASE_MAX_UNITS). */
export interface LeaseOptions {
  maxUnits: number;
}

/** A share covers at least this much of an isolate's traffic on a key: at most 20 asks a second per isolate and key. */
const LEASE_MIN_SPAN_MS = 50;
/** Unused units are given back after this long without a hit on their key. */
const LEASE_IDLE_MS = 300;
/** After the object lent nothing (too little left), a key is counted per request this long before the next ask. */
const LEASE_RETRY_MS = 250;
/** Most keys whose traffic one isolate measures for leases. */
const LEASE_MAX_COUNTERS = 10_000;

function leasedCounters(
  call: (object: string, operations: CounterOperation[]) => Promise<ObjectReply[]>,
  objectOf: (counterName: string) => string,
  lease: LeaseOptions,
  coalescing: CoalescerOptions,
): LeasedCounters {
  const cache = new LeaseCache({
    holder: crypto.randomUUID(),
    maxUnits: lease.maxUnits,
    minSpanMs: LEASE_MIN_SPAN_MS,
    idleMs: LEASE_IDLE_MS,
    retryMs: LEASE_RETRY_MS,
    maxCounters: LEASE_MAX_COUNTERS,
  });
  return new LeasedCounters(cache, call, objectOf, waitUntil, {
    maxWaitMs: coalescing.maxWaitMs,
    idleMs: LEASE_IDLE_MS,
    maxOperationsPerCall: coalescing.maxOperationsPerCall,
  });
}

/**
 * Runs the leased items (those with a `lease`) through `leased` and the others through `rest`, each reply in its
 * item's place.
 */
async function splitLeased(
  items: CounterIncrement[],
  leased: (item: CounterIncrement, limit: number) => Promise<number>,
  rest: (items: CounterIncrement[]) => Promise<CounterReply[]>,
): Promise<CounterReply[]> {
  const results = new Array<CounterReply>(items.length);
  const others: number[] = [];
  const work: Promise<unknown>[] = [];
  items.forEach((item, position) => {
    if (item.lease && !item.algorithm)
      work.push(leased(item, item.lease.limit).then((count) => (results[position] = count)));
    else others.push(position);
  });
  if (others.length > 0) {
    const replies = rest(others.map((position) => items[position]));
    work.push(replies.then((values) => others.forEach((position, i) => (results[position] = values[i]))));
  }
  await Promise.all(work);
  return results;
}

/**
 * The store over these objects; `coalescing` bounds the calls in flight to each object from this isolate; `lease`
 * set lets leased items be answered from shares.
 */
export function durableObjectStore(
  namespace: Namespace,
  layout: CounterObjectLayout,
  coalescing: CoalescerOptions,
  lease?: LeaseOptions,
): CounterStore {
  const objectOfName =
    layout.kind === "sharded"
      ? (counterName: string) => shardName(counterName, layout.shards)
      : (counterName: string) => counterName;
  const objectOf = (item: CounterIncrement) => objectOfName(item.counterName);
  const admission =
    layout.kind === "per_key" && layout.activeLimit > 0
      ? new ObjectAdmission(layout.activeLimit, objectResidencyMs(layout.writeBehindMs), layout.admissionMaxWaitMs)
      : undefined;
  // A read is an increment of 0 hits (the object answers both alike), so reads and increments share one queue.
  const coalescer = new CallCoalescer<CounterOperation, ObjectReply>(
    (name, operations) => namespace.getByName(name).increment(operations),
    coalescing,
    undefined,
    waitUntil,
  );
  let leases: LeasedCounters | undefined;
  // Built at the first leased item: an isolate's random holder id may not be drawn at startup.
  const leasesOf = (): LeasedCounters =>
    (leases ??= leasedCounters(
      async (name, operations) => {
        await admission?.admit([name]);
        return coalescer.submit(name, operations);
      },
      objectOfName,
      lease!,
      coalescing,
    ));
  // Measured under a steady stream on one key (test/integration/ratelimit-concurrency.test.ts): a one-item shortcut
  // here that skipped both the admission's await and this grouping answered thousands of requests 500 "Cannot perform
  // I/O on behalf of a different request" in 7 runs of 8 (a run: one layout); keeping either one, it passed 8 of 8.
  // The runtime's rule behind it was not found, so a change to this path wants that test run several times.
  const perObject = async (items: CounterIncrement[]): Promise<CounterReply[]> => {
    const results = new Array<CounterReply>(items.length);
    const groups = groupByObject(items, objectOf);
    await admission?.admit(groups.map(([name]) => name));
    await Promise.all(
      groups.map(async ([name, group]) => {
        // Operations without a lease ask are answered with counts and algorithm replies only.
        const replies = (await coalescer.submit(name, group.operations)) as CounterReply[];
        group.positions.forEach((position, i) => (results[position] = replies[i]));
      }),
    );
    return results;
  };
  const asReads = (items: CounterIncrement[]) => items.map((item) => ({ ...item, hits: 0 }));
  if (!lease) return { increment: perObject, get: (items) => perObject(asReads(items)) };
  return {
    increment: (items) => splitLeased(items, (item, limit) => leasesOf().increment(item, limit), perObject),
    get: (items) => splitLeased(asReads(items), (item, limit) => leasesOf().read(item, limit), perObject),
  };
}
