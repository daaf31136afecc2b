// An in-memory CounterStore for core tests: a real (single-threaded) implementation of the port, which
// also records every call so tests can check how the limiter talks to the store.

import type { CounterIncrement, CounterStore } from "../../../src/ratelimit/core/types";

export interface StoreCall {
  method: "increment" | "get";
  items: CounterIncrement[];
}

export class MemoryStore implements CounterStore {
  readonly counters = new Map<string, number>();
  readonly calls: StoreCall[] = [];
  /** When set, every call rejects with this error (a store outage). */
  failure: Error | undefined;

  async increment(items: CounterIncrement[]): Promise<number[]> {
    this.calls.push({ method: "increment", items: items.map((item) => ({ ...item })) });
    if (this.failure) throw this.failure;
    // Sequential on purpose: two items with one key see 1 then 2, as Redis INCRBY in a pipeline does.
    return items.map((item) => {
      const value = (this.counters.get(item.key) ?? 0) + item.hits;
      this.counters.set(item.key, value);
      return value;
    });
  }

  async get(items: CounterIncrement[]): Promise<number[]> {
    this.calls.push({ method: "get", items: items.map((item) => ({ ...item })) });
    if (this.failure) throw this.failure;
    return items.map((item) => this.counters.get(item.key) ?? 0);
  }

  /** The current value of a counter (0 when absent). */
  value(key: string): number {
    return this.counters.get(key) ?? 0;
  }
}
