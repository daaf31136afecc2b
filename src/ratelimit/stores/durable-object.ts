// The CounterStore the core uses, over one RateLimitCounter Durable Object per rate-limit key. Operations for
// the same object travel in one RPC, and the objects of one request are reached in parallel.
import type { CounterIncrement, CounterStore } from "../core/types";
import type { RateLimitCounter } from "../../../durable-objects/rate-limit-counter";

type Namespace = DurableObjectNamespace<RateLimitCounter>;

/** Groups the items by counter object, remembering each item's position in the request. */
function groupByObject(items: CounterIncrement[]) {
  const groups = new Map<string, { positions: number[]; items: CounterIncrement[] }>();
  items.forEach((item, position) => {
    let group = groups.get(item.counterName);
    if (!group) groups.set(item.counterName, (group = { positions: [], items: [] }));
    group.positions.push(position);
    group.items.push(item);
  });
  return [...groups.entries()];
}

async function perObject(
  items: CounterIncrement[],
  call: (name: string, items: CounterIncrement[]) => Promise<number[]>,
): Promise<number[]> {
  const results = new Array<number>(items.length);
  await Promise.all(
    groupByObject(items).map(async ([name, group]) => {
      const counts = await call(name, group.items);
      group.positions.forEach((position, i) => (results[position] = counts[i]));
    }),
  );
  return results;
}

export function durableObjectStore(namespace: Namespace): CounterStore {
  return {
    increment: (items) =>
      perObject(items, (name, group) =>
        namespace.getByName(name).increment(group.map(({ key, hits, windowEnd }) => ({ key, hits, windowEnd }))),
      ),
    get: (items) => perObject(items, (name, group) => namespace.getByName(name).read(group.map((item) => item.key))),
  };
}
