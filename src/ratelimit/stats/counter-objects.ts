// Statistics of the Durable Object counters of this isolate: objects started, operations, storage lookups, rows
// written and deleted, commits (ratelimit.durable_object.*). The objects add to one buffer per isolate, flushed to the
// RateLimitStats aggregate like the Worker's own statistics (at most a second later, numbered from the same batch
// sequence), so /stats and /metrics show the storage cost of decisions.
import { COUNTER_OBJECT_PREFIX, COUNTER_OBJECT_STATS } from "./names";
import { nextBatchId, partsOf, RetryQueue, StatsBuffer } from "./buffer";
import { statsConfig } from "./config";
import { deliverParts } from "./sinks";

export type CounterObjectStat = (typeof COUNTER_OBJECT_STATS)[number];

/**
 * Longest wait before a flush. A flush is activity of the object whose timer holds it, and workerd keeps an object
 * open until 10 s after its last activity: a later flush would keep the long tail's objects open longer (measured: a
 * 5 s wait kept a new key's object open 15 s instead of 12 s).
 */
const MAX_WAIT_MS = 1000;

const buffer = new StatsBuffer({ keepSamples: false });
const retries = new RetryQueue();
let flushTimer: ReturnType<typeof setTimeout> | undefined;

async function flush(env: Env, sinkTimeoutMs: number): Promise<void> {
  flushTimer = undefined;
  const batch = buffer.take(nextBatchId());
  const parts = [...retries.takeAll(), ...(batch ? partsOf(batch) : [])];
  if (parts.length > 0) retries.push(await deliverParts(env, parts, sinkTimeoutMs));
}

/** Adds what one object did; schedules this isolate's flush unless statistics are off. */
export function recordCounterObjectActivity(env: Env, activity: Partial<Record<CounterObjectStat, number>>): void {
  const config = statsConfig(env);
  if (!config.enabled) return;
  for (const stat of COUNTER_OBJECT_STATS) {
    const amount = activity[stat];
    if (amount) buffer.addCounter(COUNTER_OBJECT_PREFIX + stat, amount);
  }
  if (flushTimer !== undefined || (buffer.isEmpty && retries.size === 0)) return;
  flushTimer = setTimeout(() => void flush(env, config.sinkTimeoutMs), Math.min(config.flushIntervalMs, MAX_WAIT_MS));
}
