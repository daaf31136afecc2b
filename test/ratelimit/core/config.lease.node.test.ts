// A rule's `lease: true` (YAML, and `algorithm.lease` in the xDS extension): loaded onto the matched limit and shown in
// the dump for a fixed window; refused for the other algorithms naming the rule; unknown under strict upstream; and
// the limiter asks the store to lease exactly the counters the mode chooses.
import { describe, expect, it } from "vitest";
import { xdsConfigsToFiles } from "../../../src/ratelimit/config/xds";
import { dumpConfig, getLimit, loadConfig, type LoadOptions } from "../../../src/ratelimit/core/config";
import { doLimit, type LeaseMode } from "../../../src/ratelimit/core/limiter";
import type { CounterIncrement, CounterReply, CounterStore } from "../../../src/ratelimit/core/types";
import { descriptor } from "../../support/ratelimit-core";

const load = (text: string, options: Partial<LoadOptions> = {}) =>
  loadConfig([{ name: "f.yaml", text }], { mergeDomainConfig: false, ...options });

const errorOf = (text: string, options: Partial<LoadOptions> = {}) => {
  const result = load(text, options);
  return result.ok ? "loaded" : result.error.message;
};

const rule = (key: string, fields: string) =>
  `  - key: ${key}\n    rate_limit:\n      unit: second\n      requests_per_unit: 10\n` +
  fields
    .split("\n")
    .filter(Boolean)
    .map((line) => `      ${line}\n`)
    .join("");

const file = (...rules: string[]) => `domain: d\ndescriptors:\n${rules.join("")}`;

describe("loadConfig: lease", () => {
  it("marks a fixed-window rule leased, and shows it in the dump", () => {
    const result = load(file(rule("a", "lease: true"), rule("b", "lease: false"), rule("c", "")));
    if (!result.ok) throw new Error(result.error.message);
    expect(getLimit(result.value, "d", descriptor(["a", "x"]))?.lease).toBe(true);
    expect(getLimit(result.value, "d", descriptor(["b", "x"]))?.lease).toBe(false);
    expect(getLimit(result.value, "d", descriptor(["c", "x"]))?.lease).toBe(false);
    expect(dumpConfig(result.value)).toBe(
      "d.a: unit=SECOND requests_per_unit=10, shadow_mode: false, quota_mode: false, lease: true\n" +
        "d.b: unit=SECOND requests_per_unit=10, shadow_mode: false, quota_mode: false\n" +
        "d.c: unit=SECOND requests_per_unit=10, shadow_mode: false, quota_mode: false\n",
    );
  });

  it("refuses a lease on a sliding window or a token bucket, naming the rule and why", () => {
    expect(errorOf(file(rule("ok", "lease: true"), rule("sw", "algorithm: sliding_window\nlease: true")))).toBe(
      "f.yaml: rule 'd.sw': rate_limit.lease is supported for fixed_window only, not sliding_window (a sliding " +
        "window's count also weighs on the next window, where a share lent and not used would go on refusing " +
        "requests after its own window ended)",
    );
    expect(errorOf(file(rule("tb", "algorithm: token_bucket\nlease: true")))).toBe(
      "f.yaml: rule 'd.tb': rate_limit.lease is supported for fixed_window only, not token_bucket (a token bucket " +
        "refills continuously, so a share would have no window end at which it lapses)",
    );
    expect(errorOf(file(rule("sw", "algorithm: sliding_window\nlease: false")))).toBe("loaded");
  });

  it("refuses a lease that is not a boolean, and the key itself under strict upstream checking", () => {
    expect(errorOf(file(rule("a", "lease: 3")))).toBe(
      "f.yaml: error loading config file: yaml: unmarshal errors:\n  line 7: cannot unmarshal !!int `3` into bool",
    );
    expect(errorOf(file(rule("a", "lease: true")), { strictUpstream: true })).toBe(
      "f.yaml: config error, unknown key 'lease'",
    );
  });
});

describe("xDS: algorithm.lease", () => {
  const resource = (algorithm: object) => ({
    name: "leased",
    domain: "d",
    descriptors: [{ key: "k", rateLimit: { unit: "SECOND", requestsPerUnit: 10, algorithm } }],
  });

  it("carries the lease into the YAML, and the fixed window keeps it", () => {
    const files = xdsConfigsToFiles([resource({ lease: true })]);
    expect(files).toEqual({
      ok: true,
      value: [
        {
          name: "leased",
          text:
            "domain: d\ndescriptors:\n  - key: k\n    rate_limit:\n      unit: SECOND\n      requests_per_unit: 10\n" +
            "      algorithm: fixed_window\n      lease: true\n",
        },
      ],
    });
    const loaded = files.ok && loadConfig(files.value, { mergeDomainConfig: false });
    expect(loaded && loaded.ok && getLimit(loaded.value, "d", descriptor(["k", "v"]))?.lease).toBe(true);
  });

  it("lets the YAML validation refuse a leased token bucket, naming the rule", () => {
    const files = xdsConfigsToFiles([resource({ kind: "TOKEN_BUCKET", lease: true })]);
    const loaded = files.ok && loadConfig(files.value, { mergeDomainConfig: false });
    expect(loaded && !loaded.ok && loaded.error.message).toBe(
      "leased: rule 'd.k': rate_limit.lease is supported for fixed_window only, not token_bucket (a token bucket " +
        "refills continuously, so a share would have no window end at which it lapses)",
    );
  });

  it("refuses a lease that is not a boolean by its field", () => {
    expect(xdsConfigsToFiles([resource({ lease: "yes" })])).toEqual({
      ok: false,
      error: 'leased: descriptors[0].rateLimit.algorithm.lease: expected boolean, got "yes"',
    });
  });
});

describe("the limiter asks for leases", () => {
  const config = load(
    file(rule("leased", "lease: true"), rule("plain", ""), rule("sliding", "algorithm: sliding_window")),
  );

  /** The operations the limiter sends for one request of the three rules, under `leases`. */
  async function operationsUnder(leases: LeaseMode | undefined): Promise<CounterIncrement[]> {
    if (!config.ok) throw new Error(config.error.message);
    const sent: CounterIncrement[] = [];
    const store: CounterStore = {
      increment: async (items) => (sent.push(...items), items.map((): CounterReply => 1)),
      get: async (items) => items.map(() => 0),
    };
    const descriptors = [descriptor(["leased", "x"]), descriptor(["plain", "x"]), descriptor(["sliding", "x"])];
    const limits = descriptors.map((d) => getLimit(config.value, "d", d));
    const settings = { stopCacheKeyIncrementWhenOverlimit: false, nearLimitRatio: 0.8, cacheKeyPrefix: "", leases };
    await doLimit(store, settings, { domain: "d", descriptors, limits, hits: [1, 1, 1] }, 1_800_000_000);
    return sent;
  }

  it("leases the rules that ask with mode `rules`, every fixed window with `all`, nothing without a mode", async () => {
    const leasesOf = (sent: CounterIncrement[]) => sent.map((operation) => operation.lease);
    expect(leasesOf(await operationsUnder("rules"))).toEqual([{ limit: 10 }, undefined, undefined]);
    expect(leasesOf(await operationsUnder("all"))).toEqual([{ limit: 10 }, { limit: 10 }, undefined]);
    expect(leasesOf(await operationsUnder(undefined))).toEqual([undefined, undefined, undefined]);
  });
});
