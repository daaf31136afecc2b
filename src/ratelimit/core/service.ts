// ShouldRateLimit: validates the request, finds each descriptor's limit, applies replaces and unlimited
// rules, runs the limiter and assembles the response (overall code, global shadow mode, headers).

import { getLimit, hasDomain, type MatchedLimit, type RateLimitConfig } from "./config";
import { doLimit, type LeaseMode } from "./limiter";
import type { LocalCache } from "./local-cache";
import { err, ok, type Err, type Result } from "../../shared/result";
import type { RequestStats } from "./stats";
import type {
  CounterStore,
  DescriptorStatus,
  HeaderValue,
  RateLimitRequest,
  RateLimitResponse,
  StructObject,
  StructValue,
} from "./types";
import { explainDecision } from "./explain";
import { ietfHeaders } from "./ietf-headers";
import { isKnownUnit } from "./units";

/** limitRemaining reported for unlimited rules: the largest uint32. */
export const UNLIMITED_REMAINING = 4294967295;

export interface ResponseHeaderNames {
  /** LIMIT_LIMIT_HEADER, e.g. RateLimit-Limit. */
  limit: string;
  /** LIMIT_REMAINING_HEADER, e.g. RateLimit-Remaining. */
  remaining: string;
  /** LIMIT_RESET_HEADER, e.g. RateLimit-Reset. */
  reset: string;
  /**
   * LIMIT_RESPONSE_HEADERS_FORMAT: `draft03` (the reference's three headers, named above; the default) or `ietf`
   * (RateLimit-Policy and RateLimit, ietf-headers.ts).
   */
  format?: "draft03" | "ietf";
}

export interface ServiceSettings {
  /** SHADOW_MODE: never answer OVER_LIMIT overall (per-descriptor statuses are kept). */
  shadowMode: boolean;
  /** QUOTA_MODE: every descriptor that is not unlimited is a quota descriptor. */
  quotaMode?: boolean;
  /** RESPONSE_DYNAMIC_METADATA: answer the request and the passing rules' metadata in `dynamicMetadata`. */
  dynamicMetadata?: boolean;
  /** RESPONSE_DYNAMIC_METADATA_OVER_LIMIT: `dynamicMetadata` also lists the descriptors that were over. */
  overLimitMetadata?: boolean;
  stopCacheKeyIncrementWhenOverlimit: boolean;
  nearLimitRatio: number;
  cacheKeyPrefix: string;
  /** Header names when LIMIT_RESPONSE_HEADERS_ENABLED, else undefined. */
  responseHeaders?: ResponseHeaderNames;
  /** Which fixed-window counters the store may answer from leased shares (see LimiterSettings). */
  leases?: LeaseMode;
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
  /** What callers may see of a store failure (see PublicStoreError); absent, nothing. */
  shown?: string;
}

export interface Decision {
  response: RateLimitResponse;
  stats: RequestStats;
  /** With `explain`: why each descriptor was answered as it was (explain.ts). */
  explain?: StructObject[];
}

function serviceError(message: string): Err<ServiceError> {
  return err({ kind: "service", message });
}

/** Checks the request's shape; the reference's messages where it has them. */
function validateRequest(request: RateLimitRequest): string | undefined {
  if (request.domain === "") return "rate limit domain must not be empty";
  if (request.descriptors.length === 0) return "rate limit descriptor list must not be empty";
  return undefined;
}

const NO_CONFIG = "no rate limit configuration loaded";

/** Why a request cannot be decided, checked in the reference's order; undefined when it can be. */
function refusal(request: RateLimitRequest, config: RateLimitConfig | undefined): string | undefined {
  const invalid = validateRequest(request);
  if (invalid !== undefined) return invalid;
  if (config === undefined) return NO_CONFIG;
  return hasDomain(config, request.domain) ? overrideWithoutUnit(request) : undefined;
}

/**
 * An override without a unit, on a known domain. The reference panics on one; refusing the request is the safe
 * equivalent. It never reads an override of a domain it does not know (every descriptor is then OK), nor does this.
 */
function overrideWithoutUnit(request: RateLimitRequest): string | undefined {
  const index = request.descriptors.findIndex((d) => d.limit !== undefined && !isKnownUnit(d.limit.unit));
  return index >= 0 ? `descriptor ${index}: limit override needs a unit` : undefined;
}

/**
 * Picks the status the headers describe: the one with the fewest remaining requests (first wins on ties),
 * except that every OVER_LIMIT status of a descriptor that is not a quota takes over as it is visited (so the last
 * one wins). Statuses without a limit (no match, unlimited, replaced) never qualify. The reset is the status's own,
 * rounded up to whole seconds (a token bucket's next token may be a fraction of one away).
 */
function responseHeaders(
  statuses: DescriptorStatus[],
  quota: boolean[],
  names: ResponseHeaderNames,
  applied: readonly (MatchedLimit | undefined)[],
): HeaderValue[] {
  let chosen: DescriptorStatus | undefined;
  let at = -1;
  statuses.forEach((status, i) => {
    if (status.currentLimit === undefined) return;
    if (chosen === undefined || status.limitRemaining < chosen.limitRemaining) [chosen, at] = [status, i];
    if (status.code === "OVER_LIMIT" && !quota[i]) [chosen, at] = [status, i];
  });
  const limit = chosen?.currentLimit;
  if (chosen === undefined || limit === undefined || !isKnownUnit(limit.unit)) return [];
  if (names.format === "ietf") return ietfHeaders(chosen, applied[at]);
  return [
    { key: names.limit, value: String(limit.requestsPerUnit) },
    { key: names.remaining, value: String(chosen.limitRemaining) },
    { key: names.reset, value: String(Math.ceil(chosen.durationUntilResetSeconds ?? 0)) },
  ];
}

const isStructObject = (value: StructValue | undefined): value is StructObject =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** Sets an own property, so that a key such as `__proto__` from a config file stays an ordinary key. */
function setOwn(target: StructObject, key: string, value: StructValue): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** Merges `source` into `target`: maps merge key by key, and otherwise the value already there wins. */
function mergeFirstWins(target: StructObject, source: StructObject): void {
  for (const [key, value] of Object.entries(source)) {
    const present = Object.hasOwn(target, key) ? target[key] : undefined;
    if (present === undefined) setOwn(target, key, isStructObject(value) ? structuredClone(value) : value);
    else if (isStructObject(present) && isStructObject(value)) mergeFirstWins(present, value);
  }
}

/** A limit override as Go's proto text renders it (zero fields left out). */
function overrideText(limit: { requestsPerUnit: number; unit: string }): string {
  const parts = [];
  if (limit.requestsPerUnit !== 0) parts.push(`requests_per_unit:${limit.requestsPerUnit}`);
  if (limit.unit !== "UNKNOWN") parts.push(`unit:${limit.unit}`);
  return parts.join(" ");
}

/**
 * The response's dynamic metadata: the domain, each descriptor as asked (entries as `key=value`, its override and
 * hits), the request's hits when given, and the metadata of the rules whose descriptors passed, merged in request
 * order with the first value winning. `applied` holds the limits that took part (no unlimited or replaced rule, whose
 * metadata the reference leaves out although both answer OK); a descriptor passed when its status is OK.
 */
function dynamicMetadata(
  request: RateLimitRequest,
  applied: readonly (MatchedLimit | undefined)[],
  statuses: DescriptorStatus[],
  overLimit: boolean,
): StructObject {
  const descriptors = request.descriptors.map((descriptor) => {
    const out: StructObject = { entries: descriptor.entries.map((entry) => `${entry.key}=${entry.value}`) };
    if (descriptor.limit !== undefined) out.limit = overrideText(descriptor.limit);
    if (descriptor.hitsAddend !== undefined) out.hitsAddend = descriptor.hitsAddend;
    return out;
  });
  const result: StructObject = { domain: request.domain, descriptors };
  if (request.hitsAddend !== 0) result.hitsAddend = request.hitsAddend;
  const metadata: StructObject = {};
  applied.forEach((limit, i) => {
    if (limit?.metadata !== undefined && statuses[i].code === "OK") mergeFirstWins(metadata, limit.metadata);
  });
  if (Object.keys(metadata).length > 0) result.metadata = metadata;
  // Which descriptors were over, so that Envoy can log the one that tripped (absent when none was).
  const over = statuses.flatMap((status, index) =>
    status.code === "OVER_LIMIT" ? [{ index, entries: descriptors[index].entries }] : [],
  );
  if (overLimit && over.length > 0) result.overLimit = over;
  return result;
}

/**
 * The overall code: OVER_LIMIT when a descriptor that is not a quota is over, or when there are quota descriptors and
 * every one of them is over.
 */
function overallCodeOf(statuses: DescriptorStatus[], quota: boolean[]): RateLimitResponse["overallCode"] {
  let quotaCount = 0;
  let quotaOver = 0;
  for (const [i, status] of statuses.entries()) {
    const over = status.code === "OVER_LIMIT";
    if (!quota[i] && over) return "OVER_LIMIT";
    if (quota[i]) {
      quotaCount++;
      if (over) quotaOver++;
    }
  }
  return quotaCount > 0 && quotaOver === quotaCount ? "OVER_LIMIT" : "OK";
}

/**
 * Decides one rate limit request.
 * @param deps configuration snapshot, counter store, settings and the optional local over-limit cache.
 * @param request the decoded request.
 * @param now unix seconds, fractional (a sliding window weighs its previous window by it, a token bucket refills by
 *   it); fixed windows and their resets use the whole second.
 * @returns the response and its stat deltas, or a ServiceError value (never throws for bad input or a
 *   failing store).
 */
export async function shouldRateLimit(
  deps: ServiceDeps,
  request: RateLimitRequest,
  now: number,
  options: { explain?: boolean } = {},
): Promise<Result<Decision, ServiceError>> {
  const config = deps.config;
  const refused = refusal(request, config);
  if (refused !== undefined || config === undefined) return serviceError(refused ?? NO_CONFIG);

  const domainKnown = hasDomain(config, request.domain);
  const found = request.descriptors.map((descriptor) => getLimit(config, request.domain, descriptor));
  const domainNotFound = domainKnown ? 0 : request.descriptors.length;

  // Replacing is request-scoped: a named rule drops out when any matched rule (even an unlimited one, even
  // one that is itself replaced) lists its name. As in the reference, an unlimited rule is set aside first: it
  // answers as unlimited even when another rule replaces it, and it never counts, nor passes, nor gives metadata.
  const replaced = new Set(found.flatMap((limit) => limit?.replaces ?? []));
  const unlimited = found.map((limit) => limit?.unlimited === true);
  const applied = found.map((limit): MatchedLimit | undefined =>
    limit === undefined || limit.unlimited || replaced.has(limit.name) ? undefined : limit,
  );

  // A descriptor's own hitsAddend (0 included) wins; the request's applies otherwise, 0 meaning 1.
  const requestHits = Math.max(1, request.hitsAddend || 0);
  const hits = request.descriptors.map((descriptor) => descriptor.hitsAddend ?? requestHits);

  const limited = await doLimit(
    deps.store,
    deps.settings,
    { domain: request.domain, descriptors: request.descriptors, limits: applied, hits },
    now,
    deps.localCache,
  );
  if (!limited.ok) return err({ kind: "store", ...limited.error });

  const statuses = limited.value.statuses.map((status, i): DescriptorStatus =>
    unlimited[i] ? { code: "OK", limitRemaining: UNLIMITED_REMAINING } : status,
  );
  // QUOTA_MODE makes every descriptor that is not unlimited a quota descriptor, even one without a limit.
  const quota = applied.map(
    (limit, i) => !unlimited[i] && (deps.settings.quotaMode === true || limit?.quotaMode === true),
  );
  let overallCode = overallCodeOf(statuses, quota);
  let globalShadowMode = 0;
  if (overallCode === "OVER_LIMIT" && deps.settings.shadowMode) {
    overallCode = "OK";
    globalShadowMode = 1;
  }
  const names = deps.settings.responseHeaders;
  const response: RateLimitResponse = {
    overallCode,
    statuses,
    responseHeadersToAdd: names === undefined ? [] : responseHeaders(statuses, quota, names, applied),
  };
  if (deps.settings.dynamicMetadata)
    response.dynamicMetadata = dynamicMetadata(request, applied, statuses, deps.settings.overLimitMetadata === true);
  const decision: Decision = { response, stats: { rules: limited.value.rules, domainNotFound, globalShadowMode } };
  if (options.explain) {
    decision.explain = explainDecision({ request, domainKnown, found, replaced, counts: limited.value.counts });
  }
  return ok(decision);
}
