// Rate limit units: names, numeric proto values and window lengths. Windows are fixed and aligned to the
// Unix epoch, so MONTH and YEAR are 30 and 365 days, not calendar months or years (as in the reference).

import type { Unit } from "./types";

/** Unit names in proto enum order (RateLimitResponse.RateLimit.Unit): the index is the enum number. */
export const UNIT_NAMES: readonly Unit[] = ["UNKNOWN", "SECOND", "MINUTE", "HOUR", "DAY", "MONTH", "YEAR", "WEEK"];

const DIVIDERS: Record<Exclude<Unit, "UNKNOWN">, number> = {
  SECOND: 1,
  MINUTE: 60,
  HOUR: 3600,
  DAY: 86400,
  WEEK: 604800,
  MONTH: 2592000,
  YEAR: 31536000,
};

/** A unit that names a window length; UNKNOWN never does. */
export type KnownUnit = Exclude<Unit, "UNKNOWN">;

export function isKnownUnit(unit: Unit): unit is KnownUnit {
  return unit !== "UNKNOWN";
}

/**
 * Parses a unit as written in YAML (case-insensitive). UNKNOWN is a valid enum name but not a usable
 * unit, so it is refused like any other unknown word.
 * @returns the unit, or undefined when the text is not a usable unit.
 */
export function parseUnit(text: string): KnownUnit | undefined {
  const upper = text.toUpperCase();
  return upper in DIVIDERS ? (upper as KnownUnit) : undefined;
}

/** Window length in seconds. */
export function unitToDivider(unit: KnownUnit): number {
  return DIVIDERS[unit];
}

/** The unit with the given proto enum number, or undefined when the number names none. */
export function unitFromNumber(n: number): Unit | undefined {
  return Number.isInteger(n) ? UNIT_NAMES[n] : undefined;
}

/** Start (unix seconds) of the epoch-aligned window of `multiplier` units that contains `now` (whole seconds). */
export function windowStart(unit: KnownUnit, now: number, multiplier = 1): number {
  const divider = unitToDivider(unit) * multiplier;
  return Math.floor(now / divider) * divider;
}

/** Seconds until the current window ends: 1..window (always 1 for SECOND). */
export function calculateReset(unit: KnownUnit, now: number): number {
  const divider = unitToDivider(unit);
  return divider - (((now % divider) + divider) % divider);
}
