// The direct /json codec of the common shapes, held to the protobuf codec it stands in for: the same request from every
// body it accepts (and none that the decoder refuses), the same response bytes.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { DescriptorStatus, RateLimitResponse } from "../../../src/ratelimit/core/types";
import { RateLimitRequestSchema } from "../../../src/ratelimit/gen/envoy/service/ratelimit/v3/rls_pb";
import { decodeJson } from "../../../src/ratelimit/proto-json";
import { protoResponseJson, rateLimitResponseToJson, requestFromProto } from "../../../src/ratelimit/routes/codec";
import { commonRequestMessage, commonResponseJson } from "../../../src/ratelimit/routes/codec-json-common";
import { DEFAULT_REQUEST_LIMITS } from "../../../src/ratelimit/core/limits";

const text = fc.oneof(fc.string({ maxLength: 12 }), fc.string({ unit: "grapheme", maxLength: 6 }), fc.constant(""));
const entry = fc.record({ key: text, value: text });
const descriptor = fc.record({ entries: fc.array(entry, { maxLength: 4 }) });
const commonBody = fc.record({ domain: text, descriptors: fc.array(descriptor, { maxLength: 4 }) });

/** A field the common shape does not hold, or a value of the wrong type, put somewhere in a common body. */
const nearMiss = fc
  .tuple(
    commonBody,
    fc.constantFrom("body", "descriptor", "entry"),
    fc.constantFrom("hitsAddend", "hits_addend", "limit", "extra", "__proto__", "key", "domain", "entries"),
    fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.constant(null), fc.constant(undefined)),
  )
  .map(([body, where, field, value]) => {
    const copy = structuredClone(body) as Record<string, unknown>;
    const descriptors = copy.descriptors as Record<string, unknown>[];
    const target =
      where === "body"
        ? copy
        : where === "descriptor"
          ? descriptors[0]
          : ((descriptors[0]?.entries as Record<string, unknown>[] | undefined)?.[0] ?? copy);
    if (target) Object.defineProperty(target, field, { value, enumerable: true, configurable: true, writable: true });
    // As a parsed body: what JSON.parse would make of it.
    return JSON.parse(JSON.stringify(copy)) as unknown;
  });

/** The decoder's request, or undefined where it refuses the body. */
function decoderRequest(body: unknown) {
  const decoded = decodeJson(RateLimitRequestSchema, body);
  return decoded.ok ? requestFromProto(decoded.value, DEFAULT_REQUEST_LIMITS) : undefined;
}

describe("commonRequestMessage", () => {
  it("reads every common body as the protobuf decoder does", () => {
    fc.assert(
      fc.property(commonBody, (body) => {
        const common = commonRequestMessage(body);
        expect(common).toBeDefined();
        expect(requestFromProto(common!, DEFAULT_REQUEST_LIMITS)).toEqual(decoderRequest(body));
      }),
      { numRuns: 500 },
    );
  });

  it("leaves every other body to the decoder, and never accepts one the decoder refuses", () => {
    fc.assert(
      fc.property(fc.oneof(nearMiss, fc.jsonValue({ maxDepth: 4 })), (body) => {
        const common = commonRequestMessage(body);
        if (common === undefined) return;
        const decoded = decoderRequest(body);
        expect(decoded).toBeDefined();
        expect(requestFromProto(common, DEFAULT_REQUEST_LIMITS)).toEqual(decoded);
      }),
      { numRuns: 1000 },
    );
  });

  it.each([
    ["an extra field", { domain: "d", descriptors: [], hitsAddend: 1 }],
    ["a descriptor's limit", { domain: "d", descriptors: [{ entries: [], limit: { requestsPerUnit: 1 } }] }],
    ["an entry without its value", { domain: "d", descriptors: [{ entries: [{ key: "k" }] }] }],
    ["a number for a string", { domain: 5, descriptors: [] }],
    ["no domain", { descriptors: [] }],
    ["a list for the body", [{ domain: "d" }]],
  ])("leaves %s to the decoder", (_, body) => {
    expect(commonRequestMessage(body)).toBeUndefined();
  });
});

const code = fc.constantFrom("UNKNOWN", "OK", "OVER_LIMIT") as fc.Arbitrary<DescriptorStatus["code"]>;
const unit = fc.constantFrom("UNKNOWN", "SECOND", "MINUTE", "HOUR", "DAY", "MONTH", "YEAR", "WEEK");
const uint32 = fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 0xffffffff }));
const status: fc.Arbitrary<DescriptorStatus> = fc.record(
  {
    code,
    currentLimit: fc.record(
      { name: fc.option(text, { nil: undefined }), requestsPerUnit: uint32, unit },
      { requiredKeys: ["requestsPerUnit", "unit"] },
    ),
    limitRemaining: uint32,
    durationUntilResetSeconds: fc.oneof(
      fc.constant(0),
      fc.integer({ min: 0, max: 400 * 86400 }),
      fc.double({ min: 0, max: 86400, noNaN: true, noDefaultInfinity: true }),
    ),
  },
  { requiredKeys: ["code", "limitRemaining"] },
) as fc.Arbitrary<DescriptorStatus>;
const response: fc.Arbitrary<RateLimitResponse> = fc.record({
  overallCode: code,
  statuses: fc.array(status, { maxLength: 4 }),
  responseHeadersToAdd: fc.array(fc.record({ key: text, value: text }), { maxLength: 3 }),
});

describe("commonResponseJson", () => {
  it("writes every response without dynamic metadata byte for byte as the protobuf encoder does", () => {
    fc.assert(
      fc.property(response, (decided) => {
        expect(JSON.stringify(commonResponseJson(decided))).toBe(JSON.stringify(protoResponseJson(decided)));
      }),
      { numRuns: 1000 },
    );
  });

  it("leaves a response with dynamic metadata to the encoder", () => {
    const decided: RateLimitResponse = {
      overallCode: "OK",
      statuses: [],
      responseHeadersToAdd: [],
      dynamicMetadata: { hits: 1 },
    };
    expect(commonResponseJson(decided)).toBeUndefined();
    expect(rateLimitResponseToJson(decided)).toEqual({ overallCode: "OK", dynamicMetadata: { hits: 1 } });
  });

  it("writes a decided response as the reference does", () => {
    const decided: RateLimitResponse = {
      overallCode: "OVER_LIMIT",
      statuses: [
        {
          code: "OVER_LIMIT",
          currentLimit: { name: "per-ip", requestsPerUnit: 10, unit: "MINUTE" },
          limitRemaining: 0,
          durationUntilResetSeconds: 42.25,
        },
        { code: "OK", limitRemaining: 0 },
      ],
      responseHeadersToAdd: [{ key: "x-ratelimit-limit", value: "10" }],
    };
    expect(JSON.stringify(rateLimitResponseToJson(decided))).toBe(
      '{"overallCode":"OVER_LIMIT","statuses":[{"code":"OVER_LIMIT","currentLimit":{"requestsPerUnit":10,' +
        '"unit":"MINUTE","name":"per-ip"},"durationUntilReset":"42.250s"},{"code":"OK"}],' +
        '"responseHeadersToAdd":[{"key":"x-ratelimit-limit","value":"10"}]}',
    );
  });
});
