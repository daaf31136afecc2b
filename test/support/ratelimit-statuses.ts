// The descriptor statuses the rate limit service answers in JSON (POST /json, Connect JSON), and the core's own
// statuses before encoding, built once for the tests that expect them. proto3 JSON leaves out zeros: a limitRemaining
// of 0 and a requestsPerUnit of 0 are absent; the core's statuses keep every field.
import type { DescriptorStatus, Unit } from "../../src/ratelimit/core/types";

type Code = "OK" | "OVER_LIMIT";

/** A limit as currentLimit shows it; `name` only where the rule names it. */
export function currentLimit(requestsPerUnit: number, unit: string, name?: string) {
  return { ...(requestsPerUnit && { requestsPerUnit }), unit, ...(name !== undefined && { name }) };
}

/** A status with a limit, `limitRemaining` left out when 0. */
export function limitStatus(
  code: Code,
  requestsPerUnit: number,
  unit: string,
  limitRemaining: number,
  durationUntilReset: string,
  name?: string,
) {
  return {
    code,
    currentLimit: currentLimit(requestsPerUnit, unit, name),
    ...(limitRemaining && { limitRemaining }),
    durationUntilReset,
  };
}

/** An OK status with `limitRemaining` left (absent when 0). */
export const okStatus = (
  requestsPerUnit: number,
  unit: string,
  limitRemaining: number,
  durationUntilReset: string,
  name?: string,
) => limitStatus("OK", requestsPerUnit, unit, limitRemaining, durationUntilReset, name);

/** An OVER_LIMIT status: nothing remains. */
export const overStatus = (requestsPerUnit: number, unit: string, durationUntilReset: string, name?: string) =>
  limitStatus("OVER_LIMIT", requestsPerUnit, unit, 0, durationUntilReset, name);

/** A status as the core decides it, before any encoding: every field present, the reset in seconds. */
export function decidedStatus(
  code: Code,
  requestsPerUnit: number,
  unit: Unit,
  limitRemaining: number,
  durationUntilResetSeconds: number,
  name?: string,
): DescriptorStatus {
  const currentLimit = { requestsPerUnit, unit, ...(name !== undefined && { name }) };
  return { code, currentLimit, limitRemaining, durationUntilResetSeconds };
}

/** The core's status of a descriptor no rule limits (none matches, or its rule was replaced): nothing counted. */
export const NO_LIMIT_STATUS: DescriptorStatus = { code: "OK", limitRemaining: 0 };

/** The core's status of a descriptor an unlimited rule matches: the largest uint32 remaining. */
export const UNLIMITED_STATUS: DescriptorStatus = { code: "OK", limitRemaining: 4294967295 };
