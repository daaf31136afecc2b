// One window's counter operation and the reading of its reply: a fixed or sliding window of unit × unit_multiplier
// aligned to the epoch, or a token bucket (algorithms.ts). The limiter builds one per descriptor, or one per window of
// a descriptor with several (windows.ts).
import { judgeSlidingWindow, judgeTokenBucket } from "./algorithms";
import { type CacheKey, tokenBucketKey } from "./cache-key";
import type { RuleWindow } from "./config-model";
import type { CounterIncrement, CounterReply } from "./types";

/** Which fixed-window counters the store may answer from leased shares: those of rules with `lease: true`, or all. */
export type LeaseMode = "rules" | "all";

/** What an operation is built from: one window of a rule, and the rule's `lease`. */
export type OperationLimit = RuleWindow & { lease?: boolean };

/** Usage of one window around a request's hits, and the seconds until its status's reset. */
export interface WindowUsage {
  before: number;
  after: number;
  resetSeconds: number;
}

/**
 * The counter operation of one window at `now` (unix seconds, fractional): a fixed or sliding window of
 * unit × unit_multiplier aligned to the epoch, or a token bucket refilling requests_per_unit tokens per window.
 */
export function operationOf(
  counterKey: CacheKey,
  limit: OperationLimit,
  now: number,
  leases: LeaseMode | undefined,
): { operation: CounterIncrement; elapsedSeconds: number } {
  const { key, counterName, windowStart, windowEnd } = counterKey;
  const window = limit.windowSeconds;
  // Counters of per-second limits may live in a store of their own (the key-value store's per-second one).
  const perSecond = limit.unit === "SECOND" && limit.unitMultiplier === 1;
  if (limit.algorithm === "sliding_window") {
    const elapsedSeconds = Math.min(window, Math.max(0, now - windowStart));
    const algorithm = {
      kind: "sliding_window" as const,
      previousKey: `${counterName}${windowStart - window}`,
      limit: limit.requestsPerUnit,
      previousWeight: 1 - elapsedSeconds / window,
    };
    // The next window reads this one as its previous, so it lives two windows.
    const operation = {
      key,
      counterName,
      hits: 0,
      windowEnd: windowEnd + window,
      windowSeconds: 2 * window,
      perSecond,
      algorithm,
    };
    return { operation, elapsedSeconds };
  }
  if (limit.algorithm === "token_bucket") {
    const { emissionIntervalMicros } = limit;
    const nowMicros = Math.round(now * 1_000_000);
    const fullAfterMicros = limit.capacity * emissionIntervalMicros;
    const algorithm = { kind: "token_bucket" as const, burst: limit.capacity, emissionIntervalMicros, nowMicros };
    const operation = {
      key: tokenBucketKey(counterName),
      counterName,
      hits: 0,
      // No TAT reaches past a bucket refilled from empty.
      windowEnd: Math.ceil((nowMicros + fullAfterMicros) / 1_000_000),
      windowSeconds: Math.ceil(fullAfterMicros / 1_000_000),
      perSecond,
      algorithm,
    };
    return { operation, elapsedSeconds: 0 };
  }
  const operation: CounterIncrement = { key, counterName, hits: 0, windowEnd, windowSeconds: window, perSecond };
  if (leases === "all" || (leases === "rules" && limit.lease)) operation.lease = { limit: limit.capacity };
  return { operation, elapsedSeconds: 0 };
}

/**
 * Reads a store reply into usage before and after `hits`, and the seconds until the status's reset. `admitted` says
 * whether a fixed window's count holds the hits (always, except in a windows operation that refused them).
 */
export function usageOf(
  operation: Pick<CounterIncrement, "algorithm" | "windowEnd">,
  windowSeconds: number,
  elapsedSeconds: number,
  reply: CounterReply | undefined,
  hits: number,
  now: number,
  admitted = true,
): WindowUsage {
  const algorithm = operation.algorithm;
  if (typeof reply === "object" && algorithm?.kind === "sliding_window" && reply.kind === "sliding_window") {
    return judgeSlidingWindow(reply, algorithm, hits, windowSeconds, elapsedSeconds);
  }
  if (typeof reply === "object" && algorithm?.kind === "token_bucket" && reply.kind === "token_bucket") {
    return judgeTokenBucket(reply, algorithm, hits);
  }
  const count = typeof reply === "number" ? reply : 0;
  // Read-only counters (stop-increment mode) did not get the hits; clamp instead of underflowing.
  const before = admitted ? Math.max(0, count - hits) : count;
  return {
    before,
    after: admitted ? count : count + hits,
    // The window's end, from the whole second (as the reference: 1..window).
    resetSeconds: operation.windowEnd - Math.floor(now),
  };
}
