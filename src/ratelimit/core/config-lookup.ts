// Finding the rule that applies to one request descriptor: the walk down the descriptor tree (exact value, then
// wildcard, then key alone), the wildcard matching it uses, and the limit it answers (metric key, shared values).
import type { ConfiguredRule, DescriptorLevel, MatchedLimit, RateLimitConfig, Wildcard } from "./config-model";
import { composeMetricKey, type MatchedLevel, type MatchKind, overrideMetricKey } from "./stats";
import type { RateLimitDescriptor } from "./types";
import { isKnownUnit, type KnownUnit, unitToDivider } from "./units";

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
    const metricKey = overrideMetricKey(domain, descriptor.entries);
    return matchedLimit(overrideRule(descriptor.limit.requestsPerUnit, descriptor.limit.unit), {
      metricKey,
      override: true,
    });
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
  return matchedLimit(found, {
    path: found.fullKey,
    metricKey: composeMetricKey(domain, levels, found.detailedMetric),
    sharedValues: shared ? levels.map((l) => l.sharedPattern) : undefined,
    override: false,
  });
}

/** What a limit takes from the rule that gave it. */
type RuleFields = Pick<
  ConfiguredRule,
  | "requestsPerUnit"
  | "unit"
  | "name"
  | "unlimited"
  | "shadowMode"
  | "replaces"
  | "quotaMode"
  | "metadata"
  | "algorithm"
  | "windowSeconds"
  | "unitMultiplier"
  | "capacity"
  | "emissionIntervalMicros"
  | "lease"
  | "additional"
>;

/** Where a limit matched: its metric key, the shared values of its cache key, whether the request gave it. */
type MatchPlace = Pick<MatchedLimit, "metricKey" | "sharedValues" | "override" | "path">;

/** The one place a MatchedLimit is made: the rule's fields, then where it matched. */
function matchedLimit(rule: RuleFields, place: MatchPlace): MatchedLimit {
  return {
    requestsPerUnit: rule.requestsPerUnit,
    unit: rule.unit,
    name: rule.name,
    unlimited: rule.unlimited,
    shadowMode: rule.shadowMode,
    replaces: rule.replaces,
    metricKey: place.metricKey,
    sharedValues: place.sharedValues,
    override: place.override,
    quotaMode: rule.quotaMode,
    metadata: rule.metadata,
    algorithm: rule.algorithm,
    windowSeconds: rule.windowSeconds,
    unitMultiplier: rule.unitMultiplier,
    capacity: rule.capacity,
    emissionIntervalMicros: rule.emissionIntervalMicros,
    lease: rule.lease,
    ...(rule.additional && { additional: rule.additional }),
    ...(place.path !== undefined && { path: place.path }),
  };
}

/** A request's own limit as a rule: an unnamed fixed window of one unit, never leased, with no metadata. */
function overrideRule(requestsPerUnit: number, unit: KnownUnit): RuleFields {
  return {
    requestsPerUnit,
    unit,
    name: "",
    unlimited: false,
    shadowMode: false,
    replaces: [],
    quotaMode: false,
    algorithm: "fixed_window",
    windowSeconds: unitToDivider(unit),
    unitMultiplier: 1,
    capacity: requestsPerUnit,
    emissionIntervalMicros: 0,
    lease: false,
  };
}
