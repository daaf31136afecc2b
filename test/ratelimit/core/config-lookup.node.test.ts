// getLimit: which rule applies to a request descriptor (depth, precedence, wildcards, share_threshold,
// overrides) and the metric key it reports under.

import { describe, expect, it } from "vitest";
import { getLimit } from "../../../src/ratelimit/core/config-lookup";
import { descriptor, loadFixtures } from "../../support/ratelimit-core";

const basic = loadFixtures(["basic.yaml"]);
const wildcard = loadFixtures(["wildcard.yaml"]);
const share = loadFixtures(["share-threshold.yaml"]);
const metrics = loadFixtures(["value-to-metric.yaml"]);

describe("getLimit: matching (basic.yaml)", () => {
  it("finds nothing for an unknown domain or a descriptor without entries", () => {
    expect(getLimit(basic, "foo_domain", descriptor(["key2", "x"]))).toBeUndefined();
    expect(getLimit(basic, "test-domain", descriptor())).toBeUndefined();
  });

  it("finds nothing where no rule is configured at that depth", () => {
    expect(getLimit(basic, "test-domain", descriptor(["key1", "something"]))).toBeUndefined();
    // key1_value1 has children only: a one-entry request is shallower than its rules.
    expect(getLimit(basic, "test-domain", descriptor(["key1", "value1"]))).toBeUndefined();
    // A request deeper than the config never matches the shorter rule.
    expect(getLimit(basic, "test-domain", descriptor(["key2", "value2"], ["subkey", "subvalue"]))).toBeUndefined();
    expect(getLimit(basic, "test-domain", descriptor(["key2", "x"], ["subkey", "subvalue"]))).toBeUndefined();
    // An explicit match with children but no matching child does not fall back.
    expect(getLimit(basic, "test-domain", descriptor(["key5", "value5"], ["subkey5", "other"]))).toBeUndefined();
  });

  it("uses the key-only rule for any value, and key plus value where configured", () => {
    expect(getLimit(basic, "test-domain", descriptor(["key1", "value1"], ["subkey1", "something"]))).toMatchObject({
      requestsPerUnit: 5,
      unit: "SECOND",
      metricKey: "test-domain.key1_value1.subkey1",
    });
    expect(getLimit(basic, "test-domain", descriptor(["key1", "value1"], ["subkey1", "subvalue1"]))).toMatchObject({
      requestsPerUnit: 10,
      unit: "SECOND",
      metricKey: "test-domain.key1_value1.subkey1_subvalue1",
    });
    expect(getLimit(basic, "test-domain", descriptor(["key2", "something"]))).toMatchObject({
      requestsPerUnit: 20,
      unit: "MINUTE",
      metricKey: "test-domain.key2",
    });
    expect(getLimit(basic, "test-domain", descriptor(["key2", "value2"]))).toMatchObject({
      requestsPerUnit: 30,
      unit: "MINUTE",
      metricKey: "test-domain.key2_value2",
    });
  });

  it("whitelists a key plus value entry without a limit instead of falling back to the key-only rule", () => {
    expect(getLimit(basic, "test-domain", descriptor(["key2", "value3"]))).toBeUndefined();
  });

  it("matches a rule at level one and another at level two of the same path", () => {
    expect(getLimit(basic, "test-domain", descriptor(["key5", "value5"]))?.requestsPerUnit).toBe(15);
    expect(
      getLimit(basic, "test-domain", descriptor(["key5", "value5"], ["subkey5", "subvalue5"]))?.requestsPerUnit,
    ).toBe(25);
  });

  it("is case-sensitive", () => {
    expect(getLimit(basic, "test-domain", descriptor(["KEY2", "x"]))).toBeUndefined();
    expect(getLimit(basic, "TEST-DOMAIN", descriptor(["key2", "x"]))).toBeUndefined();
  });

  it("reports units, names, unlimited and shadow flags", () => {
    expect(getLimit(basic, "test-domain", descriptor(["key3", "foo"]))).toMatchObject({
      requestsPerUnit: 1,
      unit: "HOUR",
    });
    expect(getLimit(basic, "test-domain", descriptor(["key4", "foo"]))).toMatchObject({
      requestsPerUnit: 1,
      unit: "DAY",
    });
    expect(getLimit(basic, "test-domain", descriptor(["key6", "foo"]))).toMatchObject({ unlimited: true });
    expect(getLimit(basic, "test-domain", descriptor(["key9", "foo"]))).toMatchObject({
      name: "weekly",
      unit: "WEEK",
    });
    const other = loadFixtures(["other-domain.yaml"]);
    expect(getLimit(other, "another", descriptor(["remote_address", "1.2.3.4"]))?.shadowMode).toBe(true);
  });
});

describe("getLimit: wildcards", () => {
  const limitOf = (value: string) => getLimit(wildcard, "wildcard", descriptor(["path", value]))?.requestsPerUnit;

  // Each row: the limit each path value gets.
  it.each([
    [
      "prefers key plus value, then a wildcard, then key only",
      { "/api/exact": 30, "/api/users": 10, "/other": 40, "/api": 40 },
    ],
    ["lets the first declared matching wildcard win, not the longest", { "/api/v1/users": 10 }],
    ["matches the prefix itself (zero characters after it)", { "/api/": 10 }],
    [
      "matches a star anywhere: prefix and suffix anchored, zero characters allowed",
      { "/a*b": 50, "/axxb": 50, "/ab": 50, "/axxbc": 40, "x/axxb": 40 },
    ],
    [
      "matches several stars with their segments in order",
      { "/m1/a.json": 80, "/m/.json": 80, "/m1.json": 40, "/m1/a.jsonx": 40, "/m1/a/b.json": 80 },
    ],
  ])("%s", (_name, limits) => {
    const values = Object.keys(limits);
    expect(Object.fromEntries(values.map((value) => [value, limitOf(value)]))).toEqual(limits);
  });

  it("matches a lone star against any value, even an empty one", () => {
    expect(getLimit(wildcard, "wildcard", descriptor(["any", ""]))?.requestsPerUnit).toBe(70);
  });

  it("reports the pattern, star included, as the metric key", () => {
    expect(getLimit(wildcard, "wildcard", descriptor(["path", "/api/users"]))?.metricKey).toBe("wildcard.path_/api/*");
    expect(getLimit(wildcard, "wildcard", descriptor(["nested", "val1"], ["wild", "goo123"]))).toMatchObject({
      requestsPerUnit: 60,
      metricKey: "wildcard.nested_val1.wild_goo*",
      sharedValues: undefined,
    });
  });
});

describe("getLimit: share_threshold", () => {
  it("shares the wildcard pattern for the cache key and keeps it in the metric key", () => {
    expect(getLimit(share, "share", descriptor(["files", "files/a.pdf"]))).toMatchObject({
      requestsPerUnit: 3,
      metricKey: "share.files_files/*",
      sharedValues: ["files/*"],
    });
  });

  // As upstream's config_test.go TestShareThreshold ("share_threshold takes priority over value_to_metric, should use
  // wildcard pattern with *", and over detailed_metric likewise).
  it("keeps the pattern, star included, with value_to_metric", () => {
    expect(getLimit(share, "share", descriptor(["route", "api/v1"], ["method", "GET"]))).toMatchObject({
      requestsPerUnit: 60,
      metricKey: "share.route_api*.method",
      sharedValues: ["api*", undefined],
    });
  });

  it("keeps the pattern, star included, with detailed_metric, runtime values elsewhere", () => {
    expect(getLimit(share, "share", descriptor(["service", "svc/users"], ["endpoint", "get"]))?.metricKey).toBe(
      "share.service_svc/*.endpoint_get",
    );
  });

  it("shares only the levels that ask for it", () => {
    expect(getLimit(share, "share", descriptor(["path", "path/a"], ["file", "file/b"], ["type", "pdf"]))).toMatchObject(
      {
        requestsPerUnit: 120,
        metricKey: "share.path_path/*.file_file/*.type",
        sharedValues: ["path/*", undefined, undefined],
      },
    );
  });

  it("still lets an explicit value win over a shared wildcard", () => {
    expect(getLimit(share, "share", descriptor(["file", "test1"]))?.requestsPerUnit).toBe(50);
    expect(getLimit(share, "share", descriptor(["file", "test2"]))).toMatchObject({
      requestsPerUnit: 100,
      sharedValues: ["test*"],
    });
  });
});

describe("getLimit: metric keys with value_to_metric and detailed_metric", () => {
  const key = (...entries: [string, string][]) => getLimit(metrics, "metrics", descriptor(...entries))?.metricKey;

  it("puts runtime values of key-only levels that ask for it into the key", () => {
    expect(key(["route", "draw"], ["http_method", "GET"], ["subject_id", "123"])).toBe(
      "metrics.route_draw.http_method_GET.subject_id",
    );
    expect(key(["user", "alice"], ["action", "readfile"], ["resource", "foo"])).toBe(
      "metrics.user_alice.action_readfile.resource",
    );
    expect(key(["k1", "X"], ["k2", "Y"], ["k3", "Z"])).toBe("metrics.k1.k2_Y.k3");
    expect(key(["route", ""], ["http_method", "GET"], ["subject_id", "1"])).toBe(
      "metrics.route.http_method_GET.subject_id",
    );
  });

  it("puts the whole runtime value of a wildcard level with value_to_metric into the key", () => {
    expect(key(["wild", "foobar"])).toBe("metrics.wild_foobar");
    expect(key(["wild2", "foobar"])).toBe("metrics.wild2_foo*");
  });

  it("gives detailed_metric precedence over value_to_metric", () => {
    expect(key(["key7", "unspecified_value"])).toBeUndefined();
    expect(getLimit(basic, "test-domain", descriptor(["key7", "unspecified_value"]))?.metricKey).toBe(
      "test-domain.key7_unspecified_value",
    );
    expect(getLimit(basic, "test-domain", descriptor(["key7", "another_value"]))?.metricKey).toBe(
      "test-domain.key7_another_value",
    );
    expect(key(["both", "x"])).toBe("metrics.both_x");
    // detailed_metric keeps the separator even for an empty value; value_to_metric would not.
    expect(key(["both", ""])).toBe("metrics.both_");
  });

  it("keeps an explicit value in the key as configured", () => {
    expect(key(["client", "10.0.0.1"])).toBe("metrics.client_10.0.0.1");
  });
});

describe("getLimit: request overrides", () => {
  it("uses the override and the request's own entries as the metric key", () => {
    const withOverride = {
      ...descriptor(["key1", "value1"], ["subkey1", "something"]),
      limit: { requestsPerUnit: 42, unit: "HOUR" as const },
    };
    expect(getLimit(basic, "test-domain", withOverride)).toEqual({
      requestsPerUnit: 42,
      unit: "HOUR",
      name: "",
      unlimited: false,
      shadowMode: false,
      replaces: [],
      metricKey: "test-domain.key1_value1.subkey1_something",
      override: true,
      quotaMode: false,
      algorithm: "fixed_window",
      windowSeconds: 3600,
      unitMultiplier: 1,
      capacity: 42,
      emissionIntervalMicros: 0,
      lease: false,
    });
  });

  it("bypasses whitelists and unlimited rules, but not an unknown domain", () => {
    const limit = { requestsPerUnit: 1, unit: "MINUTE" as const };
    expect(getLimit(basic, "test-domain", { ...descriptor(["key2", "value3"]), limit })?.requestsPerUnit).toBe(1);
    expect(getLimit(basic, "test-domain", { ...descriptor(["key6", "x"]), limit })?.unlimited).toBe(false);
    expect(getLimit(basic, "foo_domain", { ...descriptor(["key2", "x"]), limit })).toBeUndefined();
  });

  it("omits empty values from the override metric key", () => {
    const limit = { requestsPerUnit: 1, unit: "MINUTE" as const };
    expect(getLimit(basic, "test-domain", { ...descriptor(["a", ""], ["b", "c"]), limit })?.metricKey).toBe(
      "test-domain.a.b_c",
    );
  });

  it("ignores an override without a unit (the service refuses such requests before looking up)", () => {
    const limit = { requestsPerUnit: 1, unit: "UNKNOWN" as const };
    expect(getLimit(basic, "test-domain", { ...descriptor(["key2", "x"]), limit })?.requestsPerUnit).toBe(20);
  });
});
