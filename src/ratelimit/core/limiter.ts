// The base limiter: turns matched limits into counter operations on the CounterStore port, then judges
// each descriptor against its threshold (statuses and stat deltas). Fixed windows as the reference counts them, or a
// rule's sliding window or token bucket (algorithms.ts), each over unit × unit_multiplier.

import { judgeSlidingWindow, judgeTokenBucket } from "./algorithms";
import { type CacheKey, generateCacheKey, tokenBucketKey } from "./cache-key";
import type { MatchedLimit } from "./config";
import type { LocalCache } from "./local-cache";
import { err, ok, type Result } from "../../shared/result";
import {
  addOverLimitStats,
  addShadowModeStats,
  addWithinLimitStats,
  emptyRuleStats,
  type LimitInfo,
  nearLimitThreshold,
  type RuleStatDelta,
  sanitizeStatName,
} from "./stats";
import {
  type CounterIncrement,
  type CounterReply,
  type CounterStore,
  type DescriptorStatus,
  PublicStoreError,
  type RateLimit,
  type RateLimitDescriptor,
} from "./types";
import { isKnownUnit } from "./units";

export interface LimiterSettings {
  /** STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT. */
  stopCacheKeyIncrementWhenOverlimit: boolean;
  /** NEAR_LIMIT_RATIO, 0..1. */
  nearLimitRatio: number;
  /** CACHE_KEY_PREFIX. */
  cacheKeyPrefix: string;
  /**
   * Which fixed-window counters the store may answer from leased shares: those of rules with `lease: true`, or all
   * (COUNTER_LEASES); absent where the store does not lend (every store but the Durable Object one).
   */
  leases?: LeaseMode;
}

export type LeaseMode = "rules" | "all";

export interface LimiterInput {
  domain: string;
  descriptors: readonly RateLimitDescriptor[];
  /** Per descriptor, the limit to count against; undefined when nothing is counted. */
  limits: readonly (MatchedLimit | undefined)[];
  /** Per descriptor, the hits to add (0 = check without counting). */
  hits: readonly number[];
}

export interface LimiterOutput {
  /** One per descriptor, in request order; `{OK, limitRemaining 0}` for descriptors without a limit. */
  statuses: DescriptorStatus[];
  /** One per counted descriptor, in request order. */
  rules: RuleStatDelta[];
}

/** A store call that failed; the message is the store's own. */
export interface StoreFailure {
  message: string;
  /** The message may be shown to callers whatever the store (a PublicStoreError). */
  public?: true;
}

interface Item {
  index: number;
  limit: MatchedLimit;
  /** The counter operation with this request's hits; `sent` replaces them when the counter is only read. */
  operation: CounterIncrement;
  hits: number;
  /** Hits actually sent to the store (0 when stop-increment mode only reads this counter). */
  sent: number;
  /** Seconds into the window (sliding window), for the time until the estimate drops. */
  elapsedSeconds: number;
  overLimitWithLocalCache: boolean;
  /** When the local cache stops answering for this key (unix seconds), if it answers now. */
  cachedUntil: number | undefined;
  stats: RuleStatDelta;
}

const withHits = (item: Item, hits: number): CounterIncrement => ({ ...item.operation, hits });

/** Runs one store call, turning a rejection or a reply of the wrong length into a StoreFailure value. */
async function callStore(
  call: () => Promise<CounterReply[]>,
  expected: number,
): Promise<Result<CounterReply[], StoreFailure>> {
  let values: CounterReply[];
  try {
    values = await call();
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    return err(e instanceof PublicStoreError ? { message, public: true } : { message });
  }
  if (!Array.isArray(values) || values.length !== expected) {
    return err({ message: `counter store returned ${values?.length ?? 0} values for ${expected} counters` });
  }
  return ok(values);
}

function currentLimitOf(limit: MatchedLimit): RateLimit {
  const current: RateLimit = { requestsPerUnit: limit.requestsPerUnit, unit: limit.unit };
  if (limit.name !== "") current.name = limit.name;
  return current;
}

/**
 * The counter operation of one descriptor at `now` (unix seconds, fractional): a fixed or sliding window of
 * unit × unit_multiplier aligned to the epoch, or a token bucket refilling requests_per_unit tokens per window.
 */
function operationOf(
  counterKey: CacheKey,
  limit: MatchedLimit,
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

/** Reads a store reply into usage before and after `hits`, and the seconds until the status's reset. */
function usageOf(item: Item, reply: CounterReply | undefined, hits: number, now: number) {
  const algorithm = item.operation.algorithm;
  if (typeof reply === "object" && algorithm?.kind === "sliding_window" && reply.kind === "sliding_window") {
    return judgeSlidingWindow(reply, algorithm, hits, item.limit.windowSeconds, item.elapsedSeconds);
  }
  if (typeof reply === "object" && algorithm?.kind === "token_bucket" && reply.kind === "token_bucket") {
    return judgeTokenBucket(reply, algorithm, hits);
  }
  const after = typeof reply === "number" ? reply : 0;
  return {
    // Read-only counters (stop-increment mode) did not get the hits; clamp instead of underflowing.
    before: Math.max(0, after - hits),
    after,
    // The window's end, from the whole second (as the reference: 1..window).
    resetSeconds: item.operation.windowEnd - Math.floor(now),
  };
}

/**
 * Decides which counters get how many hits. Normally every counter gets its hits. With
 * STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT a request that is already blocked must not eat the quota of its
 * other descriptors: if any key is over limit in the local cache, all other counters are only read; else
 * the counters are read first and, if some would exceed their limit, only those are incremented.
 */
async function planHits(
  store: CounterStore,
  settings: LimiterSettings,
  items: Item[],
  toStore: Item[],
  now: number,
): Promise<Result<void, StoreFailure>> {
  for (const item of toStore) item.sent = item.hits;
  if (!settings.stopCacheKeyIncrementWhenOverlimit) return ok(undefined);
  if (items.some((item) => item.overLimitWithLocalCache)) {
    for (const item of toStore) item.sent = 0;
    return ok(undefined);
  }
  // With a single counter the read cannot change the outcome (it is incremented either way), so skip it.
  if (toStore.length < 2) return ok(undefined);
  const current = await callStore(() => store.get(toStore.map((item) => withHits(item, 0))), toStore.length);
  if (!current.ok) return current;
  const wouldExceed = toStore.map((item, j) => {
    const { before } = usageOf(item, current.value[j], 0, now);
    return before + item.hits > item.limit.capacity;
  });
  if (wouldExceed.some(Boolean)) {
    toStore.forEach((item, j) => {
      item.sent = wouldExceed[j] ? item.hits : 0;
    });
  }
  return ok(undefined);
}

/** Judges one counted descriptor from the store's reply to this request's operation. */
function judge(
  item: Item,
  reply: CounterReply | undefined,
  settings: LimiterSettings,
  now: number,
  localCache?: LocalCache,
) {
  const capacity = item.limit.capacity;
  // The algorithms only took what was sent; a fixed counter's reply already holds it.
  const usage = usageOf(item, reply, typeof reply === "object" ? item.sent : item.hits, now);
  const info: LimitInfo = {
    before: usage.before,
    after: usage.after,
    overLimitThreshold: capacity,
    nearLimitThreshold: nearLimitThreshold(capacity, settings.nearLimitRatio),
  };
  // requests_per_unit 0 blocks everything, even a check with zero hits on an empty counter.
  const over = usage.after > capacity || capacity === 0;
  if (over) {
    addOverLimitStats(item.stats, info, item.hits);
    // A window's key is over until the window ends; an algorithm's until the next unit of quota frees.
    const until = item.operation.algorithm === undefined ? item.operation.windowEnd : now + usage.resetSeconds;
    localCache?.markOverLimit(item.operation.key, until, now);
  } else {
    addWithinLimitStats(item.stats, info, item.hits);
  }
  return { over, remaining: over ? 0 : capacity - usage.after, info, resetSeconds: usage.resetSeconds };
}

/** One item per descriptor that has a limit: its counter operation, its hits, and whether the local cache holds it over. */
function itemsOf(settings: LimiterSettings, input: LimiterInput, now: number, localCache?: LocalCache): Item[] {
  const items: Item[] = [];
  input.descriptors.forEach((descriptor, index) => {
    const limit = input.limits[index];
    if (limit === undefined || limit.unlimited || !isKnownUnit(limit.unit)) return;
    const hits = input.hits[index] ?? 1;
    const counterKey = generateCacheKey(
      settings.cacheKeyPrefix,
      input.domain,
      descriptor.entries,
      limit.unit,
      Math.floor(now),
      limit.sharedValues,
      limit.unitMultiplier,
    );
    const { operation, elapsedSeconds } = operationOf(counterKey, limit, now, settings.leases);
    const stats = emptyRuleStats(sanitizeStatName(limit.metricKey));
    stats.totalHits += hits;
    const cachedUntil = localCache?.overLimitUntil(operation.key, now);
    items.push({
      index,
      limit,
      operation,
      hits,
      sent: hits,
      elapsedSeconds,
      overLimitWithLocalCache: cachedUntil !== undefined,
      cachedUntil,
      stats,
    });
  });
  return items;
}

/**
 * Counts the hits of every descriptor that has a limit and returns one status per descriptor. All
 * counters go to the store in one `increment` call (plus one `get` call first in stop-increment mode);
 * keys known to be over limit in the local cache are not sent at all.
 * @param now unix seconds.
 * @returns statuses and stat deltas, or the store's failure.
 */
export async function doLimit(
  store: CounterStore,
  settings: LimiterSettings,
  input: LimiterInput,
  now: number,
  localCache?: LocalCache,
): Promise<Result<LimiterOutput, StoreFailure>> {
  const items = itemsOf(settings, input, now, localCache);
  const toStore = items.filter((item) => !item.overLimitWithLocalCache);
  const plan = await planHits(store, settings, items, toStore, now);
  if (!plan.ok) return plan;
  let results: CounterReply[] = [];
  if (toStore.length > 0) {
    const ops = toStore.map((item) => withHits(item, item.sent));
    const incremented = await callStore(() => store.increment(ops), ops.length);
    if (!incremented.ok) return incremented;
    results = incremented.value;
  }

  const statuses: DescriptorStatus[] = input.descriptors.map(() => ({ code: "OK", limitRemaining: 0 }));
  let next = 0;
  for (const item of items) {
    let over: boolean;
    let remaining = 0;
    let info: LimitInfo | undefined;
    let resetSeconds: number;
    if (item.overLimitWithLocalCache) {
      over = true;
      item.stats.overLimit += item.hits;
      item.stats.overLimitWithLocalCache += item.hits;
      // A window's reset is its end; an algorithm's key is cached until its next unit of quota frees.
      resetSeconds =
        item.operation.algorithm === undefined
          ? usageOf(item, undefined, 0, now).resetSeconds
          : (item.cachedUntil ?? now) - now;
    } else {
      ({ over, remaining, info, resetSeconds } = judge(item, results[next++], settings, now, localCache));
    }
    // A shadow rule runs every step (counting, stats, local cache) but never blocks.
    const shadowed = over && item.limit.shadowMode;
    if (shadowed) addShadowModeStats(item.stats, info, item.hits);
    statuses[item.index] = {
      code: over && !shadowed ? "OVER_LIMIT" : "OK",
      currentLimit: currentLimitOf(item.limit),
      limitRemaining: remaining,
      durationUntilResetSeconds: resetSeconds,
    };
  }
  return ok({ statuses, rules: items.map((item) => item.stats) });
}
