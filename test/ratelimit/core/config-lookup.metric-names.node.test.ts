// Metric keys of wildcard levels as the reference's valueToMetricFullKey writes them (config_impl.go at f2fb157): a
// pattern in a key-only composite, or one straddling key and value, is written after the request's key; value_to_metric
// and share_threshold on such levels; an exact level by its key and value.
import { describe, expect, it } from "vitest";
import { getLimit } from "../../../src/ratelimit/core/config-lookup";
import { descriptor, loadConfigText } from "../../support/ratelimit-core";

const config = loadConfigText(`domain: d
descriptors:
  - key: "path*"
    rate_limit: {unit: minute, requests_per_unit: 1}
  - key: "route*"
    value_to_metric: true
    rate_limit: {unit: minute, requests_per_unit: 2}
  - key: "file*"
    share_threshold: true
    rate_limit: {unit: minute, requests_per_unit: 3}
  - key: a
    value: "b*"
    rate_limit: {unit: minute, requests_per_unit: 4}
  - key: "k_"
    rate_limit: {unit: minute, requests_per_unit: 5}
`);
const limitOf = (key: string, value: string) => getLimit(config, "d", descriptor([key, value]));

describe("getLimit: metric keys of wildcard levels, as the reference names them", () => {
  it.each([
    ["a key-only pattern, empty value", "pathX", "", 1, "d.pathX_path*"],
    ["a key-only pattern, with a value", "pathX", "v", 1, "d.pathX_path*"],
    ["a key-only pattern with value_to_metric", "routeY", "GET", 2, "d.routeY_GET"],
    ["a key-only pattern with value_to_metric, empty value", "routeY", "", 2, "d.routeY"],
    ["a key-only share_threshold pattern", "fileZ", "x", 3, "d.fileZ_file*"],
    ["a value pattern matched as written", "a", "bcd", 4, "d.a_b*"],
    ["a value pattern straddled by the request's key", "a_b", "x", 4, "d.a_b_a_b*"],
    ["an exact match of a key ending in _ by an empty value", "k", "", 5, "d.k"],
  ])("names %s", (_, key, value, requestsPerUnit, metricKey) => {
    expect(limitOf(key, value)).toMatchObject({ requestsPerUnit, metricKey });
  });

  it("shares the key-only pattern's counter as the reference does (the pattern as the value)", () => {
    expect(limitOf("fileZ", "x")?.sharedValues).toEqual(["file*"]);
  });
});
