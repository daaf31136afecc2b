// Cache keys, epoch-aligned windows, units and reset times.

import { describe, expect, it } from "vitest";
import { generateCacheKey } from "../../../src/ratelimit/core/cache-key";
import {
  calculateReset,
  parseUnit,
  unitFromNumber,
  unitToDivider,
  windowStart,
} from "../../../src/ratelimit/core/units";

const entry = (key: string, value: string) => ({ key, value });

describe("generateCacheKey", () => {
  it("composes domain, entries and window start (SECOND)", () => {
    expect(generateCacheKey("", "domain", [entry("key", "value")], "SECOND", 1234)).toEqual({
      key: "domain_key_value_1234",
      counterName: "domain_key_value_",
      windowStart: 1234,
      windowEnd: 1235,
    });
  });

  it("aligns the window to the unit (MINUTE, nested entries)", () => {
    const key = generateCacheKey(
      "",
      "domain",
      [entry("key2", "value2"), entry("subkey2", "subvalue2")],
      "MINUTE",
      1234,
    );
    expect(key).toEqual({
      key: "domain_key2_value2_subkey2_subvalue2_1200",
      counterName: "domain_key2_value2_subkey2_subvalue2_",
      windowStart: 1200,
      windowEnd: 1260,
    });
  });

  it("aligns HOUR and DAY windows to the epoch", () => {
    const entries = [entry("key3", "value3"), entry("subkey3", "subvalue3")];
    expect(generateCacheKey("", "domain", entries, "HOUR", 1000000).key).toBe(
      "domain_key3_value3_subkey3_subvalue3_997200",
    );
    expect(generateCacheKey("", "domain", entries, "DAY", 1000000).key).toBe(
      "domain_key3_value3_subkey3_subvalue3_950400",
    );
  });

  it("prepends the prefix verbatim", () => {
    expect(generateCacheKey("prefix:", "domain", [entry("key", "value")], "SECOND", 1234)).toMatchObject({
      key: "prefix:domain_key_value_1234",
      counterName: "prefix:domain_key_value_",
    });
  });

  it("puts the shared wildcard pattern, star included, in place of the value", () => {
    expect(generateCacheKey("", "domain", [entry("files", "files/a.pdf")], "SECOND", 1234, ["files/*"]).key).toBe(
      "domain_files_files/*_1234",
    );
    expect(generateCacheKey("", "d", [entry("a", "x"), entry("b", "y")], "MINUTE", 1234, [undefined, "y*"]).key).toBe(
      "d_a_x_b_y*_1200",
    );
  });

  it("keeps an empty value as an empty segment", () => {
    expect(generateCacheKey("", "domain", [entry("key", "")], "SECOND", 5).key).toBe("domain_key__5");
  });
});

describe("units", () => {
  it("converts units to window lengths", () => {
    expect(
      (["SECOND", "MINUTE", "HOUR", "DAY", "WEEK", "MONTH", "YEAR"] as const).map((unit) => unitToDivider(unit)),
    ).toEqual([1, 60, 3600, 86400, 604800, 2592000, 31536000]);
  });

  it("parses unit names case-insensitively and refuses UNKNOWN and unknown words", () => {
    expect(parseUnit("second")).toBe("SECOND");
    expect(parseUnit("Week")).toBe("WEEK");
    expect(parseUnit("unknown")).toBeUndefined();
    expect(parseUnit("foo")).toBeUndefined();
    expect(parseUnit("")).toBeUndefined();
  });

  it("maps proto enum numbers to names", () => {
    expect([0, 1, 2, 3, 4, 5, 6, 7].map(unitFromNumber)).toEqual([
      "UNKNOWN",
      "SECOND",
      "MINUTE",
      "HOUR",
      "DAY",
      "MONTH",
      "YEAR",
      "WEEK",
    ]);
    expect(unitFromNumber(8)).toBeUndefined();
    expect(unitFromNumber(1.5)).toBeUndefined();
  });

  it("starts WEEK, MONTH and YEAR windows at epoch multiples", () => {
    expect(windowStart("WEEK", 1000000)).toBe(604800);
    expect(windowStart("MONTH", 1000000)).toBe(0);
    expect(windowStart("YEAR", 40000000)).toBe(31536000);
  });

  it("computes the seconds until the window resets", () => {
    expect(calculateReset("MINUTE", 2222)).toBe(58);
    expect(calculateReset("SECOND", 2222)).toBe(1);
    expect(calculateReset("HOUR", 1000000)).toBe(800);
    expect(calculateReset("MINUTE", 1200)).toBe(60);
    expect(calculateReset("DAY", 86399)).toBe(1);
  });
});
