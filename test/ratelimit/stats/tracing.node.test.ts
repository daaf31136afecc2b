// Traces: the caller's traceparent, the sampling decision, and the OTLP/HTTP JSON body a flush exports.
import { describe, expect, it } from "vitest";
import {
  otlpTraceRequest,
  parseOtlpHeaders,
  parseTraceparent,
  randomHex,
  shouldSample,
  tracesUrl,
} from "../../../src/ratelimit/stats/tracing";

const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const SPAN = "00f067aa0ba902b7";

describe("traceparent", () => {
  it("reads version 00 headers, sampled or not", () => {
    expect(parseTraceparent(`00-${TRACE}-${SPAN}-01`)).toEqual({ traceId: TRACE, spanId: SPAN, sampled: true });
    expect(parseTraceparent(` 00-${TRACE.toUpperCase()}-${SPAN}-00 `)).toEqual({
      traceId: TRACE,
      spanId: SPAN,
      sampled: false,
    });
    // A later version may append fields; version 00 may not.
    expect(parseTraceparent(`01-${TRACE}-${SPAN}-03-extra`)).toEqual({ traceId: TRACE, spanId: SPAN, sampled: true });
    expect(parseTraceparent(`00-${TRACE}-${SPAN}-01-extra`)).toBeUndefined();
  });

  it("ignores malformed or all-zero ids and an absent header", () => {
    for (const header of [
      undefined,
      "",
      "garbage",
      `ff-${TRACE}-${SPAN}-01`,
      `00-${"0".repeat(32)}-${SPAN}-01`,
      `00-${TRACE}-${"0".repeat(16)}-01`,
      `00-${TRACE.slice(1)}-${SPAN}-01`,
    ]) {
      expect(parseTraceparent(header)).toBeUndefined();
    }
  });
});

describe("sampling", () => {
  const parent = { traceId: TRACE, spanId: SPAN, sampled: true };

  it("follows the caller's decision for its trace", () => {
    expect(shouldSample(TRACE, 0, parent)).toBe(true);
    expect(shouldSample(TRACE, 1, { ...parent, sampled: false })).toBe(false);
  });

  it("samples new traces by the low bits of their id against the rate", () => {
    expect(shouldSample(TRACE, 1, undefined)).toBe(true);
    expect(shouldSample(TRACE, 0, undefined)).toBe(false);
    // Low 64 bits 0x0000...0001 >> 1 = 0: below any positive rate; all ones: above any rate below 1.
    expect(shouldSample(`${"f".repeat(16)}${"0".repeat(15)}1`, 0.001, undefined)).toBe(true);
    expect(shouldSample(`${"0".repeat(16)}${"f".repeat(16)}`, 0.999, undefined)).toBe(false);
    // 0x4000... >> 1 = 2^61 = a quarter of 2^63.
    expect(shouldSample(`${"0".repeat(16)}4${"0".repeat(15)}`, 0.25, undefined)).toBe(false);
    expect(shouldSample(`${"0".repeat(16)}4${"0".repeat(15)}`, 0.26, undefined)).toBe(true);
  });

  it("draws random ids of the right length", () => {
    expect(randomHex(16)).toMatch(/^[0-9a-f]{32}$/);
    expect(randomHex(8)).toMatch(/^[0-9a-f]{16}$/);
    expect(randomHex(8)).not.toBe(randomHex(8));
  });
});

describe("OTLP/HTTP JSON", () => {
  it("carries the resource, one server span per decision, its parent, attributes and status", () => {
    const body = otlpTraceRequest({ serviceName: "RateLimit", serviceNamespace: "edge", serviceInstanceId: "i-1" }, [
      {
        traceId: TRACE,
        spanId: "1111111111111111",
        parentSpanId: SPAN,
        name: "ShouldRateLimit Execution",
        startMs: 1_700_000_000_000,
        endMs: 1_700_000_000_002.5,
        attributes: { domain: "d", descriptor_count: 2, overall_code: "OK" },
      },
      {
        traceId: TRACE,
        spanId: "2222222222222222",
        name: "ShouldRateLimit Execution",
        startMs: 1,
        endMs: 2,
        attributes: { domain: "d", ratio: 0.5, shadow: true },
        error: "rate limit counter store error",
      },
    ]);
    expect(body).toEqual({
      resourceSpans: [
        {
          resource: {
            attributes: [
              { key: "service.name", value: { stringValue: "RateLimit" } },
              { key: "service.namespace", value: { stringValue: "edge" } },
              { key: "service.instance.id", value: { stringValue: "i-1" } },
            ],
          },
          scopeSpans: [
            {
              scope: { name: "ratelimit" },
              spans: [
                {
                  traceId: TRACE,
                  spanId: "1111111111111111",
                  parentSpanId: SPAN,
                  name: "ShouldRateLimit Execution",
                  kind: 2,
                  startTimeUnixNano: "1700000000000000000",
                  endTimeUnixNano: "1700000000002500000",
                  attributes: [
                    { key: "domain", value: { stringValue: "d" } },
                    { key: "descriptor_count", value: { intValue: "2" } },
                    { key: "overall_code", value: { stringValue: "OK" } },
                  ],
                  status: { code: 1 },
                },
                {
                  traceId: TRACE,
                  spanId: "2222222222222222",
                  name: "ShouldRateLimit Execution",
                  kind: 2,
                  startTimeUnixNano: "1000000",
                  endTimeUnixNano: "2000000",
                  attributes: [
                    { key: "domain", value: { stringValue: "d" } },
                    { key: "ratio", value: { doubleValue: 0.5 } },
                    { key: "shadow", value: { boolValue: true } },
                  ],
                  status: { code: 2, message: "rate limit counter store error" },
                },
              ],
            },
          ],
        },
      ],
    });
  });

  it("leaves out an empty namespace", () => {
    const body = otlpTraceRequest({ serviceName: "RateLimit", serviceNamespace: "", serviceInstanceId: "i" }, []);
    expect(body.resourceSpans[0].resource.attributes.map((a) => a.key)).toEqual([
      "service.name",
      "service.instance.id",
    ]);
  });

  it("reads OTEL_EXPORTER_OTLP_HEADERS and builds the traces URL", () => {
    expect(parseOtlpHeaders("authorization=Bearer%20abc, x-tenant = t1")).toEqual({
      ok: true,
      value: { authorization: "Bearer abc", "x-tenant": "t1" },
    });
    // An entry is named by its place: its text may be a credential.
    expect(parseOtlpHeaders("a=1, novalue")).toEqual({
      ok: false,
      error: "entry 2: expected key=value (the value URL-encoded)",
    });
    expect(parseOtlpHeaders("a=%E0%A4%A")).toEqual({ ok: false, error: "entry 1 is not URL-encoded correctly" });
    expect(tracesUrl("http://collector:4318/", undefined)).toBe("http://collector:4318/v1/traces");
    expect(tracesUrl("http://collector:4318", "http://other/traces")).toBe("http://other/traces");
  });
});
