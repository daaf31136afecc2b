// The base limiter: turns matched limits into counter operations on the CounterStore port, then judges
// each descriptor against its threshold (statuses and stat deltas). Fixed windows, as the reference.

import { type CacheKey, generateCacheKey } from "./cache-key";
import type { MatchedLimit } from "./config";
import type { LocalCache } from "./local-cache";
import { err, ok, type Result } from "./result";
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
import type { CounterIncrement, CounterStore, DescriptorStatus, RateLimit, RateLimitDescriptor } from "./types";
import { calculateReset, isKnownUnit, type KnownUnit } from "./units";

export interface LimiterSettings {
  /** STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT. */
  stopCacheKeyIncrementWhenOverlimit: boolean;
  /** NEAR_LIMIT_RATIO, 0..1. */
  nearLimitRatio: number;
  /** CACHE_KEY_PREFIX. */
  cacheKeyPrefix: string;
}

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
}

interface Item {
  index: number;
  limit: MatchedLimit;
  unit: KnownUnit;
  cacheKey: CacheKey;
  hits: number;
  /** Hits actually sent to the store (0 when stop-increment mode only reads this counter). */
  sent: number;
  overLimitWithLocalCache: boolean;
  stats: RuleStatDelta;
}

function counterOp(item: Item, hits: number): CounterIncrement {
  const { key, counterName, windowEnd } = item.cacheKey;
  return { key, counterName, hits, windowEnd };
}

/** Runs one store call, turning a rejection or a reply of the wrong length into a StoreFailure value. */
async function callStore(call: () => Promise<number[]>, expected: number): Promise<Result<number[], StoreFailure>> {
  let values: number[];
  try {
    values = await call();
  } catch (e) {
    return err({ message: e instanceof Error ? e.message : String(e) });
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
): Promise<Result<void, StoreFailure>> {
  for (const item of toStore) item.sent = item.hits;
  if (!settings.stopCacheKeyIncrementWhenOverlimit) return ok(undefined);
  if (items.some((item) => item.overLimitWithLocalCache)) {
    for (const item of toStore) item.sent = 0;
    return ok(undefined);
  }
  // With a single counter the read cannot change the outcome (it is incremented either way), so skip it.
  if (toStore.length < 2) return ok(undefined);
  const current = await callStore(() => store.get(toStore.map((item) => counterOp(item, 0))), toStore.length);
  if (!current.ok) return current;
  const wouldExceed = toStore.map((item, j) => (current.value[j] ?? 0) + item.hits > item.limit.requestsPerUnit);
  if (wouldExceed.some(Boolean)) {
    toStore.forEach((item, j) => {
      item.sent = wouldExceed[j] ? item.hits : 0;
    });
  }
  return ok(undefined);
}

/** Judges one counted descriptor from its counter value after this request. */
function judge(item: Item, after: number, settings: LimiterSettings, now: number, localCache?: LocalCache) {
  const limit = item.limit.requestsPerUnit;
  const info: LimitInfo = {
    // Read-only counters (stop-increment mode) did not get the hits; clamp instead of underflowing.
    before: Math.max(0, after - item.hits),
    after,
    overLimitThreshold: limit,
    nearLimitThreshold: nearLimitThreshold(limit, settings.nearLimitRatio),
  };
  // requests_per_unit 0 blocks everything, even a check with zero hits on an empty counter.
  const over = after > limit || limit === 0;
  if (over) {
    addOverLimitStats(item.stats, info, item.hits);
    localCache?.markOverLimit(item.cacheKey.key, item.cacheKey.windowEnd, now);
  } else {
    addWithinLimitStats(item.stats, info, item.hits);
  }
  return { over, remaining: over ? 0 : limit - after, info };
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
  const items: Item[] = [];
  input.descriptors.forEach((descriptor, index) => {
    const limit = input.limits[index];
    if (limit === undefined || limit.unlimited || !isKnownUnit(limit.unit)) return;
    const hits = input.hits[index] ?? 1;
    const cacheKey = generateCacheKey(
      settings.cacheKeyPrefix,
      input.domain,
      descriptor.entries,
      limit.unit,
      now,
      limit.sharedValues,
    );
    const stats = emptyRuleStats(sanitizeStatName(limit.metricKey));
    stats.totalHits += hits;
    const overLimitWithLocalCache = localCache?.isOverLimit(cacheKey.key, now) ?? false;
    const unit = limit.unit;
    items.push({ index, limit, unit, cacheKey, hits, sent: hits, overLimitWithLocalCache, stats });
  });

  const toStore = items.filter((item) => !item.overLimitWithLocalCache);
  const plan = await planHits(store, settings, items, toStore);
  if (!plan.ok) return plan;
  let results: number[] = [];
  if (toStore.length > 0) {
    const ops = toStore.map((item) => counterOp(item, item.sent));
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
    if (item.overLimitWithLocalCache) {
      over = true;
      item.stats.overLimit += item.hits;
      item.stats.overLimitWithLocalCache += item.hits;
    } else {
      ({ over, remaining, info } = judge(item, results[next++] ?? 0, settings, now, localCache));
    }
    // A shadow rule runs every step (counting, stats, local cache) but never blocks.
    const shadowed = over && item.limit.shadowMode;
    if (shadowed) addShadowModeStats(item.stats, info, item.hits);
    statuses[item.index] = {
      code: over && !shadowed ? "OVER_LIMIT" : "OK",
      currentLimit: currentLimitOf(item.limit),
      limitRemaining: remaining,
      durationUntilResetSeconds: calculateReset(item.unit, now),
    };
  }
  return ok({ statuses, rules: items.map((item) => item.stats) });
}
