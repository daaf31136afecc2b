// Cache (counter) keys: prefix + domain + "_" + "key_value_" per entry + window start, composed exactly as
// the reference does so that counters line up with an existing deployment's naming.

import type { DescriptorEntry } from "./types";
import { type KnownUnit, unitToDivider, windowStart } from "./units";

export interface CacheKey {
  /** Full key, window start included, e.g. `domain_key_value_1234`. */
  key: string;
  /** The key without its window part, e.g. `domain_key_value_`: names the counter across windows. */
  counterName: string;
  /** Unix seconds at which the window starts and ends. */
  windowStart: number;
  windowEnd: number;
}

/**
 * Generates the cache key of one descriptor for the window that contains `now`.
 * @param prefix CACHE_KEY_PREFIX, prepended verbatim.
 * @param domain the request's domain.
 * @param entries the request descriptor's entries.
 * @param unit the unit of the limit that applies.
 * @param now unix seconds (whole).
 * @param sharedValues per entry index, a value to use instead of the runtime value: the wildcard pattern
 *   (with `*`) of a share_threshold rule, so that all matching values share one counter.
 * @param multiplier unit_multiplier: the window spans this many units, aligned to the epoch.
 */
export function generateCacheKey(
  prefix: string,
  domain: string,
  entries: readonly DescriptorEntry[],
  unit: KnownUnit,
  now: number,
  sharedValues?: readonly (string | undefined)[],
  multiplier = 1,
): CacheKey {
  let counterName = `${prefix}${domain}_`;
  entries.forEach((entry, i) => {
    counterName += `${entry.key}_${sharedValues?.[i] ?? entry.value}_`;
  });
  const start = windowStart(unit, now, multiplier);
  const windowEnd = start + unitToDivider(unit) * multiplier;
  return { key: `${counterName}${start}`, counterName, windowStart: start, windowEnd };
}

/** The key of a token bucket's TAT: it has no window, and no window key ends in letters, so the two never meet. */
export const tokenBucketKey = (counterName: string): string => `${counterName}tb`;
