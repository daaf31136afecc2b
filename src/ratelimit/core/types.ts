// Shared types of the pure rate-limit core: the decoded request/response model (proto3 field
// semantics, camelCase) and the ports the core needs (counter store, clock-free: `now` is passed in).

/** Units a rule may use; numeric values follow envoy.service.ratelimit.v3.RateLimitResponse.RateLimit.Unit. */
export type Unit = "UNKNOWN" | "SECOND" | "MINUTE" | "HOUR" | "DAY" | "MONTH" | "YEAR" | "WEEK";

export type Code = "UNKNOWN" | "OK" | "OVER_LIMIT";

export interface DescriptorEntry {
  key: string;
  value: string;
}

/** Per-descriptor limit override sent by the caller (envoy.extensions.common.ratelimit.v3.RateLimitOverride). */
export interface LimitOverride {
  requestsPerUnit: number;
  unit: Unit;
}

export interface RateLimitDescriptor {
  entries: DescriptorEntry[];
  limit?: LimitOverride;
  /** UInt64Value: undefined when absent; an explicit 0 means "check without counting". */
  hitsAddend?: number;
}

export interface RateLimitRequest {
  domain: string;
  descriptors: RateLimitDescriptor[];
  /** 0 or absent means 1. */
  hitsAddend: number;
}

export interface RateLimit {
  name?: string;
  requestsPerUnit: number;
  unit: Unit;
}

export interface DescriptorStatus {
  code: Code;
  currentLimit?: RateLimit;
  limitRemaining: number;
  /** Seconds until the current window ends; undefined when no counter was involved. */
  durationUntilResetSeconds?: number;
}

export interface HeaderValue {
  key: string;
  value: string;
}

export interface RateLimitResponse {
  overallCode: Code;
  statuses: DescriptorStatus[];
  responseHeadersToAdd: HeaderValue[];
}

/** One counter operation: add `hits` (0 = read only) to the counter `key` of the window ending at `windowEnd`. */
export interface CounterIncrement {
  /** Full cache key, window start included (CACHE_KEY_PREFIX + domain + "_" + entries + window start). */
  key: string;
  /** The cache key without its window part: names the counter's home (one Durable Object per rate-limit key). */
  counterName: string;
  hits: number;
  /** Unix seconds at which this window ends; the store may forget the counter after that. */
  windowEnd: number;
}

/**
 * Where counters live. Implementations must be strongly consistent per key: concurrent increments
 * of one key never lose a hit and each caller sees the count right after its own increment.
 */
export interface CounterStore {
  /** Adds each item's hits and returns each counter's value after the addition, in order. */
  increment(items: CounterIncrement[]): Promise<number[]>;
  /** Returns the current value of each counter (0 when absent), in order, without changing it. */
  get(items: CounterIncrement[]): Promise<number[]>;
}
