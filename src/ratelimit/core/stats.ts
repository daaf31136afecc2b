// Metric keys of rules and the per-request statistic deltas. The core only computes numbers; a later
// statistics layer adds them up and names them `ratelimit.service.rate_limit.<key>.<stat>`.

/** Counters the reference keeps per rule, as deltas produced by one request for one descriptor. */
export interface RuleStatDelta {
  /** Sanitised stats key, e.g. `domain.key_value.subkey`. */
  key: string;
  totalHits: number;
  overLimit: number;
  nearLimit: number;
  withinLimit: number;
  shadowMode: number;
  overLimitWithLocalCache: number;
}

/** Everything one request contributes to statistics. */
export interface RequestStats {
  /** One entry per descriptor counted against a limit, in request order (several may share a key). */
  rules: RuleStatDelta[];
  /** Descriptors looked up in a domain that is not configured (`<domain>.domain_not_found`). */
  domainNotFound: number;
  /** 1 when global shadow mode turned an OVER_LIMIT answer into OK (`global_shadow_mode`). */
  globalShadowMode: number;
}

/** How one request entry reached its config node. */
export type MatchKind = "exact" | "wildcard" | "default";

/** One level of a successful config walk, as needed to compose the metric key. */
export interface MatchedLevel {
  /** Request entry key and value. */
  key: string;
  value: string;
  /** Composite key of the config node that matched (`key`, `key_value` or a wildcard pattern). */
  composite: string;
  via: MatchKind;
  valueToMetric: boolean;
  /** Set when this level matched a share_threshold wildcard: the value pattern, `*` included. */
  sharedPattern?: string;
}

const IPV4 = /\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}/g;

/**
 * Makes a key safe as a stat name: `:` and `|` are separators in statsd lines, and the dots of an IPv4
 * address would split the stat path, so all become `_` (as the reference does).
 */
export function sanitizeStatName(key: string): string {
  return key.replace(/[:|]/g, "_").replace(IPV4, (ip) => ip.replace(/\./g, "_"));
}

/**
 * The most UTF-16 units of a rule's stats key (before a window's `.window_<n>`): keys under detailed_metric and
 * value_to_metric, and those of limit overrides, hold values the request chose, each up to RATELIMIT_MAX_VALUE_BYTES,
 * and each key is a row of the statistics aggregate. The counter key keeps them whole.
 */
export const MAX_STATS_KEY_LENGTH = 256;

/** A rule's stats key: its metric key cut after MAX_STATS_KEY_LENGTH (marked with `~`, never inside a pair), sanitised. */
export const statsKey = (metricKey: string): string =>
  sanitizeStatName(
    metricKey.length > MAX_STATS_KEY_LENGTH
      ? `${metricKey.slice(0, MAX_STATS_KEY_LENGTH).replace(/[\ud800-\udbff]$/, "")}~`
      : metricKey,
  );

function keyWithValue(key: string, value: string): string {
  return value === "" ? key : `${key}_${value}`;
}

/**
 * One level of a metric key without detailed_metric, as the reference's `valueToMetricFullKey` writes it: a
 * share_threshold level its key and pattern (`*` kept); another wildcard level its runtime value with value_to_metric,
 * else its key and its pattern after `key_`, so a key-only pattern (`path*` matched by `pathX`) or one straddling key
 * and value (`a_b*` matched by key `a_b`) is written whole after the request's key (`pathX_path*`, `a_b_a_b*`); an
 * exact match its key and value; a key-only match its key, with its value under value_to_metric.
 */
function metricLevel(level: MatchedLevel): string {
  if (level.sharedPattern !== undefined) return `${level.key}_${level.sharedPattern}`;
  if (level.via === "wildcard") {
    if (level.valueToMetric) return keyWithValue(level.key, level.value);
    const keyPrefix = `${level.key}_`;
    const pattern = level.composite.startsWith(keyPrefix) ? level.composite.slice(keyPrefix.length) : level.composite;
    return `${level.key}_${pattern}`;
  }
  if (level.via === "exact" || level.valueToMetric) return keyWithValue(level.key, level.value);
  return level.key;
}

/**
 * Composes the (unsanitised) metric key of a matched rule as the reference does:
 * - without detailed_metric, each level as `metricLevel` writes it (the config path where no flag or wildcard applies);
 * - detailed_metric on the matched rule: every level is `key_<runtime value>`, except when a level matched
 *   through share_threshold, where shared levels use their pattern (`*` kept) and the others `key[_value]`.
 */
export function composeMetricKey(domain: string, levels: MatchedLevel[], detailedMetric: boolean): string {
  let parts: string[];
  if (detailedMetric) {
    const shared = levels.some((level) => level.sharedPattern !== undefined);
    parts = levels.map((level) => {
      if (level.sharedPattern !== undefined) return `${level.key}_${level.sharedPattern}`;
      // Without sharing, the reference renders `key_` even for an empty value; with sharing it does not.
      return shared ? keyWithValue(level.key, level.value) : `${level.key}_${level.value}`;
    });
  } else {
    parts = levels.map(metricLevel);
  }
  return [domain, ...parts].join(".");
}

/** The metric key of a request-supplied limit override: the request's own entries. */
export function overrideMetricKey(domain: string, entries: { key: string; value: string }[]): string {
  return `${domain}.${entries.map((entry) => keyWithValue(entry.key, entry.value)).join(".")}`;
}

export function emptyRuleStats(key: string): RuleStatDelta {
  return {
    key,
    totalHits: 0,
    overLimit: 0,
    nearLimit: 0,
    withinLimit: 0,
    shadowMode: 0,
    overLimitWithLocalCache: 0,
  };
}

/** Counter values around one request's hits, and the thresholds they are judged by. */
export interface LimitInfo {
  before: number;
  after: number;
  overLimitThreshold: number;
  nearLimitThreshold: number;
}

/**
 * The near-limit threshold: floor(limit * ratio), computed in float32 like the reference so that the
 * boundary falls on the same request.
 */
export function nearLimitThreshold(limit: number, ratio: number): number {
  return Math.floor(Math.fround(Math.fround(limit) * Math.fround(ratio)));
}

/**
 * Over-limit accounting. Several hits may arrive at once, so only the part above the threshold counts
 * as over limit, and the part between the near threshold and the limit still counts as near limit.
 */
export function addOverLimitStats(stats: RuleStatDelta, info: LimitInfo, hits: number): void {
  if (info.before >= info.overLimitThreshold) {
    stats.overLimit += hits;
  } else {
    stats.overLimit += info.after - info.overLimitThreshold;
    stats.nearLimit += info.overLimitThreshold - Math.max(info.nearLimitThreshold, info.before);
  }
}

/** Within-limit accounting: only the hits above the near threshold count as near limit. */
export function addWithinLimitStats(stats: RuleStatDelta, info: LimitInfo, hits: number): void {
  if (info.after > info.nearLimitThreshold) {
    stats.nearLimit += info.before >= info.nearLimitThreshold ? hits : info.after - info.nearLimitThreshold;
  }
  stats.withinLimit += hits;
}

/** Shadow accounting: the hits a shadow rule let through although they were over the limit. */
export function addShadowModeStats(stats: RuleStatDelta, info: LimitInfo | undefined, hits: number): void {
  if (info === undefined || info.before >= info.overLimitThreshold) {
    stats.shadowMode += hits;
  } else {
    stats.shadowMode += info.after - info.overLimitThreshold;
  }
}
