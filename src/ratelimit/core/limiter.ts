// The base limiter: turns matched limits into counter operations on the CounterStore port, then judges
// each descriptor against its threshold (statuses and stat deltas). Fixed windows as the reference counts them, or a
// rule's sliding window or token bucket (algorithms.ts), each over unit × unit_multiplier.

import { generateCacheKey } from "./cache-key";
import type { MatchedLimit, RuleWindow } from "./config";
import { type LeaseMode, operationOf, usageOf } from "./counter-operation";
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
  statsKey,
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
import { isKnownUnit, type KnownUnit } from "./units";
import { judgeWindows, type WindowPlan, windowsOperation } from "./windows";

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

export type { LeaseMode };

export interface LimiterInput {
  domain: string;
  descriptors: readonly RateLimitDescriptor[];
  /** Per descriptor, the limit to count against; undefined when nothing is counted. */
  limits: readonly (MatchedLimit | undefined)[];
  /** Per descriptor, the hits to add (0 = check without counting). */
  hits: readonly number[];
}

/** What explain shows of one counted descriptor: each window's usage around the hits, or that the cache answered. */
export interface DescriptorCounts {
  /** Per window (the rule's, then each additional one): usage before and after; absent when the cache answered. */
  windows?: { before: number; after: number }[];
  /** The local over-limit cache answered: no store call was made for this descriptor. */
  localCache: boolean;
}

export interface LimiterOutput {
  /** One per descriptor, in request order; `{OK, limitRemaining 0}` for descriptors without a limit. */
  statuses: DescriptorStatus[];
  /** Per descriptor, its counts; undefined for descriptors without a limit. */
  counts: (DescriptorCounts | undefined)[];
  /** One per counted descriptor, in request order. */
  rules: RuleStatDelta[];
}

/** A store call that failed; the message is the store's own. */
export interface StoreFailure {
  message: string;
  /** What callers may see of it (a PublicStoreError's); absent, nothing. */
  shown?: string;
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
  /** The rule's window's statistics (windowStats[0]). */
  stats: RuleStatDelta;
  /** A descriptor with additional windows: each window's plan; absent otherwise. */
  plans?: WindowPlan[];
  /** Per window, its statistics: the rule's key, then `<key>.window_<n>` for additional window n. */
  windowStats: RuleStatDelta[];
  /** The window whose key the local cache holds over (0 when none or with one window). */
  cachedWindow: number;
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
    return err(e instanceof PublicStoreError ? { message, shown: e.shown } : { message });
  }
  if (!Array.isArray(values) || values.length !== expected) {
    return err({ message: `counter store returned ${values?.length ?? 0} values for ${expected} counters` });
  }
  return ok(values);
}

function currentLimitOf(window: RuleWindow, name: string): RateLimit {
  const current: RateLimit = { requestsPerUnit: window.requestsPerUnit, unit: window.unit };
  if (name !== "") current.name = name;
  return current;
}

/** A one-window item's usage from a reply. */
const itemUsage = (item: Item, reply: CounterReply | undefined, hits: number, now: number) =>
  usageOf(item.operation, item.limit.windowSeconds, item.elapsedSeconds, reply, hits, now);

/** Whether the item's hits would exceed one of its windows, from a read of its counters. */
function wouldExceedOf(item: Item, reply: CounterReply | undefined, now: number): boolean {
  if (item.plans === undefined) return itemUsage(item, reply, 0, now).before + item.hits > item.limit.capacity;
  const plans = item.plans;
  const { judgements } = judgeWindows(plans, reply, 0, now);
  return judgements.some((usage, n) => usage.before + item.hits > plans[n].window.capacity);
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
  const wouldExceed = toStore.map((item, j) => wouldExceedOf(item, current.value[j], now));
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
): Judged {
  if (item.plans) return judgeSeveral(item, item.plans, reply, settings, now, localCache);
  const capacity = item.limit.capacity;
  // The algorithms only took what was sent; a fixed counter's reply already holds it.
  const usage = itemUsage(item, reply, typeof reply === "object" ? item.sent : item.hits, now);
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
  const remaining = over ? 0 : capacity - usage.after;
  const windows = [{ before: usage.before, after: usage.after }];
  return { over, remaining, info, resetSeconds: usage.resetSeconds, deciding: 0, windows };
}

/** What judging a descriptor gives its status and statistics. */
interface Judged {
  over: boolean;
  remaining: number;
  /** The deciding window's usage; absent when the local cache answered. */
  info?: LimitInfo;
  resetSeconds: number;
  /** The window the status reports (0 with one window). */
  deciding: number;
  /** Each window's usage; absent when the local cache answered. */
  windows?: { before: number; after: number }[];
}

/**
 * Judges a descriptor with several windows: each window's statistics by its own usage (a window that had room while
 * another refused counts only in total_hits: the hit took nothing from it), and the status by the deciding window.
 */
function judgeSeveral(
  item: Item,
  plans: WindowPlan[],
  reply: CounterReply | undefined,
  settings: LimiterSettings,
  now: number,
  localCache?: LocalCache,
): Judged {
  const { judgements, deciding } = judgeWindows(plans, reply, item.sent, now);
  const over = judgements[deciding].over;
  const infos = judgements.map((usage, n): LimitInfo => {
    const capacity = plans[n].window.capacity;
    const info = { before: usage.before, after: usage.after, overLimitThreshold: capacity, nearLimitThreshold: 0 };
    info.nearLimitThreshold = nearLimitThreshold(capacity, settings.nearLimitRatio);
    if (usage.over) addOverLimitStats(item.windowStats[n], info, item.hits);
    else if (!over) addWithinLimitStats(item.windowStats[n], info, item.hits);
    return info;
  });
  const { spec, window } = plans[deciding];
  const usage = judgements[deciding];
  if (over) localCache?.markOverLimit(spec.key, spec.algorithm ? now + usage.resetSeconds : spec.windowEnd, now);
  const remaining = over ? 0 : window.capacity - usage.after;
  const windows = judgements.map(({ before, after }) => ({ before, after }));
  return { over, remaining, info: infos[deciding], resetSeconds: usage.resetSeconds, deciding, windows };
}

/** What the status of a descriptor the local cache holds over reports: its cached window's reset. */
function cachedReset(item: Item, now: number): number {
  const spec = item.plans?.[item.cachedWindow].spec ?? item.operation;
  // A window's reset is its end; an algorithm's key is cached until its next unit of quota frees.
  return spec.algorithm === undefined ? spec.windowEnd - Math.floor(now) : (item.cachedUntil ?? now) - now;
}

/** One item per descriptor that has a limit: its counter operation, its hits, and whether the local cache holds it over. */
function itemsOf(settings: LimiterSettings, input: LimiterInput, now: number, localCache?: LocalCache): Item[] {
  const items: Item[] = [];
  input.descriptors.forEach((descriptor, index) => {
    const limit = input.limits[index];
    if (limit === undefined || limit.unlimited || !isKnownUnit(limit.unit)) return;
    const hits = input.hits[index] ?? 1;
    const keyOf = (unit: KnownUnit, multiplier: number) =>
      generateCacheKey(
        settings.cacheKeyPrefix,
        input.domain,
        descriptor.entries,
        unit,
        Math.floor(now),
        limit.sharedValues,
        multiplier,
      );
    const several = limit.additional === undefined ? undefined : windowsOperation(keyOf, limit, now);
    const { operation, elapsedSeconds } = several
      ? { operation: several.operation, elapsedSeconds: 0 }
      : operationOf(keyOf(limit.unit as KnownUnit, limit.unitMultiplier), limit, now, settings.leases);
    const plans = several?.plans;
    const windowStats = (plans ?? [undefined]).map((_, n) => {
      const stats = emptyRuleStats(statsKey(limit.metricKey) + (n === 0 ? "" : `.window_${n}`));
      stats.totalHits += hits;
      return stats;
    });
    const keys = plans?.map((plan) => plan.spec.key) ?? [operation.key];
    let cachedUntil: number | undefined;
    const cachedWindow = Math.max(
      0,
      keys.findIndex((key) => (cachedUntil = localCache?.overLimitUntil(key, now)) !== undefined),
    );
    items.push({
      index,
      limit,
      operation,
      hits,
      sent: hits,
      elapsedSeconds,
      overLimitWithLocalCache: cachedUntil !== undefined,
      cachedUntil,
      stats: windowStats[0],
      plans,
      windowStats,
      cachedWindow,
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
  const counts: (DescriptorCounts | undefined)[] = input.descriptors.map(() => undefined);
  let next = 0;
  for (const item of items) {
    let judged: Judged;
    if (item.overLimitWithLocalCache) {
      const stats = item.windowStats[item.cachedWindow];
      stats.overLimit += item.hits;
      stats.overLimitWithLocalCache += item.hits;
      judged = { over: true, remaining: 0, resetSeconds: cachedReset(item, now), deciding: item.cachedWindow };
    } else {
      judged = judge(item, results[next++], settings, now, localCache);
    }
    const { over, remaining, info, resetSeconds, deciding, windows } = judged;
    counts[item.index] = { ...(windows && { windows }), localCache: item.overLimitWithLocalCache };
    // A shadow rule runs every step (counting, stats, local cache) but never blocks.
    const shadowed = over && item.limit.shadowMode;
    if (shadowed) addShadowModeStats(item.windowStats[deciding], info, item.hits);
    statuses[item.index] = {
      code: over && !shadowed ? "OVER_LIMIT" : "OK",
      currentLimit: currentLimitOf(item.plans?.[deciding].window ?? item.limit, item.limit.name),
      limitRemaining: remaining,
      durationUntilResetSeconds: resetSeconds,
    };
  }
  return ok({ statuses, counts, rules: items.flatMap((item) => item.windowStats) });
}
