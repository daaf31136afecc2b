// Names of the rate limit service's statistics, as the reference's stats manager composes them, and the
// EXTRA_TAGS tags. Pure: no Workers imports (tested in plain Node).
import { sanitizeStatName } from "../core/stats";
import { err, ok, type Result } from "../../shared/result";

/** Per-rule counters, in the order RuleCounts stores them. */
export const RULE_STATS = [
  "total_hits",
  "over_limit",
  "near_limit",
  "within_limit",
  "shadow_mode",
  "over_limit_with_local_cache",
] as const;
export type RuleStat = (typeof RULE_STATS)[number];

/** A rule's counters, indexed like RULE_STATS. */
export type RuleCounts = number[];

export const RULE_STAT_PREFIX = "ratelimit.service.rate_limit.";
export const CONFIG_LOAD_SUCCESS = "ratelimit.service.config_load_success";
export const CONFIG_LOAD_ERROR = "ratelimit.service.config_load_error";
/** What the Durable Object counters did (COUNTER_OBJECT_STATS), each under this prefix. */
export const COUNTER_OBJECT_PREFIX = "ratelimit.durable_object.";
export const COUNTER_OBJECT_STATS = [
  "objects_started",
  "calls",
  "operations",
  "lookups",
  "rows_written",
  "rows_deleted",
  "commits",
  "leases_granted",
  "leases_returned",
  "leases_expired",
  "lease_units_lent",
] as const;

/** The spec leaves this name open; the reference calls it so. */
export const GLOBAL_SHADOW_MODE = "ratelimit.service.global_shadow_mode";

/** `ratelimit.service.rate_limit.<key>.<stat>`; the key (domain included) is already sanitised by the core. */
export const ruleStatName = (key: string, stat: RuleStat): string => `${RULE_STAT_PREFIX}${key}.${stat}`;

/** Descriptors sent for a domain that is not configured. */
export const domainNotFoundName = (domain: string): string =>
  `${RULE_STAT_PREFIX}${sanitizeStatName(domain)}.domain_not_found`;

/** Whether a counter is a domainNotFoundName (the service's other counters never have both ends). */
export const isDomainNotFoundName = (name: string): boolean =>
  name.startsWith(RULE_STAT_PREFIX) && name.endsWith(".domain_not_found");

/**
 * How many unknown domains get their own domain_not_found counter, in one isolate's flush and in the aggregate.
 * Anonymous callers choose the domain, so without a bound every request could add a name (up to 64 KiB) to the
 * service's one statistics object, which keeps it for good and returns every row on each read.
 */
export const MAX_UNKNOWN_DOMAIN_STATS = 100;

/** Where descriptors of unknown domains beyond MAX_UNKNOWN_DOMAIN_STATS count; no domain's name can spell it. */
export const DOMAIN_NOT_FOUND_OVERFLOW = "ratelimit.service.domain_not_found_overflow";

/**
 * How many rule keys of one domain get statistics of their own, in one isolate's flush and in the aggregate. Keys under
 * detailed_metric or value_to_metric, and those of limit overrides (which anonymous callers send), hold request values,
 * so without a bound each new value (a client's address, a made-up entry) would add a row that the domain's statistics
 * object keeps for good and returns on every read of /stats and /metrics.
 */
export const MAX_RULE_STATS_PER_DOMAIN = 1000;

/** Where a domain's rule keys beyond MAX_RULE_STATS_PER_DOMAIN count, all six statistics of each. */
export const ruleStatsOverflowKey = (domain: string): string => `${sanitizeStatName(domain)}.rule_stats_overflow`;

/**
 * `ratelimit.service.call.should_rate_limit.<error type>`: `service_error` for an unusable request or service state,
 * `redis_error` for a counter store failure (the reference's name, whatever the store, so its alerts keep working).
 */
export const shouldRateLimitErrorName = (kind: "service" | "store"): string =>
  `ratelimit.service.call.should_rate_limit.${kind === "store" ? "redis_error" : "service_error"}`;

export const totalRequestsName = (method: string): string => `ratelimit_server.${method}.total_requests`;
export const responseTimeName = (method: string): string => `ratelimit_server.${method}.response_time`;

export type Tags = [key: string, value: string][];

/**
 * Parses EXTRA_TAGS, `k1:v1,k2:v2` (the spec writes `<k1:v1>,<k2:v2>`; angle brackets are accepted). Returns the
 * tags sorted by key, or a message naming the bad entry by its place: a settings error reaches callers of /json, and
 * settings are named there, never their values.
 */
export function parseExtraTags(text: string): Result<Tags, string> {
  const tags: Tags = [];
  for (const [index, raw] of text.split(",").entries()) {
    const entry = raw.trim().replace(/^<(.*)>$/, "$1");
    if (entry === "") continue;
    const colon = entry.indexOf(":");
    if (colon <= 0 || colon === entry.length - 1) return err(`entry ${index + 1} is not key:value`);
    tags.push([entry.slice(0, colon).trim(), entry.slice(colon + 1).trim()]);
  }
  tags.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return ok(tags);
}

const NAME_UNSAFE = /[.:|]/g;

/**
 * A statsd name with its tags as the reference's stats library writes them into plain statsd names:
 * `name.__k1=v1.__k2=v2`, tags sorted by key, with `.`, `:` and `|` in keys and values turned into `_`.
 */
export function nameWithTags(name: string, tags: Tags): string {
  let result = name;
  for (const [key, value] of tags) result += `.__${key.replace(NAME_UNSAFE, "_")}=${value.replace(NAME_UNSAFE, "_")}`;
  return result;
}
