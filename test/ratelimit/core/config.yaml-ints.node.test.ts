// Integer spellings as yaml.v2 (the reference's reader) resolves them: Go's ParseInt with base 0 once `_` is dropped,
// so `0o` and upper-case prefixes are ints, and base 60 (`1:30`), which it purposefully leaves out, stays a string.
import { describe, expect, it } from "vitest";
import { getLimit, loadConfig } from "../../../src/ratelimit/core/config";
import { descriptor } from "../../support/ratelimit-core";

const load = (requestsPerUnit: string, metadata = "{}") =>
  loadConfig(
    [
      {
        name: "f.yaml",
        text: `domain: d\ndescriptors:\n  - key: k\n    metadata: ${metadata}\n    rate_limit:\n      unit: minute\n      requests_per_unit: ${requestsPerUnit}\n`,
      },
    ],
    { mergeDomainConfig: false },
  );

describe("YAML integers as yaml.v2 reads them", () => {
  it.each([
    ["0o10", 8],
    ["0O10", 8],
    ["0o1_0", 8],
    ["+0o10", 8],
    ["0X1F", 31],
    ["0B101", 5],
    ["010", 8],
    ["0x10", 16],
    ["0b101", 5],
    ["1_000", 1000],
  ])("reads requests_per_unit: %s as %i", (text, value) => {
    const result = load(text);
    if (!result.ok) throw new Error(result.error.message);
    expect(getLimit(result.value, "d", descriptor(["k", "v"]))?.requestsPerUnit).toBe(value);
  });

  it.each([
    ["1:30", "!!str `1:30`"],
    ["1:30.5", "!!str `1:30.5`"],
    ["0o8", "!!str `0o8`"],
    ["0o", "!!str `0o`"],
    ["-0o10", "!!int `-0o10`"],
  ])("refuses requests_per_unit: %s as yaml.v2 does", (text, quoted) => {
    expect(load(text)).toEqual({
      ok: false,
      error: expect.objectContaining({
        message: `f.yaml: error loading config file: yaml: unmarshal errors:\n  line 7: cannot unmarshal ${quoted} into uint32`,
      }),
    });
  });

  it("keeps base 60 in metadata as a string and reads 0o as a number", () => {
    const result = load("1", "{time: 1:30, float: 1:30.5, octal: 0o10, hex: 0X1F}");
    if (!result.ok) throw new Error(result.error.message);
    expect(getLimit(result.value, "d", descriptor(["k", "v"]))?.metadata).toEqual({
      time: "1:30",
      float: "1:30.5",
      octal: 8,
      hex: 31,
    });
  });
});
