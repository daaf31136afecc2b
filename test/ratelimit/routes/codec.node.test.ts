// The proto3 JSON codec of /json.

import { describe, expect, it } from "vitest";
import {
  parseRateLimitRequestJson,
  parseRateLimitRequestText,
  rateLimitResponseToJson,
} from "../../../src/ratelimit/routes/codec";
import { harness, loadFixtures, request } from "../../support/ratelimit-core";
import { decidedStatus, NO_LIMIT_STATUS, UNLIMITED_STATUS } from "../../support/ratelimit-statuses";

describe("parseRateLimitRequestJson", () => {
  it("reads the README's example request", () => {
    const body = {
      domain: "dummy",
      descriptors: [{ entries: [{ key: "one_per_day", value: "something" }] }],
    };
    expect(parseRateLimitRequestJson(body)).toEqual({
      ok: true,
      value: {
        domain: "dummy",
        descriptors: [{ entries: [{ key: "one_per_day", value: "something" }] }],
        hitsAddend: 0,
      },
    });
  });

  it("accepts camelCase and original snake_case names", () => {
    const camel = parseRateLimitRequestJson({
      domain: "d",
      hitsAddend: 2,
      descriptors: [
        { entries: [], limit: { requestsPerUnit: 5, unit: "MINUTE" }, hitsAddend: 0, isNegativeHits: false },
      ],
    });
    const snake = parseRateLimitRequestJson({
      domain: "d",
      hits_addend: 2,
      descriptors: [
        {
          entries: [],
          limit: { requests_per_unit: 5, unit: "MINUTE" },
          hits_addend: 0,
          is_negative_hits: false,
        },
      ],
    });
    const expected = {
      ok: true,
      value: {
        domain: "d",
        hitsAddend: 2,
        descriptors: [{ entries: [], limit: { requestsPerUnit: 5, unit: "MINUTE" }, hitsAddend: 0 }],
      },
    };
    expect(camel).toEqual(expected);
    expect(snake).toEqual(expected);
  });

  it("accepts numbers as decimal strings and enums as numbers", () => {
    expect(
      parseRateLimitRequestJson({
        domain: "d",
        hitsAddend: "3",
        descriptors: [{ limit: { requestsPerUnit: "7", unit: 3 }, hitsAddend: "9007199254740991" }],
      }),
    ).toEqual({
      ok: true,
      value: {
        domain: "d",
        hitsAddend: 3,
        descriptors: [{ entries: [], limit: { requestsPerUnit: 7, unit: "HOUR" }, hitsAddend: 9007199254740991 }],
      },
    });
  });

  it("reads a descriptor's hits_addend given as a whole number in any JSON number form, as Go's protojson does", () => {
    const addendOf = (given: string) => {
      const parsed = parseRateLimitRequestText(`{"domain":"d","descriptors":[{"entries":[],"hits_addend":${given}}]}`);
      return parsed.ok ? parsed.value.descriptors[0].hitsAddend : parsed.error;
    };
    const forms = ['"1e2"', '"1E+2"', '"100.0"', '"50e-1"', '"1.5e1"', '"0e-400"', '"9007199254740991.000"', "1e2"];
    expect(forms.map(addendOf)).toEqual([100, 100, 100, 5, 15, 0, 9007199254740991, 100]);
    // A value that is not whole, or past 2^53 - 1, is still refused; so is one past uint64 however it is written.
    expect(['"1.5"', '"5e-1"', '"12e-5"', '"9.007199254740992e15"', '"1e21"'].map(addendOf)).toEqual([
      "descriptors[0].hits_addend: expected bigint (uint64): 1.5 out of range",
      "descriptors[0].hits_addend: expected bigint (uint64): 5e-1 out of range",
      "descriptors[0].hits_addend: expected bigint (uint64): 12e-5 out of range",
      "descriptor 0: hits_addend 9007199254740992 is larger than 2^53 - 1",
      "descriptors[0].hits_addend: expected bigint (uint64): 1e21 out of range",
    ]);
  });

  it("treats null as the default and a missing hitsAddend wrapper as absent", () => {
    expect(
      parseRateLimitRequestJson({
        domain: null,
        hitsAddend: null,
        descriptors: [{ entries: null, limit: null, hitsAddend: null }],
      }),
    ).toEqual({ ok: true, value: { domain: "", hitsAddend: 0, descriptors: [{ entries: [] }] } });
    expect(parseRateLimitRequestJson({})).toEqual({
      ok: true,
      value: { domain: "", descriptors: [], hitsAddend: 0 },
    });
  });

  it.each([
    [{ foo: 1 }, "foo: unknown field"],
    [
      { descriptors: [{ entries: [{ key: "k", value: "v", extra: 1 }] }] },
      "descriptors[0].entries[0].extra: unknown field",
    ],
    [{ descriptors: [{ bar: true }] }, "descriptors[0].bar: unknown field"],
    [
      { descriptors: [{ limit: { requestsPerUnit: 1, units: "SECOND" } }] },
      "descriptors[0].limit.units: unknown field",
    ],
    [{ hitsAddend: 1, hits_addend: 2 }, "hitsAddend: given twice (as hitsAddend and hits_addend)"],
    [{ hitsAddend: -1 }, "hitsAddend: expected number (uint32): -1 out of range"],
    [{ hitsAddend: 1.5 }, "hitsAddend: expected number (uint32), got 1.5"],
    [{ hitsAddend: 4294967296 }, "hitsAddend: expected number (uint32): 4294967296 out of range"],
    [{ hitsAddend: "-2" }, "hitsAddend: expected number (uint32): -2 out of range"],
    [{ hitsAddend: true }, "hitsAddend: expected number (uint32), got true"],
    [
      { descriptors: [{ hitsAddend: "18446744073709551615" }] },
      "descriptor 0: hits_addend 18446744073709551615 is larger than 2^53 - 1",
    ],
    [{ domain: 5 }, "domain: expected string, got 5"],
    [{ descriptors: {} }, "descriptors: expected Array, got object"],
    [{ descriptors: [null] }, "descriptors[0] must be a JSON object, got null"],
    [
      { descriptors: [{ limit: { unit: "FORTNIGHT" } }] },
      'descriptors[0].limit.unit: "FORTNIGHT" is not a value of enum envoy.type.v3.RateLimitUnit',
    ],
    [
      { descriptors: [{ limit: { unit: 8 } }] },
      "descriptors[0].limit.unit: 8 is not a value of enum envoy.type.v3.RateLimitUnit",
    ],
    [{ descriptors: [{ isNegativeHits: "no" }] }, 'descriptors[0].isNegativeHits: expected boolean, got "no"'],
    [[], "RateLimitRequest must be a JSON object, got []"],
    [null, "RateLimitRequest must be a JSON object, got null"],
  ])("refuses %j", (body, message) => {
    expect(parseRateLimitRequestJson(body)).toEqual({ ok: false, error: message });
  });

  it("keeps an override with unit UNKNOWN for the service to refuse", () => {
    expect(parseRateLimitRequestJson({ descriptors: [{ limit: { requestsPerUnit: 1 } }] })).toEqual({
      ok: true,
      value: {
        domain: "",
        hitsAddend: 0,
        descriptors: [{ entries: [], limit: { requestsPerUnit: 1, unit: "UNKNOWN" } }],
      },
    });
  });
});

describe("rateLimitResponseToJson", () => {
  it("omits zero values and renders durations and enums as strings", () => {
    expect(
      rateLimitResponseToJson({
        overallCode: "OVER_LIMIT",
        statuses: [
          decidedStatus("OVER_LIMIT", 10, "MINUTE", 0, 58, "per_user"),
          decidedStatus("OK", 0, "MINUTE", 0, 58),
          UNLIMITED_STATUS,
          NO_LIMIT_STATUS,
        ],
        responseHeadersToAdd: [{ key: "RateLimit-Limit", value: "10" }],
      }),
    ).toEqual({
      overallCode: "OVER_LIMIT",
      statuses: [
        {
          code: "OVER_LIMIT",
          currentLimit: { requestsPerUnit: 10, unit: "MINUTE", name: "per_user" },
          durationUntilReset: "58s",
        },
        { code: "OK", currentLimit: { unit: "MINUTE" }, durationUntilReset: "58s" },
        UNLIMITED_STATUS,
        { code: "OK" },
      ],
      responseHeadersToAdd: [{ key: "RateLimit-Limit", value: "10" }],
    });
  });

  it("renders an empty OK response as just the overall code, and UNKNOWN as nothing", () => {
    expect(rateLimitResponseToJson({ overallCode: "OK", statuses: [], responseHeadersToAdd: [] })).toEqual({
      overallCode: "OK",
    });
    expect(rateLimitResponseToJson({ overallCode: "UNKNOWN", statuses: [], responseHeadersToAdd: [] })).toEqual({});
  });

  it("encodes a real decision", async () => {
    const h = harness(loadFixtures(["basic.yaml"]));
    const decision = await h.run(request("test-domain", [[["key2", "x"]], [["key6", "y"]], [["nothing", "z"]]]), 2222);
    expect(JSON.stringify(rateLimitResponseToJson(decision.response))).toBe(
      '{"overallCode":"OK","statuses":[' +
        '{"code":"OK","currentLimit":{"requestsPerUnit":20,"unit":"MINUTE"},' +
        '"limitRemaining":19,"durationUntilReset":"58s"},' +
        '{"code":"OK","limitRemaining":4294967295},{"code":"OK"}]}',
    );
  });
});

describe("parseRateLimitRequestText: lone surrogates", () => {
  // Each body once in the common shape (the reflection-free fast path) and once with a field only the protobuf
  // decoder reads (a descriptor's hitsAddend), which Go's protojson and the decoder refuse as not UTF-8.
  const entries = (key: string, value: string) => `[{"key":"k","value":"a"},{"key":"${key}","value":"${value}"}]`;
  it.each([
    ["a value", "d", entries("k2", "\\ud800"), "descriptors[0].entries[1].value: expected string: invalid UTF8"],
    [
      "a trailing low half",
      "d",
      entries("k2", "x\\udfff"),
      "descriptors[0].entries[1].value: expected string: invalid UTF8",
    ],
    ["a key", "d", entries("\\udc00", "v"), "descriptors[0].entries[1].key: expected string: invalid UTF8"],
    ["the domain", "d\\ud83d", entries("k2", "v"), "domain: expected string: invalid UTF8"],
  ])("refuses %s on both paths with the protobuf decoder's message", (_, domain, list, message) => {
    const common = `{"domain":"${domain}","descriptors":[{"entries":${list}}]}`;
    const proto = `{"domain":"${domain}","descriptors":[{"entries":${list},"hitsAddend":2}]}`;
    expect([parseRateLimitRequestText(common), parseRateLimitRequestText(proto)]).toEqual([
      { ok: false, error: message },
      { ok: false, error: message },
    ]);
  });

  it("takes a surrogate pair on the fast path as the character it spells", () => {
    expect(
      parseRateLimitRequestText(`{"domain":"d","descriptors":[{"entries":${entries("k2", "\\ud83d\\ude00")}}]}`),
    ).toEqual({
      ok: true,
      value: {
        domain: "d",
        descriptors: [
          {
            entries: [
              { key: "k", value: "a" },
              { key: "k2", value: "\u{1F600}" },
            ],
          },
        ],
        hitsAddend: 0,
      },
    });
  });
});

describe("parseRateLimitRequestText: a field given twice", () => {
  // JSON.parse keeps a repeated field's last value; Go's protojson refuses the body, on either decoding path.
  it.each([
    ['{"domain":"a","domain":"b","descriptors":[{"entries":[{"key":"k","value":"v"}]}]}', "domain: given twice"],
    [
      '{"domain":"a","descriptors":[{"entries":[{"key":"k","key":"j","value":"v"}]}]}',
      "descriptors[0].entries[0].key: given twice",
    ],
    [
      '{"domain":"a","descriptors":[{"entries":[],"hitsAddend":1,"hitsAddend":9}]}',
      "descriptors[0].hitsAddend: given twice",
    ],
    [
      '{"domain":"a","descriptors":[],"descriptors":[{"entries":[{"key":"k","value":"v"}]}]}',
      "descriptors: given twice",
    ],
    ['{"domain":"a","\\u0064omain":"b","descriptors":[]}', "domain: given twice"],
  ])("refuses %s", (text, message) => {
    expect(parseRateLimitRequestText(text)).toEqual({ ok: false, error: message });
  });

  it("takes the same name in different objects, and key-like text inside strings", () => {
    const text =
      '{"domain":"{\\"a\\":1,\\"a\\":2}","descriptors":[{"entries":[{"key":"k","value":"v"},{"key":"k","value":"w"}]}]}';
    expect(parseRateLimitRequestText(text)).toEqual({
      ok: true,
      value: {
        domain: '{"a":1,"a":2}',
        descriptors: [
          {
            entries: [
              { key: "k", value: "v" },
              { key: "k", value: "w" },
            ],
          },
        ],
        hitsAddend: 0,
      },
    });
  });
});
