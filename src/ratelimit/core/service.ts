// ShouldRateLimit: validates the request, finds each descriptor's limit, applies replaces and unlimited
// rules, runs the limiter and assembles the response (overall code, global shadow mode, headers).

import { getLimit, hasDomain, type MatchedLimit, type RateLimitConfig } from "./config";
import { doLimit } from "./limiter";
import type { LocalCache } from "./local-cache";
import { err, ok, type Result } from "./result";
import type { RequestStats } from "./stats";
import type { CounterStore, DescriptorStatus, HeaderValue, RateLimitRequest, RateLimitResponse } from "./types";
import { calculateReset, isKnownUnit } from "./units";

/** limitRemaining reported for unlimited rules: the largest uint32. */
export const UNLIMITED_REMAINING = 4294967295;

export interface ResponseHeaderNames {
  /** LIMIT_LIMIT_HEADER, e.g. RateLimit-Limit. */
  limit: string;
  /** LIMIT_REMAINING_HEADER, e.g. RateLimit-Remaining. */
  remaining: string;
  /** LIMIT_RESET_HEADER, e.g. RateLimit-Reset. */
  reset: string;
}

export interface ServiceSettings {
  /** SHADOW_MODE: never answer OVER_LIMIT overall (per-descriptor statuses are kept). */
  shadowMode: boolean;
  stopCacheKeyIncrementWhenOverlimit: boolean;
  nearLimitRatio: number;
  cacheKeyPrefix: string;
  /** Header names when LIMIT_RESPONSE_HEADERS_ENABLED, else undefined. */
  responseHeaders?: ResponseHeaderNames;
}

export interface ServiceDeps {
  /** The loaded configuration; undefined while none could be loaded. */
  config: RateLimitConfig | undefined;
  store: CounterStore;
  settings: ServiceSettings;
  /** Present when LOCAL_CACHE_SIZE_IN_BYTES > 0; lives as long as the isolate. */
  localCache?: LocalCache;
}

/**
 * A failed call. `service`: the request or the service state is unusable (the reference's serviceError);
 * `store`: the counter store failed (the reference's redis_error).
 */
export interface ServiceError {
  kind: "service" | "store";
  message: string;
}

export interface Decision {
  response: RateLimitResponse;
  stats: RequestStats;
}

function serviceError(message: string): { ok: false; error: ServiceError } {
  return err({ kind: "service", message });
}

/** Checks the request's shape; the reference's messages where it has them. */
function validateRequest(request: RateLimitRequest): string | undefined {
  if (request.domain === "") return "rate limit domain must not be empty";
  if (request.descriptors.length === 0) return "rate limit descriptor list must not be empty";
  // The reference panics on an override without a unit; refusing the request is the safe equivalent.
  const index = request.descriptors.findIndex((d) => d.limit !== undefined && !isKnownUnit(d.limit.unit));
  if (index >= 0) return `descriptor ${index}: limit override needs a unit`;
  return undefined;
}

/**
 * Picks the status the headers describe: the one with the fewest remaining requests (first wins on ties),
 * except that every OVER_LIMIT status takes over as it is visited (so the last one wins). Statuses
 * without a limit (no match, unlimited, replaced) never qualify.
 */
function responseHeaders(statuses: DescriptorStatus[], names: ResponseHeaderNames, now: number): HeaderValue[] {
  let chosen: DescriptorStatus | undefined;
  for (const status of statuses) {
    if (status.currentLimit === undefined) continue;
    if (chosen === undefined || status.limitRemaining < chosen.limitRemaining) chosen = status;
    if (status.code === "OVER_LIMIT") chosen = status;
  }
  const limit = chosen?.currentLimit;
  if (chosen === undefined || limit === undefined || !isKnownUnit(limit.unit)) return [];
  return [
    { key: names.limit, value: String(limit.requestsPerUnit) },
    { key: names.remaining, value: String(chosen.limitRemaining) },
    { key: names.reset, value: String(calculateReset(limit.unit, now)) },
  ];
}

/**
 * Decides one rate limit request.
 * @param deps configuration snapshot, counter store, settings and the optional local over-limit cache.
 * @param request the decoded request.
 * @param now unix seconds; all windows and resets are computed from it.
 * @returns the response and its stat deltas, or a ServiceError value (never throws for bad input or a
 *   failing store).
 */
export async function shouldRateLimit(
  deps: ServiceDeps,
  request: RateLimitRequest,
  now: number,
): Promise<Result<Decision, ServiceError>> {
  const invalid = validateRequest(request);
  if (invalid !== undefined) return serviceError(invalid);
  const config = deps.config;
  if (config === undefined) return serviceError("no rate limit configuration loaded");

  const found = request.descriptors.map((descriptor) => getLimit(config, request.domain, descriptor));
  const domainNotFound = hasDomain(config, request.domain) ? 0 : request.descriptors.length;

  // Replacing is request-scoped: a named rule drops out when any matched rule (even an unlimited one, even
  // one that is itself replaced) lists its name.
  const replaced = new Set(found.flatMap((limit) => limit?.replaces ?? []));
  const applied = found.map((limit) => (limit !== undefined && replaced.has(limit.name) ? undefined : limit));
  const counted = applied.map((limit): MatchedLimit | undefined => (limit?.unlimited ? undefined : limit));

  // A descriptor's own hitsAddend (0 included) wins; the request's applies otherwise, 0 meaning 1.
  const requestHits = Math.max(1, request.hitsAddend || 0);
  const hits = request.descriptors.map((descriptor) => descriptor.hitsAddend ?? requestHits);

  const limited = await doLimit(
    deps.store,
    deps.settings,
    { domain: request.domain, descriptors: request.descriptors, limits: counted, hits },
    now,
    deps.localCache,
  );
  if (!limited.ok) return err({ kind: "store", message: limited.error.message });

  const statuses = limited.value.statuses.map((status, i): DescriptorStatus =>
    applied[i]?.unlimited ? { code: "OK", limitRemaining: UNLIMITED_REMAINING } : status,
  );
  let overallCode: RateLimitResponse["overallCode"] = statuses.some((s) => s.code === "OVER_LIMIT")
    ? "OVER_LIMIT"
    : "OK";
  let globalShadowMode = 0;
  if (overallCode === "OVER_LIMIT" && deps.settings.shadowMode) {
    overallCode = "OK";
    globalShadowMode = 1;
  }
  const names = deps.settings.responseHeaders;
  return ok({
    response: {
      overallCode,
      statuses,
      responseHeadersToAdd: names === undefined ? [] : responseHeaders(statuses, names, now),
    },
    stats: { rules: limited.value.rules, domainNotFound, globalShadowMode },
  });
}
