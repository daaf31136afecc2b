// The CounterStore the core uses, over RateLimitCounter Durable Objects: one per rate-limit key (per_key, the
// default) or COUNTER_OBJECT_SHARDS shards each holding many keys (sharded). The objects of one request are reached in
// parallel; the operations for one object wait in this isolate's queue for that object and travel in one RPC with
// those of other requests that arrived meanwhile (core/call-coalescer.ts), so a hot key costs its object one call per
// round trip, not one per request. Both windows of a sliding window share the counter name, so one object holds both.
import { waitUntil } from "cloudflare:workers";
import { CallCoalescer, type CoalescerOptions } from "../../core/call-coalescer";
import { shardName } from "../../core/counter-shards";
import type { CounterOperation } from "../../core/counter-table";
import type { CounterIncrement, CounterReply, CounterStore } from "../../core/types";
import { ObjectAdmission } from "./admission";
import type { RateLimitCounter } from "../../../../durable-objects/rate-limit-counter";

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

/** The store over these objects; `coalescing` bounds the calls in flight to each object from this isolate. */
export function durableObjectStore(
  namespace: Namespace,
  layout: CounterObjectLayout,
  coalescing: CoalescerOptions,
): CounterStore {
  const objectOf =
    layout.kind === "sharded"
      ? (item: CounterIncrement) => shardName(item.counterName, layout.shards)
      : (item: CounterIncrement) => item.counterName;
  const admission =
    layout.kind === "per_key" && layout.activeLimit > 0
      ? new ObjectAdmission(layout.activeLimit, objectResidencyMs(layout.writeBehindMs), layout.admissionMaxWaitMs)
      : undefined;
  // A read is an increment of 0 hits (the object answers both alike), so reads and increments share one queue.
  const coalescer = new CallCoalescer<CounterOperation, CounterReply>(
    (name, operations) => namespace.getByName(name).increment(operations),
    coalescing,
    undefined,
    waitUntil,
  );
  const perObject = async (items: CounterIncrement[]): Promise<CounterReply[]> => {
    const results = new Array<CounterReply>(items.length);
    const groups = groupByObject(items, objectOf);
    await admission?.admit(groups.map(([name]) => name));
    await Promise.all(
      groups.map(async ([name, group]) => {
        const replies = await coalescer.submit(name, group.operations);
        group.positions.forEach((position, i) => (results[position] = replies[i]));
      }),
    );
    return results;
  };
  return {
    increment: perObject,
    get: (items) => perObject(items.map((item) => ({ ...item, hits: 0 }))),
  };
}
