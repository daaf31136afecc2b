// LIMIT_RESPONSE_HEADERS_FORMAT=ietf: RateLimit-Policy and RateLimit per draft-ietf-httpapi-ratelimit-headers-10,
// parsed with a real RFC 9651 parser (structured-headers): the policy named after the deciding rule, its quota and
// window, the remaining and the reset; and draft03, the default, unchanged.
import { parseList, type Item } from "structured-headers";
import { describe, expect, it } from "vitest";
import type { ResponseHeaderNames } from "../../../src/ratelimit/core/service";
import { harness, loadConfigText, request } from "../../support/ratelimit-core";

const CONFIG = loadConfigText(`
domain: h
descriptors:
  - key: named
    rate_limit:
      name: login
      unit: minute
      requests_per_unit: 3
  - key: plain
    value: "quo\\"te"
    rate_limit:
      unit: hour
      unit_multiplier: 2
      requests_per_unit: 100
  - key: windows
    rate_limit:
      name: api
      unit: second
      requests_per_unit: 10
    additional_limits:
      - unit: minute
        requests_per_unit: 2
  - key: bucket
    rate_limit:
      algorithm: token_bucket
      unit: second
      requests_per_unit: 4
`);
const NAMES = { limit: "RateLimit-Limit", remaining: "RateLimit-Remaining", reset: "RateLimit-Reset" };
const IETF: ResponseHeaderNames = { ...NAMES, format: "ietf" };

/** The headers of one decision, each parsed as an RFC 9651 List of one Item. */
async function headersOf(h: ReturnType<typeof harness>, pairs: [string, string][][], now: number) {
  const { response } = await h.run(request("h", pairs), now);
  expect(response.responseHeadersToAdd.map((header) => header.key)).toEqual(["RateLimit-Policy", "RateLimit"]);
  const [policy, limit] = response.responseHeadersToAdd.map((header) => parseList(header.value));
  expect(policy).toHaveLength(1);
  expect(limit).toHaveLength(1);
  const plain = ([value, parameters]: Item) => [value, Object.fromEntries(parameters)];
  return { policy: plain(policy[0] as Item), limit: plain(limit[0] as Item), raw: response.responseHeadersToAdd };
}

describe("LIMIT_RESPONSE_HEADERS_FORMAT=ietf", () => {
  it("names the policy after the rule and gives its quota, window, remaining and reset", async () => {
    const h = harness(CONFIG, { responseHeaders: IETF });
    const { policy, limit, raw } = await headersOf(h, [[["named", "a"]]], 1_800_000_010);
    expect(policy).toEqual(["login", { q: 3, w: 60 }]);
    expect(limit).toEqual(["login", { r: 2, t: 50 }]);
    expect(raw).toEqual([
      { key: "RateLimit-Policy", value: '"login";q=3;w=60' },
      { key: "RateLimit", value: '"login";r=2;t=50' },
    ]);
  });

  it("names an unnamed rule by its statistics key, escaped as an sf-string, with unit_multiplier in the window", async () => {
    const h = harness(CONFIG, { responseHeaders: IETF });
    const { policy, limit } = await headersOf(h, [[["plain", 'quo"te']]], 1_800_000_000);
    expect(policy).toEqual(['h.plain_quo"te', { q: 100, w: 7200 }]);
    expect(limit).toEqual(['h.plain_quo"te', { r: 99, t: 7200 }]);
  });

  it("describes the deciding window of a rule with several, and the refusing descriptor among others", async () => {
    const h = harness(CONFIG, { responseHeaders: IETF });
    await h.run(request("h", [[["windows", "w"]]]), 1_800_000_000.5);
    await h.run(request("h", [[["windows", "w"]]]), 1_800_000_001.5);
    const { policy, limit } = await headersOf(h, [[["named", "b"]], [["windows", "w"]]], 1_800_000_002.5);
    expect(policy).toEqual(["api", { q: 2, w: 60 }]);
    expect(limit).toEqual(["api", { r: 0, t: 58 }]);
  });

  it("rounds a token bucket's reset up to whole seconds", async () => {
    const h = harness(CONFIG, { responseHeaders: IETF });
    const { policy, limit } = await headersOf(h, [[["bucket", "t"]]], 1_800_000_000);
    expect(policy).toEqual(["h.bucket", { q: 4, w: 1 }]);
    expect(limit).toEqual(["h.bucket", { r: 3, t: 1 }]);
  });

  it("keeps the reference's draft03 headers by default", async () => {
    const h = harness(CONFIG, { responseHeaders: NAMES });
    const { response } = await h.run(request("h", [[["named", "c"]]]), 1_800_000_010);
    expect(response.responseHeadersToAdd).toEqual([
      { key: "RateLimit-Limit", value: "3" },
      { key: "RateLimit-Remaining", value: "2" },
      { key: "RateLimit-Reset", value: "50" },
    ]);
  });
});
