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
  /**
   * Seconds until the current window ends (whole for fixed windows; a sliding window or token bucket may give a
   * fraction: the time until its next unit of quota frees); undefined when no counter was involved.
   */
  durationUntilResetSeconds?: number;
}

export interface HeaderValue {
  key: string;
  value: string;
}

/** A JSON value as a google.protobuf.Struct holds it. */
export type StructValue = null | boolean | number | string | StructValue[] | StructObject;

/** A google.protobuf.Struct: its fields by name. */
export type StructObject = { [key: string]: StructValue };

export interface RateLimitResponse {
  overallCode: Code;
  statuses: DescriptorStatus[];
  responseHeadersToAdd: HeaderValue[];
  /** With RESPONSE_DYNAMIC_METADATA: what the request asked and the metadata of the rules that passed. */
  dynamicMetadata?: StructObject;
}

/**
 * A sliding-window operation (the two-window weighted count): the hits are added to the current window's counter only
 * when `floor(previous × previousWeight) + current + hits` stays within `limit`, so a refused request costs nothing.
 */
export interface SlidingWindowOperation {
  kind: "sliding_window";
  /** The previous window's cache key: the same counter name, one window earlier. */
  previousKey: string;
  /** requests_per_unit of the rule. */
  limit: number;
  /** How much of the previous window's count still weighs now: 1 − elapsed / window, in [0, 1]. */
  previousWeight: number;
}

/**
 * A token-bucket operation, stored as GCRA: one theoretical arrival time (TAT) per key. The hits are taken only when
 * that many tokens are in the bucket.
 */
export interface TokenBucketOperation {
  kind: "token_bucket";
  /** Bucket size in tokens. */
  burst: number;
  /** Whole microseconds one token takes to come back (window ÷ requests_per_unit, rounded, at least 1). */
  emissionIntervalMicros: number;
  /** The caller's clock in whole microseconds. */
  nowMicros: number;
}

/** One window of a descriptor with several (a rule's `additional_limits`), as a windows operation carries it. */
export interface WindowSpec {
  /** The window's own key (each window of a descriptor has a distinct one, all under the descriptor's counter name). */
  key: string;
  windowEnd: number;
  windowSeconds: number;
  /** A fixed window admits while its count stays at most this (requests_per_unit). */
  limit: number;
  /** A sliding window or token bucket; absent for a fixed window. */
  algorithm?: SlidingWindowOperation | TokenBucketOperation;
}

/**
 * Several windows on one descriptor, applied as one step: the hits are added to every window only when every window
 * has room for them, so a refused hit takes nothing from any of them. Every window lives in the descriptor's object.
 */
export interface WindowsOperation {
  kind: "windows";
  windows: WindowSpec[];
}

export type CounterAlgorithmOperation = SlidingWindowOperation | TokenBucketOperation | WindowsOperation;

/**
 * One counter operation: add `hits` (0 = read only) to the counter `key`. Without `algorithm` it is a fixed-window
 * counter (the reference's INCRBY): the hits are always added and the reply is the count after them.
 */
export interface CounterIncrement {
  /** Full cache key: the counter name followed by the window start (or `tb` for a token bucket). */
  key: string;
  /** The cache key without its window part: names the counter's home (one Durable Object per rate-limit key). */
  counterName: string;
  hits: number;
  /** Unix seconds after which nothing reads this counter again, so the store may forget it. */
  windowEnd: number;
  /** How long the counter lives, in seconds: its window (twice it for a sliding window, which the next one reads). */
  windowSeconds: number;
  /**
   * The counter belongs to a per-second limit (unit SECOND, unit_multiplier 1), whatever its lifetime: the key-value
   * store keeps these in its per-second store when there is one. The limiter always sets it.
   */
  perSecond?: boolean;
  algorithm?: CounterAlgorithmOperation;
  /**
   * A fixed-window counter the store may answer from a leased share of its quota (the Durable Object store only; the
   * others ignore it), judged against `limit`. The reply is still the count after the hits.
   */
  lease?: { limit: number };
}

/** What the store answers for a sliding-window or token-bucket operation. */
export type SingleAlgorithmReply =
  | {
      kind: "sliding_window";
      /** Whether the hits were added. */
      admitted: boolean;
      /** The previous window's count (0 when absent). */
      previous: number;
      /** The current window's count after this operation. */
      current: number;
    }
  | {
      kind: "token_bucket";
      /** Whether the tokens were taken. */
      admitted: boolean;
      /** The bucket's TAT after this operation, never earlier than the operation's `nowMicros`. */
      tatMicros: number;
    };

/**
 * What the store answers for a windows operation: whether the hits were added (to all), and each window's state after
 * the operation: a fixed window's count, or its algorithm's reply (whose `admitted` is the operation's).
 */
export interface WindowsReply {
  kind: "windows";
  admitted: boolean;
  windows: (number | SingleAlgorithmReply)[];
}

/** What the store answers for an operation with an `algorithm`. */
export type AlgorithmReply = SingleAlgorithmReply | WindowsReply;

/** A fixed-window counter's value, or an algorithm operation's reply. */
export type CounterReply = number | AlgorithmReply;

/**
 * Where counters live. Implementations must be strongly consistent per key: concurrent operations on one key never
 * lose a hit, each caller sees the state right after its own operation, and an algorithm operation's check and update
 * happen as one step.
 */
export interface CounterStore {
  /** Applies each item in order and returns each reply, in order. */
  increment(items: CounterIncrement[]): Promise<CounterReply[]>;
  /** Returns each item's reply as if its hits were 0 (0 when a fixed counter is absent), without changing anything. */
  get(items: CounterIncrement[]): Promise<CounterReply[]>;
}

/**
 * A store failure callers may see part of: `shown` (the whole message unless given) holds nothing of the runtime, the
 * network or credentials: a text this service composed from its settings or the caller's own keys, or the server's own
 * error reply. Callers are told no more of any other failure than that the counter store failed; its message is logged.
 */
export class PublicStoreError extends Error {
  override name = "PublicStoreError";
  constructor(
    message: string,
    readonly shown = message,
  ) {
    super(message);
  }
}
