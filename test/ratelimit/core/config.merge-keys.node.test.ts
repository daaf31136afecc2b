// YAML merge keys (`<<`) in rate limit configuration, resolved as the reference's yaml.v2 resolves them.

import { describe, expect, it } from "vitest";
import { getLimit, loadConfig } from "../../../src/ratelimit/core/config";
import { DEFAULT_CONFIG_LIMITS } from "../../../src/ratelimit/core/limits";
import { descriptor } from "../../support/ratelimit-core";

function load(text: string, aliasNodes = DEFAULT_CONFIG_LIMITS.aliasNodes.max) {
  const limits = { ...DEFAULT_CONFIG_LIMITS, aliasNodes: { ...DEFAULT_CONFIG_LIMITS.aliasNodes, max: aliasNodes } };
  return loadConfig([{ name: "merge.yaml", text }], { mergeDomainConfig: false, limits });
}

function limitOf(text: string, ...entries: [string, string][]) {
  const result = load(text);
  if (!result.ok) throw new Error(result.error.message);
  const limit = getLimit(result.value, "d", descriptor(...entries));
  return limit && { unit: limit.unit, requestsPerUnit: limit.requestsPerUnit };
}

const WANT_MAP = "merge.yaml: error loading config file: yaml: map merge requires map or sequence of maps as the value";

describe("loadConfig: merge keys", () => {
  it("merges an anchored map, a key written after the merge overriding it", () => {
    const text =
      "domain: d\ndescriptors:\n  - key: a\n    rate_limit: &m10 {unit: minute, requests_per_unit: 10}\n" +
      "  - key: b\n    rate_limit:\n      <<: *m10\n      requests_per_unit: 20\n";
    expect(limitOf(text, ["a", "x"])).toEqual({ unit: "MINUTE", requestsPerUnit: 10 });
    expect(limitOf(text, ["b", "x"])).toEqual({ unit: "MINUTE", requestsPerUnit: 20 });
  });

  it("lets the merge override a key written before it, and earlier maps of a list win over later ones", () => {
    const text =
      "domain: d\ndescriptors:\n  - key: a\n    rate_limit: &ten {unit: minute, requests_per_unit: 10}\n" +
      "  - key: b\n    rate_limit: &five {unit: hour, requests_per_unit: 5, unlimited: false}\n" +
      "  - key: c\n    rate_limit:\n      requests_per_unit: 1\n      <<: [*ten, *five]\n";
    expect(limitOf(text, ["c", "x"])).toEqual({ unit: "MINUTE", requestsPerUnit: 10 });
  });

  it("merges an inline map, and one tagged !!merge", () => {
    const text =
      "domain: d\ndescriptors:\n  - key: a\n    rate_limit: {<<: {unit: day, requests_per_unit: 2}}\n" +
      "  - key: b\n    rate_limit: {!!merge <<: {unit: week, requests_per_unit: 3}}\n";
    expect(limitOf(text, ["a", "x"])).toEqual({ unit: "DAY", requestsPerUnit: 2 });
    expect(limitOf(text, ["b", "x"])).toEqual({ unit: "WEEK", requestsPerUnit: 3 });
  });

  it("merges whole descriptors, a rate_limit written beside the merge keeping the merged one's other fields", () => {
    const text =
      "domain: d\ndescriptors:\n  - &base\n    key: e\n    rate_limit: {unit: second, requests_per_unit: 3}\n" +
      "  - <<: *base\n    value: v\n    rate_limit: {requests_per_unit: 4}\n";
    expect(limitOf(text, ["e", "other"])).toEqual({ unit: "SECOND", requestsPerUnit: 3 });
    expect(limitOf(text, ["e", "v"])).toEqual({ unit: "SECOND", requestsPerUnit: 4 });
  });

  it("refuses a merge of anything but a map or a list of maps", () => {
    const start = "domain: d\ndescriptors:\n  - key: a\n    value: &scalar x\n    rate_limit: &list [{unit: day}]\n";
    for (const merge of ["5", "~", "*scalar", "*list", "[{unit: day}, 3]", "[[{unit: day}]]"]) {
      const result = load(`${start}  - key: b\n    rate_limit:\n      <<: ${merge}\n`);
      expect(!result.ok && result.error.message, merge).toBe(WANT_MAP);
    }
  });

  it("keeps a quoted << as an ordinary key, which is unknown", () => {
    const result = load('domain: d\ndescriptors:\n  - key: a\n    "<<": {unit: day}\n');
    expect(!result.ok && result.error.message).toBe("merge.yaml: config error, unknown key '<<'");
  });

  it("counts what merges through aliases add against the alias budget", () => {
    const text =
      "domain: d\ndescriptors:\n  - key: a\n    rate_limit: &m {unit: minute, requests_per_unit: 1}\n" +
      "  - key: b\n    rate_limit: {<<: [*m, *m, *m]}\n";
    // Each alias adds five nodes: the map and its two keys and values.
    expect(load(text, 15).ok).toBe(true);
    const refused = load(text, 14);
    expect(!refused.ok && refused.error.message).toBe(
      "merge.yaml: aliases expand to more than 14 nodes in this set of files " +
        "(the limit set by RATELIMIT_CONFIG_MAX_ALIAS_NODES)",
    );
  });
});
