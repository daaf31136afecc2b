// The IETF rate limit headers (LIMIT_RESPONSE_HEADERS_FORMAT=ietf): RateLimit-Policy and RateLimit as the HTTPAPI
// working group's draft-ietf-httpapi-ratelimit-headers-10 defines them, RFC 9651 structured fields (Lists of Items
// whose value is a String naming the policy): `RateLimit-Policy: "<policy>";q=<quota>;w=<window seconds>` and
// `RateLimit: "<policy>";r=<remaining>;t=<seconds until reset>`.
import type { MatchedLimit } from "./config-model";
import type { DescriptorStatus, HeaderValue } from "./types";
import { type KnownUnit, unitToDivider } from "./units";
import { windowsOf } from "./windows";

/** An sf-string of `text`: printable ASCII only (anything else becomes `_`), `"` and `\` escaped. */
function sfString(text: string): string {
  const printable = text.replace(/[^\x20-\x7e]/g, "_");
  return `"${printable.replace(/[\\"]/g, (char) => `\\${char}`)}"`;
}

/**
 * The policy's name: the deciding rule's `name`, else its statistics key (its config path). A request's own override
 * has neither a name nor a path of the config: its key is the request's entries.
 */
const policyName = (limit: MatchedLimit | undefined): string =>
  limit === undefined ? "default" : limit.name !== "" ? limit.name : limit.metricKey;

/** The window of the status's limit, in seconds: the rule's window of that unit and size (unit × unit_multiplier). */
function windowSecondsOf(status: DescriptorStatus, limit: MatchedLimit | undefined): number {
  const current = status.currentLimit!;
  const window = limit
    ? windowsOf(limit).find((w) => w.unit === current.unit && w.requestsPerUnit === current.requestsPerUnit)
    : undefined;
  return window?.windowSeconds ?? unitToDivider(current.unit as KnownUnit);
}

/** The two headers for the chosen status, whose limit is known; `limit` the rule (or override) that gave it. */
export function ietfHeaders(status: DescriptorStatus, limit: MatchedLimit | undefined): HeaderValue[] {
  const name = sfString(policyName(limit));
  const quota = status.currentLimit!.requestsPerUnit;
  const reset = Math.ceil(status.durationUntilResetSeconds ?? 0);
  return [
    { key: "RateLimit-Policy", value: `${name};q=${quota};w=${windowSecondsOf(status, limit)}` },
    { key: "RateLimit", value: `${name};r=${status.limitRemaining};t=${reset}` },
  ];
}
