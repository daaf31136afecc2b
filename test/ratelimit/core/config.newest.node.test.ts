// Loading what upstream's newest release accepts (quota_mode, metadata, stars anywhere with share_threshold) and this
// project's algorithm keys, with every refusal's exact text.
import { describe, expect, it } from "vitest";
import { dumpConfig, getLimit, loadConfig, type LoadOptions } from "../../../src/ratelimit/core/config";
import { descriptor, loadFixtures } from "../../support/ratelimit-core";

const load = (text: string, options: Partial<LoadOptions> = {}) =>
  loadConfig([{ name: "f.yaml", text }], { mergeDomainConfig: false, ...options });

const errorOf = (text: string, options: Partial<LoadOptions> = {}) => {
  const result = load(text, options);
  return result.ok ? "loaded" : result.error.message;
};

const rule = (fields: string) => `
domain: d
descriptors:
  - key: k
    rate_limit:
      unit: second
      requests_per_unit: 10
${fields
  .split("\n")
  .filter(Boolean)
  .map((line) => `      ${line}`)
  .join("\n")}
`;

describe("loadConfig: quota_mode and metadata", () => {
  it("loads quota_mode per descriptor and shows it in the dump", () => {
    const config = loadFixtures(["quota.yaml"]);
    expect(getLimit(config, "quota", descriptor(["plan", "x"]))?.quotaMode).toBe(true);
    expect(getLimit(config, "quota", descriptor(["api", "x"]))?.quotaMode).toBe(false);
    expect(dumpConfig(config).split("\n")[0]).toBe(
      "quota.plan: unit=MINUTE requests_per_unit=1, shadow_mode: false, quota_mode: true",
    );
  });

  it("keeps metadata as a Struct holds it, without checking its keys or its floats", () => {
    const config = loadFixtures(["metadata.yaml"]);
    expect(getLimit(config, "meta", descriptor(["team", "t"]))?.metadata).toEqual({
      tier: "silver",
      limits: { daily: 1, monthly: 5 },
      ratio: 0.5,
      free: true,
      nothing: null,
    });
  });

  it("keeps a __proto__ key of metadata as an ordinary key", () => {
    const result = load(
      "domain: d\ndescriptors:\n  - key: k\n    metadata:\n      __proto__:\n        polluted: 1\n" +
        "    rate_limit:\n      unit: second\n      requests_per_unit: 1\n",
    );
    const metadata = result.ok ? getLimit(result.value, "d", descriptor(["k", "v"]))?.metadata : undefined;
    expect(metadata && Object.keys(metadata)).toEqual(["__proto__"]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it.each([
    [
      "metadata that is not a map",
      "domain: d\ndescriptors:\n  - key: k\n    metadata: 5\n",
      "f.yaml: error loading config file: yaml: unmarshal errors:\n" +
        "  line 4: cannot unmarshal !!int `5` into map[string]interface {}",
    ],
  ])("refuses %s", (_label, text, message) => {
    expect(errorOf(text)).toBe(message);
  });

  it("accepts share_threshold on a pattern with a star in the middle", () => {
    const text =
      "domain: d\ndescriptors:\n  - key: path\n    value: /api*v1\n    share_threshold: true\n" +
      "    rate_limit:\n      unit: minute\n      requests_per_unit: 2\n";
    const result = load(text);
    expect(result.ok && getLimit(result.value, "d", descriptor(["path", "/api/x/v1"]))?.sharedValues).toEqual([
      "/api*v1",
    ]);
  });
});

describe("loadConfig: algorithm, unit_multiplier and burst", () => {
  const algo = loadFixtures(["algorithms.yaml"]);

  it("reads the algorithm, the window and the capacity", () => {
    expect(getLimit(algo, "algo", descriptor(["fixed2m", "x"]))).toMatchObject({
      algorithm: "fixed_window",
      windowSeconds: 120,
      capacity: 3,
    });
    expect(getLimit(algo, "algo", descriptor(["sliding", "x"]))).toMatchObject({
      algorithm: "sliding_window",
      windowSeconds: 1,
      capacity: 10,
    });
    expect(getLimit(algo, "algo", descriptor(["bucket", "x"]))).toMatchObject({
      algorithm: "token_bucket",
      windowSeconds: 1,
      capacity: 20,
    });
    expect(getLimit(algo, "algo", descriptor(["bucket_default", "x"]))).toMatchObject({
      windowSeconds: 300,
      capacity: 5,
    });
  });

  it("dumps the fields that differ from the reference's defaults", () => {
    expect(dumpConfig(algo)).toBe(
      "algo.fixed2m: unit=MINUTE requests_per_unit=3, shadow_mode: false, quota_mode: false, unit_multiplier: 2\n" +
        "algo.sliding: unit=SECOND requests_per_unit=10, shadow_mode: false, quota_mode: false, " +
        "algorithm: sliding_window\n" +
        "algo.bucket: unit=SECOND requests_per_unit=10, shadow_mode: false, quota_mode: false, " +
        "algorithm: token_bucket, burst: 20\n" +
        "algo.bucket_default: unit=MINUTE requests_per_unit=5, shadow_mode: false, quota_mode: false, " +
        "algorithm: token_bucket, unit_multiplier: 5\n",
    );
  });

  it.each([
    [
      "an unknown algorithm",
      "algorithm: leaky_bucket",
      "f.yaml: rate_limit.algorithm 'leaky_bucket' is not one of fixed_window, sliding_window, token_bucket",
    ],
    [
      "burst on a window algorithm",
      "algorithm: sliding_window\nburst: 5",
      "f.yaml: rate_limit.burst is only for algorithm token_bucket, not sliding_window",
    ],
    [
      "burst on the default algorithm",
      "burst: 5",
      "f.yaml: rate_limit.burst is only for algorithm token_bucket, not fixed_window",
    ],
    [
      "a unit_multiplier of 0",
      "unit_multiplier: 0",
      "f.yaml: rate_limit.unit_multiplier must be an integer from 1 to 1000000, but found '0'",
    ],
    [
      "a negative unit_multiplier",
      "unit_multiplier: -2",
      "f.yaml: rate_limit.unit_multiplier must be an integer from 1 to 1000000, but found '-2'",
    ],
    [
      "a fractional unit_multiplier",
      "unit_multiplier: 1.5",
      "f.yaml: rate_limit.unit_multiplier must be an integer from 1 to 1000000, but found '1.5'",
    ],
    [
      "a unit_multiplier given as text",
      "unit_multiplier: two",
      "f.yaml: rate_limit.unit_multiplier must be an integer from 1 to 1000000, but found 'two'",
    ],
    [
      "a unit_multiplier that is a map",
      "unit_multiplier: {unit: 1}",
      "f.yaml: rate_limit.unit_multiplier must be an integer from 1 to 1000000, but found 'map[unit:1]'",
    ],
    [
      "a fractional burst",
      "algorithm: token_bucket\nburst: 2.5",
      "f.yaml: rate_limit.burst must be an integer from 1 to 4294967295, but found '2.5'",
    ],
    [
      "a burst of 0",
      "algorithm: token_bucket\nburst: 0",
      "f.yaml: rate_limit.burst must be an integer from 1 to 4294967295, but found '0'",
    ],
  ])("refuses %s, naming the field", (_label, fields, message) => {
    expect(errorOf(rule(fields))).toBe(message);
  });

  it("refuses a window longer than 100 years, naming unit_multiplier, and keeps one of 100 years", () => {
    const year = (fields: string) => rule(fields).replace("unit: second", "unit: year");
    expect(errorOf(year("unit_multiplier: 101"))).toBe(
      "f.yaml: rate_limit.unit_multiplier 101 makes a window of 3185136000 seconds, more than 100 years " +
        "(3153600000 seconds)",
    );
    // A window that would end past what a Date holds (YEAR × 1,000,000 is 3.15e16 ms), whatever the algorithm.
    expect(errorOf(year("unit_multiplier: 1000000\nalgorithm: sliding_window"))).toBe(
      "f.yaml: rate_limit.unit_multiplier 1000000 makes a window of 31536000000000 seconds, more than 100 years " +
        "(3153600000 seconds)",
    );
    expect(errorOf(year("unit_multiplier: 100"))).toBe("loaded");
    expect(errorOf(year("unit_multiplier: 100\nalgorithm: token_bucket"))).toBe("loaded");
  });

  it("refuses a token bucket taking more than 100 years to refill from empty, naming burst", () => {
    const bucket = (unit: string, perUnit: number, fields: string) =>
      rule(`algorithm: token_bucket\n${fields}`)
        .replace("unit: second", `unit: ${unit}`)
        .replace("requests_per_unit: 10", `requests_per_unit: ${perUnit}`);
    expect(errorOf(bucket("year", 1, "burst: 101"))).toBe(
      "f.yaml: rate_limit.burst 101 takes more than 100 years to refill from empty at 1 per 31536000 seconds",
    );
    // The largest burst at one token a second: its TAT would pass 2^53 µs within the century.
    expect(errorOf(bucket("second", 1, "burst: 4294967295"))).toBe(
      "f.yaml: rate_limit.burst 4294967295 takes more than 100 years to refill from empty at 1 per 1 seconds",
    );
    expect(errorOf(bucket("year", 1, "burst: 100"))).toBe("loaded");
    expect(errorOf(bucket("second", 1, "burst: 3153600000"))).toBe("loaded");
    expect(errorOf(bucket("second", 1, "burst: 3153600001"))).toBe(
      "f.yaml: rate_limit.burst 3153600001 takes more than 100 years to refill from empty at 1 per 1 seconds",
    );
    // The default burst (requests_per_unit) refills in one window, which is never too long.
    expect(errorOf(bucket("year", 7, "unit_multiplier: 100"))).toBe("loaded");
  });

  it("refuses a token bucket that never refills", () => {
    const text =
      "domain: d\ndescriptors:\n  - key: k\n    rate_limit:\n      algorithm: token_bucket\n" +
      "      unit: second\n      requests_per_unit: 0\n";
    expect(errorOf(text)).toBe("f.yaml: rate_limit.requests_per_unit must be at least 1 for algorithm token_bucket");
  });

  it("keeps upstream's message for a float where upstream has a key", () => {
    expect(errorOf(rule("").replace("requests_per_unit: 10", "requests_per_unit: 1.5"))).toBe(
      "f.yaml: error checking config",
    );
  });

  it("refuses the algorithms when the counter store counts fixed windows only, naming the rule", () => {
    const options = { fixedWindowOnly: "BACKEND_TYPE=memcache" };
    expect(errorOf(rule("algorithm: token_bucket"), options)).toBe(
      "f.yaml: rule 'd.k' uses algorithm token_bucket, which the counter store chosen by BACKEND_TYPE=memcache " +
        "cannot count atomically (only fixed_window)",
    );
    expect(errorOf(rule("unit_multiplier: 3\nalgorithm: fixed_window"), options)).toBe("loaded");
  });

  it("refuses this project's keys as unknown with strict upstream checking, and keeps upstream's newest", () => {
    const strict = { strictUpstream: true };
    expect(errorOf(rule("algorithm: sliding_window"), strict)).toBe("f.yaml: config error, unknown key 'algorithm'");
    expect(errorOf(rule("unit_multiplier: 2"), strict)).toBe("f.yaml: config error, unknown key 'unit_multiplier'");
    expect(errorOf(rule("burst: 2"), strict)).toBe("f.yaml: config error, unknown key 'burst'");
    const newest = "domain: d\ndescriptors:\n  - key: k\n    quota_mode: true\n    metadata:\n      a: 1\n";
    expect(errorOf(newest, strict)).toBe("loaded");
  });
});
