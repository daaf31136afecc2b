// Settings read from variables: defaults, errors that never echo a value, Go durations, each service's defaults.
import { describe, expect, it } from "vitest";
import { z } from "../../src/shared/zod";
import {
  envBoolean,
  envDurationMs,
  envNumber,
  parseDurationMs,
  settingsReader,
  SettingsError,
} from "../../src/shared/settings";
import { rateLimitSettings } from "../../src/ratelimit/settings";
import { proxySettings } from "../../src/proxy/settings";

/** The error `read` throws; the test fails when it throws none. */
function errorOf(read: () => unknown): Error {
  try {
    read();
  } catch (error) {
    return error as Error;
  }
  return expect.unreachable("no error was thrown");
}

describe("settings", () => {
  const Schema = z.object({
    FLAG: envBoolean(false),
    RATIO: envNumber(0.8, (s) => s.min(0).max(1)),
    EVERY: envDurationMs("10s"),
  });

  it("applies the defaults when variables are unset or empty", () => {
    expect(settingsReader(Schema, "t")({})).toEqual({ FLAG: false, RATIO: 0.8, EVERY: 10_000 });
    expect(settingsReader(Schema, "t")({ FLAG: "", RATIO: "", EVERY: "" })).toEqual({
      FLAG: false,
      RATIO: 0.8,
      EVERY: 10_000,
    });
  });

  it.each([
    ["true", true],
    ["TRUE", true],
    ["1", true],
    ["True", true],
    ["false", false],
    ["FALSE", false],
    ["0", false],
    ["False", false],
    ["t", true],
    ["T", true],
    ["f", false],
    ["F", false],
  ])("reads the boolean %s as %s", (text, expected) => {
    expect(settingsReader(Schema, "t")({ FLAG: text }).FLAG).toBe(expected);
  });

  it("names the malformed variable without echoing its value", () => {
    expect(() => settingsReader(Schema, "demo")({ FLAG: "yes-please" })).toThrowError(SettingsError);
    const error = errorOf(() => settingsReader(Schema, "demo")({ FLAG: "yes-please", RATIO: "2" }));
    expect(error).toBeInstanceOf(SettingsError);
    expect(error.message).toBe(
      'demo settings are invalid: FLAG: Invalid option: expected one of "true"|"1"|"t"|"false"|"0"|"f"; ' +
        "RATIO: Too big: expected number to be <=1",
    );
  });

  it("parses once per env object", () => {
    const env = { FLAG: "1" };
    const read = settingsReader(Schema, "t");
    expect(read(env)).toBe(read(env));
  });

  it("reads Go-style durations", () => {
    expect(parseDurationMs("10s")).toBe(10_000);
    expect(parseDurationMs("1m30s")).toBe(90_000);
    expect(parseDurationMs("150us")).toBe(0.15);
    expect(parseDurationMs("0")).toBe(0);
    expect(parseDurationMs("10")).toBeUndefined();
    expect(parseDurationMs("10 s")).toBeUndefined();
  });

  it("gives the rate limit service the spec's defaults", () => {
    expect(rateLimitSettings({})).toMatchObject({
      CONFIG_TYPE: "FILE",
      SHADOW_MODE: false,
      MERGE_DOMAIN_CONFIG: false,
      STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT: false,
      NEAR_LIMIT_RATIO: 0.8,
      CACHE_KEY_PREFIX: "",
      LocalCacheSizeInBytes: 0,
      LIMIT_RESPONSE_HEADERS_ENABLED: false,
      LIMIT_LIMIT_HEADER: "RateLimit-Limit",
      LIMIT_REMAINING_HEADER: "RateLimit-Remaining",
      LIMIT_RESET_HEADER: "RateLimit-Reset",
      FORCE_START_WITHOUT_INITIAL_CONFIG: false,
      HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED: false,
      RUNTIME_ROOT: "/srv/runtime_data/current",
      RUNTIME_SUBDIRECTORY: "",
      RUNTIME_APPDIRECTORY: "config",
      RUNTIME_IGNOREDOTFILES: false,
    });
  });

  it("refuses an unknown instance role", () => {
    expect(proxySettings({}).INSTANCE_ROLE).toBe("master");
    expect(() => proxySettings({ INSTANCE_ROLE: "primary" })).toThrowError(/INSTANCE_ROLE/);
  });
});
