// Rate limit configuration: loads and validates the YAML files (messages in the reference's words, prefixed
// with the file name; each file is read by config-yaml.ts), finds the rule that applies to a request descriptor, and dumps the loaded rules.

import { type Algorithm, ALGORITHMS } from "./algorithms";
import {
  type AliasBudget,
  ConfigFailure,
  fileToYaml,
  type YamlDescriptor,
  type YamlNumber,
  type YamlRateLimit,
  type YamlRoot,
} from "./config-yaml";
import { DEFAULT_CONFIG_LIMITS, limitText, utf8Length, type ConfigLimits } from "./limits";
import { err, ok, type Result } from "./result";
import { composeMetricKey, type MatchedLevel, type MatchKind, overrideMetricKey } from "./stats";
import type { RateLimitDescriptor, StructObject, Unit } from "./types";
import { isKnownUnit, type KnownUnit, parseUnit, unitToDivider } from "./units";

// ─── Public model ───────────────────────────────────────────────────────────────────────────────

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
}

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
interface Wildcard {
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
}

// ─── Building the tree ──────────────────────────────────────────────────────────────────────────

function newLevel(): DescriptorLevel {
  return { children: new Map(), ordered: [], wildcards: [] };
}

/** The most units one window may span, and the largest bucket (a uint32, as requests_per_unit). */
const MAX_UNIT_MULTIPLIER = 1_000_000;
const MAX_BURST = 4_294_967_295;

/**
 * The longest window, and the longest a token bucket may take to refill from empty (burst × window ÷
 * requests_per_unit): 100 years of 365 days. Every window then ends (at most two windows after now, for a sliding
 * window) far within what a Date holds (8.64e15 ms), and every TAT (now plus at most the refill time and half a µs per
 * token of rounding, in µs) stays an exact integer, below 2^53 µs, until the year 2155.
 */
const MAX_SPAN_SECONDS = 100 * unitToDivider("YEAR");

/** An integer of our own keys, within 1..max, or the refusal naming the field. */
function ownInteger(field: string, given: YamlNumber | undefined, fallback: number, max: number): number {
  if (given === undefined) return fallback;
  const n = given.integer;
  if (n === undefined || n < 1 || n > max) {
    throw new ConfigFailure(`rate_limit.${field} must be an integer from 1 to ${max}, but found '${given.text}'`);
  }
  return n;
}

/** The emission interval of a token bucket refilling `requestsPerUnit` tokens per window, in whole µs (at least 1). */
const emissionIntervalOf = (windowSeconds: number, requestsPerUnit: number): number =>
  Math.max(1, Math.round((windowSeconds * 1_000_000) / requestsPerUnit));

/**
 * The algorithm fields of a rule, checked (these keys are ours: the reference has only fixed windows), and what they
 * derive: the window, the capacity and a token bucket's emission interval. `unit` is undefined for an unlimited rule.
 */
function buildAlgorithm(
  config: YamlRateLimit,
  unit: KnownUnit | undefined,
): Pick<
  ConfiguredRule,
  "algorithm" | "unitMultiplier" | "burst" | "windowSeconds" | "capacity" | "emissionIntervalMicros"
> {
  const algorithm = (config.algorithm === "" ? "fixed_window" : config.algorithm) as Algorithm;
  if (!ALGORITHMS.includes(algorithm)) {
    throw new ConfigFailure(`rate_limit.algorithm '${config.algorithm}' is not one of ${ALGORITHMS.join(", ")}`);
  }
  const unitMultiplier = ownInteger("unit_multiplier", config.unitMultiplier, 1, MAX_UNIT_MULTIPLIER);
  if (config.burst !== undefined && algorithm !== "token_bucket") {
    throw new ConfigFailure(`rate_limit.burst is only for algorithm token_bucket, not ${algorithm}`);
  }
  if (algorithm === "token_bucket" && !config.unlimited && config.requestsPerUnit < 1) {
    throw new ConfigFailure("rate_limit.requests_per_unit must be at least 1 for algorithm token_bucket");
  }
  const burst = ownInteger("burst", config.burst, config.requestsPerUnit, MAX_BURST);
  const windowSeconds = unit === undefined ? 0 : unitToDivider(unit) * unitMultiplier;
  if (windowSeconds > MAX_SPAN_SECONDS) {
    throw new ConfigFailure(
      `rate_limit.unit_multiplier ${unitMultiplier} makes a window of ${windowSeconds} seconds, ` +
        `more than 100 years (${MAX_SPAN_SECONDS} seconds)`,
    );
  }
  let emissionIntervalMicros = 0;
  if (algorithm === "token_bucket" && unit !== undefined) {
    // burst × window ÷ requests_per_unit, compared exactly (the products may pass 2^53); the default burst always fits.
    if (BigInt(burst) * BigInt(windowSeconds) > BigInt(MAX_SPAN_SECONDS) * BigInt(config.requestsPerUnit)) {
      throw new ConfigFailure(
        `rate_limit.burst ${burst} takes more than 100 years to refill from empty at ` +
          `${config.requestsPerUnit} per ${windowSeconds} seconds`,
      );
    }
    emissionIntervalMicros = emissionIntervalOf(windowSeconds, config.requestsPerUnit);
  }
  const capacity = algorithm === "token_bucket" ? burst : config.requestsPerUnit;
  return { algorithm, unitMultiplier, burst, windowSeconds, capacity, emissionIntervalMicros };
}

function buildRule(config: YamlRateLimit, descriptor: YamlDescriptor, fullKey: string): ConfiguredRule {
  const unit = parseUnit(config.unit);
  if (config.unlimited) {
    if (unit !== undefined) throw new ConfigFailure("should not specify rate limit unit when unlimited");
  } else if (unit === undefined) {
    throw new ConfigFailure(`invalid rate limit unit '${config.unit}'`);
  }
  for (const replaces of config.replaces) {
    if (replaces.name === "") throw new ConfigFailure("should not have an empty replaces entry");
    if (replaces.name === config.name) {
      throw new ConfigFailure("replaces should not contain name of same descriptor");
    }
  }
  return {
    requestsPerUnit: config.requestsPerUnit,
    unit: unit ?? "UNKNOWN",
    unlimited: config.unlimited,
    shadowMode: descriptor.shadowMode,
    name: config.name,
    replaces: config.replaces.map((replaces) => replaces.name),
    detailedMetric: descriptor.detailedMetric,
    quotaMode: descriptor.quotaMode,
    fullKey,
    ...buildAlgorithm(config, unit),
  };
}

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

/** Adds descriptors to a level depth-first in file order, checking each as the reference does. */
function loadDescriptors(
  level: DescriptorLevel,
  parentKey: string,
  descriptors: YamlDescriptor[],
  options: LoadOptions,
): void {
  for (const descriptor of descriptors) {
    if (descriptor.key === "") throw new ConfigFailure("descriptor has empty key");
    const composite = descriptor.value === "" ? descriptor.key : `${descriptor.key}_${descriptor.value}`;
    const fullKey = parentKey + composite;
    if (level.children.has(composite)) {
      throw new ConfigFailure(`duplicate descriptor composite key '${fullKey}'`);
    }
    const rule = descriptor.rateLimit === undefined ? undefined : buildRule(descriptor.rateLimit, descriptor, fullKey);
    const wildcard = wildcardOf(composite);
    if (descriptor.shareThreshold && wildcard === undefined) {
      throw new ConfigFailure(
        "share_threshold can only be used with wildcard values (containing '*'), " + `but found key '${composite}'`,
      );
    }
    if (descriptor.metadata?.ok === false) throw new ConfigFailure(descriptor.metadata.problem);
    if (rule !== undefined) rule.metadata = descriptor.metadata?.value;
    if (rule !== undefined && rule.algorithm !== "fixed_window" && options.fixedWindowOnly !== undefined) {
      throw new ConfigFailure(
        `rule '${fullKey}' uses algorithm ${rule.algorithm}, which the counter store chosen by ` +
          `${options.fixedWindowOnly} cannot count atomically (only fixed_window)`,
      );
    }
    const node: DescriptorNode = {
      ...newLevel(),
      key: descriptor.key,
      value: descriptor.value,
      composite,
      rule,
      shadowMode: descriptor.shadowMode,
      detailedMetric: descriptor.detailedMetric,
      valueToMetric: descriptor.valueToMetric,
      shareThreshold: descriptor.shareThreshold,
    };
    loadDescriptors(node, `${fullKey}.`, descriptor.descriptors, options);
    level.children.set(composite, node);
    level.ordered.push(node);
    if (wildcard !== undefined) level.wildcards.push(wildcard);
  }
}

/**
 * Loads a complete configuration from YAML files. All files are parsed and validated first, then built
 * in order; any error rejects the whole set, so the caller keeps its previous configuration. The work is bounded by
 * the limits: each file's size is checked before any is parsed, its nesting before it is composed, and alias
 * expansion against a budget shared by the set.
 * @returns the configuration, or the first error as `<file>: <message>`.
 */
export function loadConfig(files: ConfigFile[], options: LoadOptions): Result<RateLimitConfig, ConfigError> {
  const limits = options.limits ?? DEFAULT_CONFIG_LIMITS;
  let current = "";
  try {
    // Sizes first: no file is parsed while another is too large to be.
    for (const file of files) {
      current = file.name;
      if (utf8Length(file.text) > limits.fileBytes.max) {
        throw new ConfigFailure(`the file is larger than ${limitText(limits.fileBytes, " bytes")}`);
      }
    }
    const budget: AliasBudget = { left: limits.aliasNodes.max };
    const roots: { name: string; root: YamlRoot }[] = [];
    for (const file of files) {
      current = file.name;
      roots.push({ name: file.name, root: fileToYaml(file.text, limits, budget, options.strictUpstream) });
    }
    const tree = new Map<string, DescriptorLevel>();
    const domains: string[] = [];
    for (const { name, root } of roots) {
      current = name;
      if (root.domain === "") throw new ConfigFailure("config file cannot have empty domain");
      let level = tree.get(root.domain);
      if (level !== undefined && !options.mergeDomainConfig) {
        throw new ConfigFailure(`duplicate domain '${root.domain}' in config file`);
      }
      if (level === undefined) {
        level = newLevel();
        tree.set(root.domain, level);
        domains.push(root.domain);
      }
      loadDescriptors(level, `${root.domain}.`, root.descriptors, options);
    }
    return ok({ domains, tree });
  } catch (e) {
    if (!(e instanceof ConfigFailure)) throw e;
    return err({ file: current, message: `${current}: ${e.message}` });
  }
}

// ─── Lookup ─────────────────────────────────────────────────────────────────────────────────────

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
  };
}

// ─── Debug dump ─────────────────────────────────────────────────────────────────────────────────

function dumpLevel(level: DescriptorLevel, out: string[]): void {
  for (const node of level.ordered) {
    if (node.rule !== undefined) {
      const { fullKey, unit, requestsPerUnit, shadowMode, quotaMode } = node.rule;
      out.push(
        `${fullKey}: unit=${unit} requests_per_unit=${requestsPerUnit}, shadow_mode: ${shadowMode}, ` +
          `quota_mode: ${quotaMode}${algorithmText(node.rule)}\n`,
      );
    }
    dumpLevel(node, out);
  }
}

/** The dump's tail for the fields beyond the reference; empty for a plain fixed window, so such lines stay upstream's. */
function algorithmText({ algorithm, unitMultiplier, burst, requestsPerUnit }: ConfiguredRule): string {
  let text = algorithm === "fixed_window" ? "" : `, algorithm: ${algorithm}`;
  if (unitMultiplier !== 1) text += `, unit_multiplier: ${unitMultiplier}`;
  if (algorithm === "token_bucket" && burst !== requestsPerUnit) text += `, burst: ${burst}`;
  return text;
}

/**
 * The /rlconfig text: one line per rule,
 * `<fullKey>: unit=<UNIT> requests_per_unit=<N>, shadow_mode: <bool>, quota_mode: <bool>` (plus the algorithm fields
 * when not the defaults).
 * Domains are sorted and descriptors keep config order (parents before children), so the output is stable.
 */
export function dumpConfig(config: RateLimitConfig): string {
  const out: string[] = [];
  for (const domain of [...config.tree.keys()].sort()) dumpLevel(config.tree.get(domain)!, out);
  return out.join("");
}
