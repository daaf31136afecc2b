// The xDS form of a configuration: RateLimitConfig resources in proto3 JSON turned into YAML files (exact text,
// field names, enums, sort order), every refusal word for word, and what loadConfig then says about the files.

import { describe, expect, it } from "vitest";
import { dumpConfig, getLimit, loadConfig } from "../../../src/ratelimit/core/config";
import { UNIT_NAMES } from "../../../src/ratelimit/core/units";
import { xdsConfigsToFiles } from "../../../src/ratelimit/config/xds";
import { descriptor } from "../../support/ratelimit-core";
import { shopConfig } from "../../support/ratelimit-xds";

// The int64 as a string, as proto3 JSON may write it.
const SHOP_CAMEL = shopConfig("100");

const SHOP_SNAKE = {
  name: "shop-config",
  domain: "shop",
  descriptors: [
    {
      key: "path",
      value: "/login",
      rate_limit: { unit: "MINUTE", requests_per_unit: 5, name: "login", replaces: [{ name: "base" }] },
      shadow_mode: true,
      detailed_metric: true,
    },
    {
      key: "user",
      descriptors: [{ key: "plan", value: "free", rate_limit: { unit: "HOUR", requests_per_unit: 100 } }],
    },
    { key: "internal", rate_limit: { unlimited: true } },
  ],
};

const SHOP_YAML =
  "domain: shop\n" +
  "descriptors:\n" +
  "  - key: path\n" +
  "    value: /login\n" +
  "    rate_limit:\n" +
  "      unit: MINUTE\n" +
  "      requests_per_unit: 5\n" +
  "      name: login\n" +
  "      replaces:\n" +
  "        - name: base\n" +
  "    shadow_mode: true\n" +
  "    detailed_metric: true\n" +
  "  - key: user\n" +
  "    descriptors:\n" +
  "      - key: plan\n" +
  "        value: free\n" +
  "        rate_limit:\n" +
  "          unit: HOUR\n" +
  "          requests_per_unit: 100\n" +
  "  - key: internal\n" +
  "    rate_limit:\n" +
  "      unit: UNKNOWN\n" +
  "      requests_per_unit: 0\n" +
  "      unlimited: true\n";

/** A resource with one top-level descriptor `k` carrying this rate_limit. */
const withPolicy = (name: string, rateLimit: unknown) => ({
  name,
  domain: name,
  descriptors: [{ key: "k", rateLimit }],
});

/** What a snapshot of one resource converts to: one file of that name and YAML text. */
const oneFile = (name: string, text: string) => ({ ok: true, value: [{ name, text }] });

/** The message a set of resources is refused with (fails the test when they convert). */
function conversionError(resources: unknown[]): string {
  const result = xdsConfigsToFiles(resources);
  if (result.ok) throw new Error(`expected a refusal, got ${JSON.stringify(result.value)}`);
  return result.error;
}

/** Converts resources that must convert, then loads them as the Worker does. */
function loadXds(resources: unknown[]) {
  const files = xdsConfigsToFiles(resources);
  if (!files.ok) throw new Error(`conversion failed: ${files.error}`);
  return loadConfig(files.value, { mergeDomainConfig: false });
}

describe("xdsConfigsToFiles: the YAML each resource stands for", () => {
  it("writes a nested camelCase resource as the exact YAML file, named after the resource", () => {
    expect(xdsConfigsToFiles([SHOP_CAMEL])).toEqual({ ok: true, value: [{ name: "shop-config", text: SHOP_YAML }] });
  });

  it("gives the same text for the original snake_case field names", () => {
    expect(xdsConfigsToFiles([SHOP_SNAKE])).toEqual({ ok: true, value: [{ name: "shop-config", text: SHOP_YAML }] });
  });

  it("loads the written file into the rules the resource describes", () => {
    const loaded = loadXds([SHOP_CAMEL]);
    if (!loaded.ok) throw new Error(loaded.error.message);
    expect(loaded.value.domains).toEqual(["shop"]);
    expect(getLimit(loaded.value, "shop", descriptor(["path", "/login"]))).toMatchObject({
      requestsPerUnit: 5,
      unit: "MINUTE",
      name: "login",
      shadowMode: true,
      replaces: ["base"],
      unlimited: false,
    });
    expect(getLimit(loaded.value, "shop", descriptor(["user", "u1"], ["plan", "free"]))).toMatchObject({
      requestsPerUnit: 100,
      unit: "HOUR",
    });
    expect(getLimit(loaded.value, "shop", descriptor(["internal", "x"]))).toMatchObject({
      unlimited: true,
      unit: "UNKNOWN",
    });
  });

  it("reads every unit given as its enum number", () => {
    const resources = UNIT_NAMES.slice(1).map((_, i) => withPolicy(`n${i + 1}`, { unit: i + 1, requestsPerUnit: 1 }));
    const result = xdsConfigsToFiles(resources);
    if (!result.ok) throw new Error(result.error);
    expect(result.value.map((file) => file.text.split("\n")[4])).toEqual([
      "      unit: SECOND",
      "      unit: MINUTE",
      "      unit: HOUR",
      "      unit: DAY",
      "      unit: MONTH",
      "      unit: YEAR",
      "      unit: WEEK",
    ]);
  });

  it("writes unit 2 as MINUTE, word for word", () => {
    expect(xdsConfigsToFiles([withPolicy("two", { unit: 2, requestsPerUnit: 3 })])).toEqual(
      oneFile(
        "two",
        "domain: two\ndescriptors:\n  - key: k\n    rate_limit:\n      unit: MINUTE\n      requests_per_unit: 3\n",
      ),
    );
  });

  it("leaves out unset, null, empty and false fields", () => {
    const resource = {
      name: "sparse",
      domain: "sparse",
      descriptors: [
        {
          key: "k",
          value: "",
          rateLimit: { unit: "SECOND", requestsPerUnit: 1, unlimited: false, name: "", replaces: [] },
          descriptors: null,
          shadowMode: false,
          detailedMetric: null,
          quotaMode: false,
        },
        { key: "j", rateLimit: null },
      ],
    };
    expect(xdsConfigsToFiles([resource])).toEqual(
      oneFile(
        "sparse",
        "domain: sparse\ndescriptors:\n  - key: k\n    rate_limit:\n      unit: SECOND\n      requests_per_unit: 1\n" +
          "  - key: j\n",
      ),
    );
  });

  it("carries quota_mode, metadata and this project's algorithm extension into the YAML", () => {
    const resource = {
      name: "new",
      domain: "new",
      descriptors: [
        {
          key: "k",
          quota_mode: true,
          metadata: { tier: "gold", limits: { burst: 5 } },
          rateLimit: {
            unit: "SECOND",
            requestsPerUnit: 10,
            algorithm: { kind: "TOKEN_BUCKET", unitMultiplier: 2, burst: 20 },
          },
        },
      ],
    };
    expect(xdsConfigsToFiles([resource])).toEqual(
      oneFile(
        "new",
        "domain: new\ndescriptors:\n  - key: k\n    rate_limit:\n      unit: SECOND\n      requests_per_unit: 10\n" +
          "      algorithm: token_bucket\n      unit_multiplier: 2\n      burst: 20\n    quota_mode: true\n" +
          "    metadata:\n      tier: gold\n      limits:\n        burst: 5\n",
      ),
    );
  });

  it("lets the YAML validation refuse an explicit unit_multiplier of 0 by name", () => {
    const resource = {
      name: "zero",
      domain: "zero",
      descriptors: [
        { key: "k", rateLimit: { unit: "SECOND", requestsPerUnit: 1, algorithm: { kind: "SLIDING_WINDOW", unitMultiplier: 0 } } },
      ],
    };
    const files = xdsConfigsToFiles([resource]);
    expect(files.ok && loadConfig(files.value, { mergeDomainConfig: false })).toEqual({
      ok: false,
      error: { file: "zero", message: "zero: rate_limit.unit_multiplier must be an integer from 1 to 1000000, but found '0'" },
    });
  });

  it("writes a resource without descriptors as an empty list", () => {
    expect(xdsConfigsToFiles([{ name: "bare", domain: "bare" }])).toEqual(oneFile("bare", "domain: bare\ndescriptors: []\n"));
  });

  it("returns the files sorted by resource name, whatever the snapshot's order", () => {
    const result = xdsConfigsToFiles([
      { name: "b", domain: "db" },
      { name: "C", domain: "dc" },
      { name: "a", domain: "da" },
      { name: "a2", domain: "da2" },
    ]);
    expect(result.ok && result.value.map((file) => file.name)).toEqual(["C", "a", "a2", "b"]);
  });

  it("accepts an empty snapshot as no files", () => {
    expect(xdsConfigsToFiles([])).toEqual({ ok: true, value: [] });
  });
});

describe("xdsConfigsToFiles: refusals", () => {
  it.each<[string, unknown[], string]>([
    [
      "an unknown field of the resource (named by its name)",
      [{ name: "a", domain: "a", extra: 1 }],
      "a: extra: unknown field",
    ],
    [
      "an unknown field of a resource without a name (named by position)",
      [{ domain: "a", extra: 1 }],
      "configs[0]: extra: unknown field",
    ],
    [
      "a resource that is not an object",
      [{ name: "a" }, "text"],
      'configs[1]: RateLimitConfig must be a JSON object, got "text"',
    ],
    ["a null resource", [null], "configs[0]: RateLimitConfig must be a JSON object, got null"],
    ["a missing name", [{ name: "a" }, { domain: "d" }], "configs[1]: a RateLimitConfig needs a name"],
    ["an empty name", [{ name: "", domain: "d" }], "configs[0]: a RateLimitConfig needs a name"],
    [
      "a name that is not a string",
      [{ name: 7 }],
      "configs[0]: name: expected string, got 7",
    ],
    [
      "a duplicate name",
      [
        { name: "a", domain: "x" },
        { name: "a", domain: "y" },
      ],
      "a: two configs have this name",
    ],
    [
      "a domain of the wrong type",
      [{ name: "a", domain: true }],
      "a: domain: expected string, got true",
    ],
    [
      "descriptors that are not a list",
      [{ name: "a", descriptors: {} }],
      "a: descriptors: expected Array, got object",
    ],
    [
      "an unknown field in a descriptor",
      [{ name: "a", descriptors: [{ key: "k", valueToMetric: true }] }],
      "a: descriptors[0].valueToMetric: unknown field",
    ],
    [
      "a field given under both names",
      [{ name: "a", descriptors: [{ key: "k", shadowMode: true, shadow_mode: true }] }],
      "a: descriptors[0].shadowMode: given twice (as shadowMode and shadow_mode)",
    ],
    [
      "a bool of the wrong type",
      [{ name: "a", descriptors: [{ key: "k", shadowMode: "true" }] }],
      'a: descriptors[0].shadowMode: expected boolean, got "true"',
    ],
    [
      "an unknown algorithm number",
      [withPolicy("a", { unit: "SECOND", requestsPerUnit: 1, algorithm: { kind: 7 } })],
      "a: descriptors[0].rateLimit.algorithm.kind: 7 is not a value of enum " +
        "edge_control_plane.ratelimit.v1.RateLimitAlgorithm.Kind",
    ],
    [
      "an unknown unit name",
      [withPolicy("a", { unit: "FORTNIGHT", requestsPerUnit: 1 })],
      'a: descriptors[0].rateLimit.unit: "FORTNIGHT" is not a value of enum ratelimit.config.ratelimit.v3.RateLimitUnit',
    ],
    [
      "a unit name in lower case",
      [withPolicy("a", { unit: "minute", requestsPerUnit: 1 })],
      'a: descriptors[0].rateLimit.unit: "minute" is not a value of enum ratelimit.config.ratelimit.v3.RateLimitUnit',
    ],
    [
      "a unit number past the enum",
      [withPolicy("a", { unit: 8, requestsPerUnit: 1 })],
      "a: descriptors[0].rateLimit.unit: 8 is not a value of enum ratelimit.config.ratelimit.v3.RateLimitUnit",
    ],
    [
      "a negative requests_per_unit",
      [withPolicy("a", { unit: 1, requestsPerUnit: -1 })],
      "a: descriptors[0].rateLimit.requestsPerUnit: expected number (uint32): -1 out of range",
    ],
    [
      "a requests_per_unit past uint32",
      [withPolicy("a", { unit: 1, requests_per_unit: 4294967296 })],
      "a: descriptors[0].rateLimit.requests_per_unit: expected number (uint32): 4294967296 out of range",
    ],
    [
      "a fractional requests_per_unit",
      [withPolicy("a", { unit: 1, requestsPerUnit: 1.5 })],
      "a: descriptors[0].rateLimit.requestsPerUnit: expected number (uint32), got 1.5",
    ],
    ["a rate_limit that is not an object", [withPolicy("a", 5)], "a: descriptors[0].rateLimit must be a JSON object, got 5"],
    [
      "a replaces entry with an unknown field",
      [withPolicy("a", { unit: 1, replaces: [{ name: "x", id: 1 }] })],
      "a: descriptors[0].rateLimit.replaces[0].id: unknown field",
    ],
  ])("refuses %s", (_label, resources, error) => {
    expect(conversionError(resources)).toBe(error);
  });

  it("names the first resource that cannot be read, in snapshot order", () => {
    expect(
      conversionError([
        { name: "z", domain: "z", descriptors: [{ key: 1 }] },
        { name: "a", extra: true },
      ]),
    ).toBe("z: descriptors[0].key: expected string, got 1");
  });
});

describe("loadConfig over converted resources", () => {
  it.each(["1_000.0", "190:20:30.15", ".5_", "yes", "null", "0x1F"])(
    "keeps the descriptor value %s a string (the files are written as YAML 1.1, the version the loader reads)",
    (value) => {
      const loaded = loadXds([
        {
          name: "f",
          domain: "f",
          descriptors: [{ key: "k", value, rateLimit: { unit: "SECOND", requestsPerUnit: 1 } }],
        },
      ]);
      expect(loaded.ok && dumpConfig(loaded.value)).toBe(
        `f.k_${value}: unit=SECOND requests_per_unit=1, shadow_mode: false, quota_mode: false\n`,
      );
    },
  );

  it("refuses a rule without a unit, naming the resource", () => {
    const loaded = loadXds([{ name: "ok", domain: "ok" }, withPolicy("no-unit", { requestsPerUnit: 5 })]);
    expect(loaded).toEqual({
      ok: false,
      error: { file: "no-unit", message: "no-unit: invalid rate limit unit 'UNKNOWN'" },
    });
  });

  it("refuses an unlimited rule that has a unit, naming the resource", () => {
    const loaded = loadXds([withPolicy("unlimited-minute", { unit: "MINUTE", unlimited: true })]);
    expect(loaded).toEqual({
      ok: false,
      error: {
        file: "unlimited-minute",
        message: "unlimited-minute: should not specify rate limit unit when unlimited",
      },
    });
  });

  it("refuses a resource without a domain, naming the resource", () => {
    const loaded = loadXds([{ name: "nodomain", descriptors: [] }]);
    expect(loaded.ok || loaded.error.message).toBe("nodomain: config file cannot have empty domain");
  });

  it("refuses two resources of one domain without MERGE_DOMAIN_CONFIG, naming the later in name order", () => {
    const loaded = loadXds([
      { name: "second", domain: "same" },
      { name: "first", domain: "same" },
    ]);
    expect(loaded.ok || loaded.error.message).toBe("second: duplicate domain 'same' in config file");
  });
});
