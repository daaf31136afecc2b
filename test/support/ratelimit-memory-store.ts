// An in-memory CounterStore for core tests: a real (single-threaded) implementation of the port that applies the
// algorithms' steps (core/algorithms.ts) as the real stores do, and records every call so tests can check how the
// limiter talks to the store.

import { slidingWindowStep, tokenBucketStep } from "../../src/ratelimit/core/algorithms";
import type { CounterIncrement, CounterReply, CounterStore } from "../../src/ratelimit/core/types";

export interface StoreCall {
  method: "increment" | "get";
  items: CounterIncrement[];
}

export class MemoryStore implements CounterStore {
  /** Fixed and sliding-window counts, and token buckets' TATs (microseconds), by key. */
  readonly counters = new Map<string, number>();
  readonly calls: StoreCall[] = [];
  /** When set, every call rejects with this error (a store outage). */
  failure: Error | undefined;

  async increment(items: CounterIncrement[]): Promise<CounterReply[]> {
    this.calls.push({ method: "increment", items: items.map((item) => structuredClone(item)) });
    if (this.failure) throw this.failure;
    // Sequential on purpose: two items with one key see 1 then 2, as Redis INCRBY in a pipeline does.
    return items.map((item) => this.apply(item, true));
  }

  async get(items: CounterIncrement[]): Promise<CounterReply[]> {
    this.calls.push({ method: "get", items: items.map((item) => structuredClone(item)) });
    if (this.failure) throw this.failure;
    return items.map((item) => this.apply(item, false));
  }

  /** The current value of a counter (0 when absent). */
  value(key: string): number {
    return this.counters.get(key) ?? 0;
  }

  /** One item's step; `get` (counting false) applies it with 0 hits and changes nothing. */
  private apply(item: CounterIncrement, counting: boolean): CounterReply {
    const { algorithm } = item;
    const hits = counting ? item.hits : 0;
    if (algorithm?.kind === "sliding_window") {
      const previous = this.value(algorithm.previousKey);
      const step = slidingWindowStep(previous, this.value(item.key), hits, algorithm);
      if (step.admitted && hits > 0) this.counters.set(item.key, step.current);
      return { kind: "sliding_window", admitted: step.admitted, previous, current: this.value(item.key) };
    }
    if (algorithm?.kind === "token_bucket") {
      const step = tokenBucketStep(this.counters.get(item.key), hits, algorithm);
      if (step.admitted && hits > 0) this.counters.set(item.key, step.tatMicros);
      return { kind: "token_bucket", admitted: step.admitted, tatMicros: step.tatMicros };
    }
    const value = this.value(item.key) + hits;
    if (counting) this.counters.set(item.key, value);
    return value;
  }
}
