// Building one rule from its YAML `rate_limit` block: the reference's unit and replaces checks, and this project's
// algorithm fields (algorithm, unit_multiplier, burst) with what they derive (window, capacity, emission interval).
import { type Algorithm, ALGORITHMS } from "./algorithms";
import { ConfigFailure, type ConfiguredRule, type RuleWindow } from "./config-model";
import type { YamlDescriptor, YamlNumber, YamlRateLimit } from "./config-yaml-decode";
import { type KnownUnit, parseUnit, unitToDivider } from "./units";

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

/**
 * Why a lease is refused for each algorithm but the fixed window: a share is quota counted before it is used, and only
 * a fixed window's count stops mattering when its window ends.
 */
const NO_LEASE: Record<Exclude<Algorithm, "fixed_window">, string> = {
  sliding_window:
    "a sliding window's count also weighs on the next window, where a share lent and not used would go on refusing " +
    "requests after its own window ended",
  token_bucket: "a token bucket refills continuously, so a share would have no window end at which it lapses",
};

export function buildRule(config: YamlRateLimit, descriptor: YamlDescriptor, fullKey: string): ConfiguredRule {
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
  const algorithm = buildAlgorithm(config, unit);
  if (config.lease && algorithm.algorithm !== "fixed_window") {
    throw new ConfigFailure(
      `rule '${fullKey}': rate_limit.lease is supported for fixed_window only, not ${algorithm.algorithm} ` +
        `(${NO_LEASE[algorithm.algorithm]})`,
    );
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
    ...algorithm,
    lease: config.lease,
  };
}

/** The most windows `additional_limits` may add to one rule (docs/security.md). */
export const MAX_ADDITIONAL_LIMITS = 8;

/** Fields of `rate_limit` that belong to the rule, not to one of its windows. */
function ruleOnlyField(config: YamlRateLimit): string | undefined {
  if (config.unlimited) return "unlimited";
  if (config.name !== "") return "name";
  if (config.replaces.length > 0) return "replaces";
  if (config.lease) return "lease";
  return undefined;
}

/** One entry of `additional_limits`, built as `rate_limit` is; its refusals name the entry. */
function buildWindow(config: YamlRateLimit, at: string): RuleWindow {
  const field = ruleOnlyField(config);
  if (field !== undefined) throw new ConfigFailure(`${at}.${field} belongs to rate_limit, not to an additional window`);
  const unit = parseUnit(config.unit);
  if (unit === undefined) throw new ConfigFailure(`${at}: invalid rate limit unit '${config.unit}'`);
  try {
    const { algorithm, unitMultiplier, windowSeconds, capacity, emissionIntervalMicros } = buildAlgorithm(config, unit);
    return {
      requestsPerUnit: config.requestsPerUnit,
      unit,
      algorithm,
      unitMultiplier,
      windowSeconds,
      capacity,
      emissionIntervalMicros,
    };
  } catch (e) {
    if (!(e instanceof ConfigFailure)) throw e;
    throw new ConfigFailure(`${at}.${e.message.replace(/^rate_limit\./, "")}`);
  }
}

/**
 * A descriptor's `additional_limits`, checked against its rule: they need a limited `rate_limit` beside them, at most
 * MAX_ADDITIONAL_LIMITS of them, and no lease (a share of one window cannot be judged against the others).
 * @returns the windows, or undefined when the list is absent or empty.
 */
export function buildAdditional(
  list: readonly YamlRateLimit[] | undefined,
  rule: ConfiguredRule | undefined,
  fullKey: string,
): RuleWindow[] | undefined {
  if (list === undefined || list.length === 0) return undefined;
  const named = `rule '${fullKey}'`;
  if (rule === undefined) throw new ConfigFailure(`${named}: additional_limits needs a rate_limit beside it`);
  if (rule.unlimited)
    throw new ConfigFailure(`${named}: additional_limits cannot be used with an unlimited rate_limit`);
  if (rule.lease) {
    throw new ConfigFailure(
      `${named}: rate_limit.lease is not supported with additional_limits (a leased share of one window cannot be ` +
        "judged together with the other windows)",
    );
  }
  if (list.length > MAX_ADDITIONAL_LIMITS) {
    throw new ConfigFailure(
      `${named}: additional_limits has ${list.length} windows, more than ${MAX_ADDITIONAL_LIMITS}`,
    );
  }
  return list.map((config, i) => buildWindow(config, `${named}: additional_limits[${i}]`));
}
