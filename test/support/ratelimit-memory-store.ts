// An in-memory CounterStore for core tests: a real (single-threaded) implementation of the port that applies the
// algorithms' steps (core/algorithms.ts) as the real stores do, and records every call so tests can check how the
// limiter talks to the store.

import { slidingWindowStep, tokenBucketStep } from "../../src/ratelimit/core/algorithms";
import type {
  CounterIncrement,
  CounterReply,
  CounterStore,
  SingleAlgorithmReply,
  WindowsOperation,
} from "../../src/ratelimit/core/types";

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
    if (algorithm?.kind === "windows") return this.applyWindows(algorithm, hits);
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

  /** A windows operation: every window's step checked, then all of them applied or none. */
  private applyWindows(operation: WindowsOperation, hits: number): CounterReply {
    const steps = operation.windows.map((window) => {
      const { algorithm } = window;
      if (algorithm?.kind === "sliding_window") {
        const previous = this.value(algorithm.previousKey);
        const step = slidingWindowStep(previous, this.value(window.key), hits, algorithm);
        const reply = (admitted: boolean): SingleAlgorithmReply => ({
          kind: "sliding_window",
          admitted,
          previous,
          current: this.value(window.key),
        });
        return { admitted: step.admitted, value: step.current, key: window.key, reply };
      }
      if (algorithm?.kind === "token_bucket") {
        const stored = this.counters.get(window.key);
        const step = tokenBucketStep(stored, hits, algorithm);
        const unchanged = Math.max(stored ?? 0, algorithm.nowMicros);
        const reply = (admitted: boolean): SingleAlgorithmReply => ({
          kind: "token_bucket",
          admitted,
          tatMicros: admitted ? step.tatMicros : unchanged,
        });
        return { admitted: step.admitted, value: step.tatMicros, key: window.key, reply };
      }
      const count = this.value(window.key);
      return {
        admitted: count + hits <= window.limit,
        value: count + hits,
        key: window.key,
        reply: () => this.value(window.key),
      };
    });
    const admitted = steps.every((step) => step.admitted);
    if (admitted && hits > 0) for (const step of steps) this.counters.set(step.key, step.value);
    return { kind: "windows", admitted, windows: steps.map((step) => step.reply(admitted)) };
  }
}
