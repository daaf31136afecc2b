// Finding the rule that applies to one request descriptor: the walk down the descriptor tree (exact value, then
// wildcard, then key alone), the wildcard matching it uses, and the limit it answers (metric key, shared values).
import type { ConfiguredRule, DescriptorLevel, MatchedLimit, RateLimitConfig, Wildcard } from "./config-model";
import { composeMetricKey, type MatchedLevel, type MatchKind, overrideMetricKey } from "./stats";
import type { RateLimitDescriptor } from "./types";
import { isKnownUnit, unitToDivider } from "./units";

/** Splits a composite key at its stars; undefined when it has none (then it only matches itself). */
export function wildcardOf(composite: string): Wildcard | undefined {
  return composite.includes("*") ? { composite, segments: composite.split("*") } : undefined;
}

/**
 * Whether `text` matches a wildcard: the first segment is a prefix, the last a suffix, and the ones between appear in
 * order without overlapping. Taking each middle segment at its first place is enough (a later place never leaves more
 * room), so the match is linear in the segments' searches and never backtracks.
 */
export function wildcardMatches({ segments }: Wildcard, text: string): boolean {
  const first = segments[0];
  const last = segments[segments.length - 1];
  if (text.length < first.length + last.length || !text.startsWith(first) || !text.endsWith(last)) return false;
  const end = text.length - last.length;
  let at = first.length;
  for (let i = 1; i < segments.length - 1; i++) {
    const found = text.indexOf(segments[i], at);
    if (found < 0 || found + segments[i].length > end) return false;
    at = found + segments[i].length;
  }
  return true;
}

export function hasDomain(config: RateLimitConfig, domain: string): boolean {
  return config.tree.has(domain);
}

/**
 * Finds the limit for one request descriptor.
 * - Unknown domain: none.
 * - A request-supplied override (with a known unit) applies as is, config matching is skipped.
 * - Otherwise the entries walk the tree one level each: `key_value`, then the first wildcard of the level
 *   whose prefix matches `key_value`, then `key` alone. A rule applies only at the last entry, so the
 *   request must be exactly as deep as the rule; an explicit `key_value` match never falls back to `key`.
 * An override with unit UNKNOWN is ignored here (it cannot name a window); the service refuses such
 * requests before calling this.
 */
export function getLimit(
  config: RateLimitConfig,
  domain: string,
  descriptor: RateLimitDescriptor,
): MatchedLimit | undefined {
  const root = config.tree.get(domain);
  if (root === undefined) return undefined;

  if (descriptor.limit !== undefined && isKnownUnit(descriptor.limit.unit)) {
    return {
      requestsPerUnit: descriptor.limit.requestsPerUnit,
      unit: descriptor.limit.unit,
      name: "",
      unlimited: false,
      shadowMode: false,
      replaces: [],
      metricKey: overrideMetricKey(domain, descriptor.entries),
      override: true,
      quotaMode: false,
      algorithm: "fixed_window",
      windowSeconds: unitToDivider(descriptor.limit.unit),
      unitMultiplier: 1,
      capacity: descriptor.limit.requestsPerUnit,
      emissionIntervalMicros: 0,
      lease: false,
    };
  }

  const entries = descriptor.entries;
  const levels: MatchedLevel[] = [];
  let level: DescriptorLevel = root;
  let found: ConfiguredRule | undefined;
  for (const [i, entry] of entries.entries()) {
    const finalKey = `${entry.key}_${entry.value}`;
    let via: MatchKind = "exact";
    let next = level.children.get(finalKey);
    if (next === undefined) {
      const wildcard = level.wildcards.find((pattern) => wildcardMatches(pattern, finalKey));
      if (wildcard !== undefined) {
        next = level.children.get(wildcard.composite);
        via = "wildcard";
      }
    }
    if (next === undefined) {
      next = level.children.get(entry.key);
      via = "default";
    }
    if (next === undefined) break;

    let sharedPattern: string | undefined;
    if (via === "wildcard" && next.shareThreshold) {
      const keyPrefix = `${entry.key}_`;
      sharedPattern = next.composite.startsWith(keyPrefix) ? next.composite.slice(keyPrefix.length) : next.composite;
    }
    levels.push({
      key: entry.key,
      value: entry.value,
      composite: next.composite,
      via,
      valueToMetric: next.valueToMetric,
      sharedPattern,
    });
    if (next.rule !== undefined && i === entries.length - 1) found = next.rule;
    if (next.children.size === 0) break;
    level = next;
  }
  if (found === undefined) return undefined;

  const shared = levels.some((l) => l.sharedPattern !== undefined);
  return {
    requestsPerUnit: found.requestsPerUnit,
    unit: found.unit,
    name: found.name,
    unlimited: found.unlimited,
    shadowMode: found.shadowMode,
    replaces: found.replaces,
    metricKey: composeMetricKey(domain, levels, found.detailedMetric),
    sharedValues: shared ? levels.map((l) => l.sharedPattern) : undefined,
    override: false,
    quotaMode: found.quotaMode,
    metadata: found.metadata,
    algorithm: found.algorithm,
    windowSeconds: found.windowSeconds,
    unitMultiplier: found.unitMultiplier,
    capacity: found.capacity,
    emissionIntervalMicros: found.emissionIntervalMicros,
    lease: found.lease,
  };
}
