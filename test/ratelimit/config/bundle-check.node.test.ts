// The bundling step's check of config/ (src/ratelimit/config/bundle-check.ts): each directory's *.yaml set loaded with
// the Worker's loader, and the line of the key or value each refusal is about.
import { describe, expect, it } from "vitest";
import { checkBundle } from "../../../src/ratelimit/config/bundle-check";

/** A file of domain `d` whose one descriptor has these lines (indented under `- `). */
const descriptorFile = (...lines: string[]) =>
  ["domain: d", "descriptors:", "  - key: k", ...lines.map((line) => `    ${line}`), ""].join("\n");

describe("the bundling step's check", () => {
  it("finds nothing wrong with good files, in every directory", () => {
    const good = descriptorFile("rate_limit:", "  unit: second", "  requests_per_unit: 1");
    expect(checkBundle({ "ratelimit/a.yaml": good, "other/a.yaml": good, "top.yaml": good, "notes.txt": "x" }, {})).toEqual(
      [],
    );
  });

  it.each([
    ["an unknown unit", descriptorFile("rate_limit:", "  unit: minit", "  requests_per_unit: 1"), 5, "invalid rate limit unit 'minit'"],
    ["no unit", descriptorFile("rate_limit:", "  requests_per_unit: 1"), 4, "invalid rate limit unit ''"],
    ["a misspelt key", descriptorFile("rate_limt:", "  unit: second"), 4, "config error, unknown key 'rate_limt'"],
    [
      "a unit beside unlimited",
      descriptorFile("rate_limit:", "  unlimited: true", "  unit: second"),
      6,
      "should not specify rate limit unit when unlimited",
    ],
    [
      "burst on a window algorithm",
      descriptorFile("rate_limit:", "  unit: second", "  requests_per_unit: 1", "  algorithm: sliding_window", "  burst: 3"),
      8,
      "rate_limit.burst is only for algorithm token_bucket, not sliding_window",
    ],
    [
      "an unknown algorithm",
      descriptorFile("rate_limit:", "  unit: second", "  requests_per_unit: 1", "  algorithm: leaky"),
      7,
      "rate_limit.algorithm 'leaky' is not one of fixed_window, sliding_window, token_bucket",
    ],
    [
      "a unit_multiplier of 0",
      descriptorFile("rate_limit:", "  unit: second", "  requests_per_unit: 1", "  unit_multiplier: 0"),
      7,
      "rate_limit.unit_multiplier must be an integer from 1 to 1000000, but found '0'",
    ],
    [
      "an empty replaces entry",
      descriptorFile("rate_limit:", "  unit: second", "  requests_per_unit: 1", "  replaces:", "    - name: ''"),
      7,
      "should not have an empty replaces entry",
    ],
    [
      "share_threshold without a wildcard",
      descriptorFile("share_threshold: true"),
      4,
      "share_threshold can only be used with wildcard values (containing '*'), but found key 'k'",
    ],
    [
      "a repeated descriptor",
      "domain: d\ndescriptors:\n  - key: k\n    value: v\n  - key: j\n  - key: k\n    value: v\n",
      6,
      "duplicate descriptor composite key 'd.k_v'",
    ],
    ["a descriptor without a key", "domain: d\ndescriptors:\n  - key: k\n  - value: v\n", 4, "descriptor has empty key"],
    [
      "a YAML syntax error",
      descriptorFile("rate_limit: ["),
      5,
      "error loading config file: Flow sequence in block collection must be sufficiently indented and end with a ] " +
        "at line 5, column 1",
    ],
    [
      "a value of the wrong type",
      descriptorFile("rate_limit:", "  unit: second", "  requests_per_unit: abc"),
      6,
      "error loading config file: yaml: unmarshal errors:\n  line 6: cannot unmarshal !!str `abc` into uint32",
    ],
  ])("names the line of %s", (_label, text, line, message) => {
    expect(checkBundle({ "ratelimit/x.yaml": text }, {})).toEqual([{ path: "ratelimit/x.yaml", line, message }]);
  });

  it("names the file without a line when the problem is no line of it", () => {
    expect(checkBundle({ "ratelimit/x.yaml": "descriptors: []\n" }, {})).toEqual([
      { path: "ratelimit/x.yaml", message: "config file cannot have empty domain" },
    ]);
  });

  it("loads each directory as one set, with the merge rule and limits of the variables given", () => {
    const one = "domain: same\ndescriptors: []\n";
    const two = "# the second file\ndomain: same\ndescriptors: []\n";
    const bundle = { "ratelimit/a.yaml": one, "ratelimit/b.yaml": two, "other/b.yaml": two, "c.yaml": "domain: top\n" };
    expect(checkBundle(bundle, {})).toEqual([
      { path: "ratelimit/b.yaml", line: 2, message: "duplicate domain 'same' in config file" },
    ]);
    expect(checkBundle(bundle, { MERGE_DOMAIN_CONFIG: "true" })).toEqual([]);
    expect(checkBundle(bundle, { RATELIMIT_CONFIG_MAX_FILE_BYTES: "10" })).toEqual([
      { path: "c.yaml", message: "the file is larger than 10 bytes (the limit set by RATELIMIT_CONFIG_MAX_FILE_BYTES)" },
      { path: "other/b.yaml", message: "the file is larger than 10 bytes (the limit set by RATELIMIT_CONFIG_MAX_FILE_BYTES)" },
      { path: "ratelimit/a.yaml", message: "the file is larger than 10 bytes (the limit set by RATELIMIT_CONFIG_MAX_FILE_BYTES)" },
    ]);
  });
});
