// Loading and validating YAML configuration: accepted shapes and every rejection message, word for word.

import { describe, expect, it } from "vitest";
import { dumpConfig, getLimit, loadConfig } from "../../../src/ratelimit/core/config";
import { descriptor, fixture, loadError, loadFixtures } from "../../support/ratelimit-core";

describe("loadConfig: accepted files", () => {
  it("loads a basic file and lists its domain", () => {
    const config = loadFixtures(["basic.yaml"]);
    expect(config.domains).toEqual(["test-domain"]);
  });

  it("loads several files with distinct domains, in load order", () => {
    const config = loadFixtures(["basic.yaml", "other-domain.yaml"]);
    expect(config.domains).toEqual(["test-domain", "another"]);
  });

  it("accepts an empty configuration set", () => {
    const result = loadConfig([], { mergeDomainConfig: false });
    expect(result.ok && result.value.domains).toEqual([]);
  });

  it("merges a domain declared in two files when mergeDomainConfig is true", () => {
    const config = loadFixtures(["merge-domain-1.yaml", "merge-domain-2.yaml"], true);
    expect(config.domains).toEqual(["merged"]);
    expect(getLimit(config, "merged", descriptor(["key1", "value1"]))?.requestsPerUnit).toBe(10);
    expect(getLimit(config, "merged", descriptor(["key2", "value2"]))?.requestsPerUnit).toBe(20);
  });

  it("reads YAML 1.1 scalars as the reference does (yes, hex, ints as strings, last repeated key)", () => {
    const config = loadFixtures(["yaml-1-1-scalars.yaml"]);
    const port = getLimit(config, "scalars", descriptor(["port", "8080"]));
    expect(port).toMatchObject({ requestsPerUnit: 16, shadowMode: true, metricKey: "scalars.port_8080" });
    expect(getLimit(config, "scalars", descriptor(["flag", "true"]))?.requestsPerUnit).toBe(2);
  });

  it("resolves anchors and aliases", () => {
    const text =
      "domain: d\ndescriptors:\n  - key: a\n    rate_limit: &shared\n      unit: minute\n" +
      "      requests_per_unit: 3\n  - key: b\n    rate_limit: *shared\n";
    const result = loadConfig([{ name: "anchors.yaml", text }], { mergeDomainConfig: false });
    if (!result.ok) throw new Error(result.error.message);
    expect(getLimit(result.value, "d", descriptor(["b", "x"]))).toMatchObject({
      requestsPerUnit: 3,
      unit: "MINUTE",
    });
  });

  it("decodes a repeated rate_limit into the earlier one, as yaml.v2 decodes into the struct it points to", () => {
    const text =
      "domain: d\ndescriptors:\n  - key: f\n    rate_limit: {unit: day, requests_per_unit: 1}\n" +
      "    rate_limit: {requests_per_unit: 2}\n  - key: g\n    rate_limit: {unit: day}\n    rate_limit: ~\n";
    const result = loadConfig([{ name: "repeated.yaml", text }], { mergeDomainConfig: false });
    if (!result.ok) throw new Error(result.error.message);
    expect(getLimit(result.value, "d", descriptor(["f", "x"]))).toMatchObject({ requestsPerUnit: 2, unit: "DAY" });
    expect(getLimit(result.value, "d", descriptor(["g", "x"]))).toBeUndefined();
  });

  it("reads only the first document of a file, as yaml.v2 does", () => {
    const result = loadConfig([{ name: "two-docs.yaml", text: "domain: d\n---\ndomain: e\n" }], {
      mergeDomainConfig: false,
    });
    expect(result.ok && result.value.domains).toEqual(["d"]);
  });

  it("accepts unlimited with an invalid unit, which stays UNKNOWN", () => {
    const config = loadFixtures(["unlimited-with-bad-unit.yaml"]);
    expect(getLimit(config, "unlimited-domain", descriptor(["key1", "x"]))).toMatchObject({
      unlimited: true,
      unit: "UNKNOWN",
      requestsPerUnit: 7,
    });
  });

  it("accepts every unit name in any case", () => {
    const units = ["second", "MINUTE", "Hour", "day", "week", "month", "year"];
    const text = `domain: u\ndescriptors:\n${units
      .map((unit, i) => `  - key: k${i}\n    rate_limit:\n      unit: ${unit}\n      requests_per_unit: 1\n`)
      .join("")}`;
    const result = loadConfig([{ name: "units.yaml", text }], { mergeDomainConfig: false });
    if (!result.ok) throw new Error(result.error.message);
    expect(units.map((_, i) => getLimit(result.value, "u", descriptor([`k${i}`, "v"]))?.unit)).toEqual([
      "SECOND",
      "MINUTE",
      "HOUR",
      "DAY",
      "WEEK",
      "MONTH",
      "YEAR",
    ]);
  });
});

describe("loadConfig: rejections (reference wording, prefixed with the file name)", () => {
  const cases: [string[], string][] = [
    [["bad-limit-unit.yaml"], "bad-limit-unit.yaml: invalid rate limit unit 'foo'"],
    [["missing-unit.yaml"], "missing-unit.yaml: invalid rate limit unit ''"],
    [["unknown-unit.yaml"], "unknown-unit.yaml: invalid rate limit unit 'unknown'"],
    [["empty-domain.yaml"], "empty-domain.yaml: config file cannot have empty domain"],
    [["empty-file.yaml"], "empty-file.yaml: config file cannot have empty domain"],
    [["basic.yaml", "duplicate-domain.yaml"], "duplicate-domain.yaml: duplicate domain 'test-domain' in config file"],
    [["empty-key.yaml"], "empty-key.yaml: descriptor has empty key"],
    [["duplicate-key.yaml"], "duplicate-key.yaml: duplicate descriptor composite key 'test-domain.key1_value1'"],
    [
      ["duplicate-nested-key.yaml"],
      "duplicate-nested-key.yaml: duplicate descriptor composite key 'test-domain.key1_value1.subkey1'",
    ],
    [["unlimited-with-unit.yaml"], "unlimited-with-unit.yaml: should not specify rate limit unit when unlimited"],
    [
      ["share-threshold-without-wildcard.yaml"],
      "share-threshold-without-wildcard.yaml: share_threshold can only be used with wildcard values " +
        "(containing '*'), but found key 'files_files'",
    ],
    [["replaces-empty.yaml"], "replaces-empty.yaml: should not have an empty replaces entry"],
    [["replaces-without-name.yaml"], "replaces-without-name.yaml: should not have an empty replaces entry"],
    [["replaces-self.yaml"], "replaces-self.yaml: replaces should not contain name of same descriptor"],
    [["unknown-key.yaml"], "unknown-key.yaml: config error, unknown key 'ratelimit'"],
    [["non-string-key.yaml"], "non-string-key.yaml: config error, key is not of type string: 0.25"],
    [["non-map-list.yaml"], "non-map-list.yaml: config error, yaml file contains list of type other than map: a"],
    [["float-requests-per-unit.yaml"], "float-requests-per-unit.yaml: error checking config"],
    [
      ["negative-requests-per-unit.yaml"],
      "negative-requests-per-unit.yaml: error loading config file: yaml: unmarshal errors:\n" +
        "  line 6: cannot unmarshal !!int `-1` into uint32",
    ],
    [
      ["too-large-requests-per-unit.yaml"],
      "too-large-requests-per-unit.yaml: error loading config file: yaml: unmarshal errors:\n" +
        "  line 6: cannot unmarshal !!int `4294967296` into uint32",
    ],
    [
      ["string-for-bool.yaml"],
      "string-for-bool.yaml: error loading config file: yaml: unmarshal errors:\n" +
        "  line 4: cannot unmarshal !!str `not-a-b...` into bool",
    ],
    [
      ["string-for-number.yaml"],
      "string-for-number.yaml: error loading config file: yaml: unmarshal errors:\n" +
        "  line 6: cannot unmarshal !!str `5` into uint32",
    ],
    [
      ["descriptors-not-a-list.yaml"],
      "descriptors-not-a-list.yaml: error loading config file: yaml: unmarshal errors:\n" +
        "  line 2: cannot unmarshal !!str `everything` into []config.YamlDescriptor",
    ],
    [
      ["rate-limit-not-a-map.yaml"],
      "rate-limit-not-a-map.yaml: error loading config file: yaml: unmarshal errors:\n" +
        "  line 4: cannot unmarshal !!str `fast` into config.YamlRateLimit",
    ],
    [
      ["top-level-list.yaml"],
      "top-level-list.yaml: error loading config file: yaml: unmarshal errors:\n" +
        "  line 1: cannot unmarshal !!seq into map[interface {}]interface {}",
    ],
  ];

  it.each(cases)("rejects %j", (files, message) => {
    expect(loadError(files)).toBe(message);
  });

  it("reports a YAML syntax error as an error loading the file", () => {
    expect(loadError(["invalid-yaml.yaml"])).toBe(
      'invalid-yaml.yaml: error loading config file: Missing closing "quote at line 4, column 1',
    );
  });

  it("refuses an alias that contains itself", () => {
    const text = "domain: d\ndescriptors: &loop\n  - key: a\n    descriptors: *loop\n";
    const result = loadConfig([{ name: "loop.yaml", text }], { mergeDomainConfig: false });
    expect(!result.ok && result.error.message).toBe("loop.yaml: error loading config file: bad alias");
  });

  it("refuses a domain declared in two files unless merging is enabled", () => {
    expect(loadError(["merge-domain-1.yaml", "merge-domain-2.yaml"])).toBe(
      "merge-domain-2.yaml: duplicate domain 'merged' in config file",
    );
  });

  it("refuses a duplicate descriptor across merged files", () => {
    expect(loadError(["merge-domain-1.yaml", "merge-domain-1.yaml"], true)).toBe(
      "merge-domain-1.yaml: duplicate descriptor composite key 'merged.key1_value1'",
    );
  });

  it("rejects the whole set when one file is bad", () => {
    const result = loadConfig([fixture("other-domain.yaml"), fixture("bad-limit-unit.yaml")], {
      mergeDomainConfig: false,
    });
    expect(result).toEqual({
      ok: false,
      error: { file: "bad-limit-unit.yaml", message: "bad-limit-unit.yaml: invalid rate limit unit 'foo'" },
    });
  });

  it("checks every file's keys before building any domain", () => {
    // The duplicate domain in the second file is never reached: the third file's unknown key comes first.
    expect(loadError(["basic.yaml", "duplicate-domain.yaml", "unknown-key.yaml"])).toBe(
      "unknown-key.yaml: config error, unknown key 'ratelimit'",
    );
  });

  it("collects every type error of a file", () => {
    const text = "domain: d\ndescriptors:\n  - key: k\n    shadow_mode: 3\n    detailed_metric: maybe\n";
    const result = loadConfig([{ name: "two.yaml", text }], { mergeDomainConfig: false });
    expect(!result.ok && result.error.message).toBe(
      "two.yaml: error loading config file: yaml: unmarshal errors:\n" +
        "  line 4: cannot unmarshal !!int `3` into bool\n" +
        "  line 5: cannot unmarshal !!str `maybe` into bool",
    );
  });
});

describe("dumpConfig", () => {
  it("prints one line per rule, domains sorted, descriptors in config order", () => {
    const config = loadFixtures(["basic.yaml", "other-domain.yaml"]);
    expect(dumpConfig(config)).toBe(
      [
        "another.remote_address: unit=SECOND requests_per_unit=3, shadow_mode: true, quota_mode: false",
        "test-domain.key1_value1.subkey1: unit=SECOND requests_per_unit=5, shadow_mode: false, quota_mode: false",
        "test-domain.key1_value1.subkey1_subvalue1: unit=SECOND requests_per_unit=10, shadow_mode: false, quota_mode: false",
        "test-domain.key2: unit=MINUTE requests_per_unit=20, shadow_mode: false, quota_mode: false",
        "test-domain.key2_value2: unit=MINUTE requests_per_unit=30, shadow_mode: false, quota_mode: false",
        "test-domain.key3: unit=HOUR requests_per_unit=1, shadow_mode: false, quota_mode: false",
        "test-domain.key4: unit=DAY requests_per_unit=1, shadow_mode: false, quota_mode: false",
        "test-domain.key5_value5: unit=DAY requests_per_unit=15, shadow_mode: false, quota_mode: false",
        "test-domain.key5_value5.subkey5_subvalue5: unit=DAY requests_per_unit=25, shadow_mode: false, quota_mode: false",
        "test-domain.key6: unit=UNKNOWN requests_per_unit=0, shadow_mode: false, quota_mode: false",
        "test-domain.key7: unit=MINUTE requests_per_unit=70, shadow_mode: false, quota_mode: false",
        "test-domain.key8: unit=MINUTE requests_per_unit=0, shadow_mode: false, quota_mode: false",
        "test-domain.key9: unit=WEEK requests_per_unit=9, shadow_mode: false, quota_mode: false",
        "test-domain.key10: unit=MONTH requests_per_unit=10, shadow_mode: false, quota_mode: false",
        "test-domain.key11: unit=YEAR requests_per_unit=11, shadow_mode: false, quota_mode: false",
        "",
      ].join("\n"),
    );
  });

  it("prints nothing for an empty configuration", () => {
    const result = loadConfig([], { mergeDomainConfig: false });
    expect(result.ok && dumpConfig(result.value)).toBe("");
  });

  it("keeps merged descriptors in file order", () => {
    const config = loadFixtures(["merge-domain-1.yaml", "merge-domain-2.yaml"], true);
    expect(dumpConfig(config)).toBe(
      "merged.key1_value1: unit=MINUTE requests_per_unit=10, shadow_mode: false, quota_mode: false\n" +
        "merged.key2_value2: unit=MINUTE requests_per_unit=20, shadow_mode: false, quota_mode: false\n",
    );
  });
});
