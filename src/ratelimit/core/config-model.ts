// The loaded rate limit configuration's shape: the validated rules and descriptor tree that loading builds (config.ts),
// lookup walks (config-lookup.ts) and the dump prints (config-dump.ts), the limit a descriptor matches, and the
// failure loading throws.
import type { Algorithm } from "./algorithms";
import type { ConfigLimits } from "./limits";
import type { StructObject, Unit } from "./types";

/** Thrown while a set is loaded, to unwind a recursive walk; loadConfig turns it into a ConfigError. */
export class ConfigFailure extends Error {}

/** A YAML `rate_limit` block after validation. */
export interface ConfiguredRule {
  requestsPerUnit: number;
  /** UNKNOWN only for unlimited rules. */
  unit: Unit;
  unlimited: boolean;
  shadowMode: boolean;
  /** `rate_limit.name`; empty when unnamed. */
  name: string;
  replaces: readonly string[];
  detailedMetric: boolean;
  /** quota_mode of the descriptor: its OVER_LIMIT fails the request only with every other quota descriptor's. */
  quotaMode: boolean;
  /** The descriptor's metadata, merged into the response's dynamic metadata when the descriptor passes. */
  metadata?: StructObject;
  /** Config path of the rule, e.g. `domain.key_value.subkey`: the default metric key and the dump key. */
  fullKey: string;
  algorithm: Algorithm;
  /** The window (or refill period) is this many units. */
  unitMultiplier: number;
  /** token_bucket: the bucket size; requests_per_unit otherwise. */
  burst: number;
  /** unit × unit_multiplier in seconds; 0 for an unlimited rule. */
  windowSeconds: number;
  /** The most the counter admits at once: requests_per_unit, or a token bucket's burst. */
  capacity: number;
  /** token_bucket: whole microseconds one token takes to come back (at least 1); 0 otherwise. */
  emissionIntervalMicros: number;
  /** `lease: true` (fixed window only): the Durable Object store may answer it from leased shares. */
  lease: boolean;
  /** The descriptor's `additional_limits`: further windows a hit must also fit in; absent when none. */
  additional?: readonly RuleWindow[];
}

/** One window of a rule: `rate_limit`'s counting fields, or one of `additional_limits`. */
export type RuleWindow = Pick<
  ConfiguredRule,
  "requestsPerUnit" | "unit" | "algorithm" | "unitMultiplier" | "windowSeconds" | "capacity" | "emissionIntervalMicros"
>;

/** One YAML descriptor after validation. */
export interface DescriptorNode extends DescriptorLevel {
  key: string;
  value: string;
  /** `key`, or `key_value` when a value is configured: the lookup key at its level. */
  composite: string;
  rule?: ConfiguredRule;
  shadowMode: boolean;
  detailedMetric: boolean;
  valueToMetric: boolean;
  shareThreshold: boolean;
}

/** What a domain and a descriptor have in common: children to match the next request entry against. */
export interface DescriptorLevel {
  children: Map<string, DescriptorNode>;
  /** Children in config order (the dump and merged files keep it). */
  ordered: DescriptorNode[];
  /** Children whose composite key holds a `*`, in config order: the first that matches wins. */
  wildcards: Wildcard[];
}

/** A wildcard composite key, split at its stars: each `*` matches any run of characters, both ends anchored. */
export interface Wildcard {
  composite: string;
  segments: string[];
}

export interface RateLimitConfig {
  /** Domain names in the order they were first loaded. */
  readonly domains: readonly string[];
  readonly tree: ReadonlyMap<string, DescriptorLevel>;
}

export interface ConfigError {
  /** `<file name>: <message>`, as the reference words it. */
  message: string;
  file: string;
}

export interface ConfigFile {
  name: string;
  text: string;
}

export interface LoadOptions {
  /** MERGE_DOMAIN_CONFIG: several files may declare one domain (their top-level descriptors are merged). */
  mergeDomainConfig: boolean;
  /**
   * Set when the counter store cannot run the algorithms beyond the fixed window atomically (the object cache): a
   * rule asking for one is refused, and this names the setting that chose that store.
   */
  fixedWindowOnly?: string;
  /** RATELIMIT_STRICT_UPSTREAM_CONFIG: refuse this project's keys (`algorithm`, ...) as unknown, as upstream does. */
  strictUpstream?: boolean;
  /** File size, nesting and alias limits; the settings' defaults when not given. */
  limits?: ConfigLimits;
}

/** The limit that applies to one request descriptor. */
export interface MatchedLimit {
  requestsPerUnit: number;
  unit: Unit;
  /** Rule name, copied into the response's currentLimit; empty when unnamed. */
  name: string;
  unlimited: boolean;
  shadowMode: boolean;
  replaces: readonly string[];
  /** Unsanitised metric key (detailed_metric, value_to_metric and share_threshold applied). */
  metricKey: string;
  /** Per request entry, the share_threshold pattern to use in the cache key instead of the runtime value. */
  sharedValues?: (string | undefined)[];
  /** True when the limit came from the request's own override rather than the config. */
  override: boolean;
  quotaMode: boolean;
  metadata?: StructObject;
  algorithm: Algorithm;
  /** The window (or a token bucket's refill period) in seconds: unit × unit_multiplier. */
  windowSeconds: number;
  /** unit_multiplier: `windowSeconds` is this many units. */
  unitMultiplier: number;
  /** The most the counter admits at once: requests_per_unit, or a token bucket's burst. */
  capacity: number;
  /** token_bucket: whole microseconds one token takes to come back (at least 1); 0 otherwise. */
  emissionIntervalMicros: number;
  /** The rule's `lease: true`; false for a request's own override. */
  lease: boolean;
  /** The rule's additional windows (`additional_limits`); absent when none. */
  additional?: readonly RuleWindow[];
  /** The config path of the rule that matched (`domain.key_value...`); absent for a request's own override. */
  path?: string;
}
