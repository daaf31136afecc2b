// The OTLP JSON span the rate limit service exports for one ShouldRateLimit call, as the tracing tests expect it.

/** A server span (kind 2) that ended OK (status code 1), with the call's domain, descriptor count and overall code. */
export function executionSpan(
  traceId: string,
  parentSpanId: string,
  domain: string,
  descriptorCount: number,
  overallCode: string,
) {
  return {
    traceId,
    parentSpanId,
    name: "ShouldRateLimit Execution",
    kind: 2,
    attributes: [
      { key: "domain", value: { stringValue: domain } },
      { key: "descriptor_count", value: { intValue: String(descriptorCount) } },
      { key: "overall_code", value: { stringValue: overallCode } },
    ],
    status: { code: 1 },
  };
}
