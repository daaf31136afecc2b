// The rate limit service's traces through the real Worker: a span per decision exported over OTLP/HTTP, joined to
// the caller's traceparent, none when unsampled, and a failed decision's span marked as an error.
import { describe, expect, it, vi } from "vitest";
import { executionSpan } from "../../support/ratelimit-spans";
import { frozenDate, service, simpleConfig } from "./telemetry-fixtures";

frozenDate();

describe("traces", () => {
  const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
  const PARENT = "00f067aa0ba902b7";

  function captureExports() {
    const exported: { url: string; headers: Headers; body: any }[] = [];
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input: RequestInfo | URL, init?: RequestInit) => {
      const request = new Request(input, init);
      exported.push({ url: request.url, headers: request.headers, body: await request.json() });
      return new Response("{}", { status: 200 });
    });
    return exported;
  }

  const tracing = {
    TRACING_ENABLED: "true",
    STATS_FLUSH_INTERVAL: "0",
    OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector.test:4318/",
    OTEL_EXPORTER_OTLP_HEADERS: "authorization=Bearer%20otlp-secret",
    TRACING_SERVICE_NAMESPACE: "edge",
    TRACING_SERVICE_INSTANCE_ID: "instance-1",
  };

  it("exports one span per decision over OTLP/HTTP, joined to the caller's traceparent, from /json and gRPC", async () => {
    const s = service(tracing);
    expect((await s.put({ "traced.yaml": simpleConfig("traced", 1) })).status).toBe(200);
    await s.settle();
    const exported = captureExports();
    expect(await s.json("traced", [[["k", "v"]], [["other", "x"]]], { traceparent: `00-${TRACE}-${PARENT}-01` })).toBe(
      200,
    );
    await s.settle();
    expect((await s.grpc("traced", [[["k", "v"]]])).body.overallCode).toBe("OVER_LIMIT");
    await s.settle();
    expect(exported.map((e) => [e.url, e.headers.get("authorization"), e.headers.get("content-type")])).toEqual([
      ["http://collector.test:4318/v1/traces", "Bearer otlp-secret", "application/json"],
      ["http://collector.test:4318/v1/traces", "Bearer otlp-secret", "application/json"],
    ]);
    const [first, second] = exported.map((e) => e.body.resourceSpans[0]);
    expect(first.resource.attributes).toEqual([
      { key: "service.name", value: { stringValue: "RateLimit" } },
      { key: "service.namespace", value: { stringValue: "edge" } },
      { key: "service.instance.id", value: { stringValue: "instance-1" } },
    ]);
    const [joined] = first.scopeSpans[0].spans;
    expect(joined).toMatchObject(executionSpan(TRACE, PARENT, "traced", 2, "OK"));
    expect(joined.spanId).toMatch(/^[0-9a-f]{16}$/);
    const [root] = second.scopeSpans[0].spans;
    expect(root.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(root.traceId).not.toBe(TRACE);
    expect(root.parentSpanId).toBeUndefined();
    expect(root.attributes[2]).toEqual({ key: "overall_code", value: { stringValue: "OVER_LIMIT" } });
  });

  it("exports nothing for a caller that did not sample, nor with TRACING_SAMPLING_RATE=0", async () => {
    const s = service({ ...tracing, TRACING_SAMPLING_RATE: "0" });
    await s.json("traced", [[["k", "v"]]]);
    await s.settle();
    const exported = captureExports();
    await s.json("traced", [[["k", "v"]]], { traceparent: `00-${TRACE}-${PARENT}-00` });
    await s.json("traced", [[["k", "v"]]]);
    await s.settle();
    expect(exported).toEqual([]);
  });

  it("marks a failed decision's span as an error", async () => {
    const s = service(tracing);
    await s.settle();
    const exported = captureExports();
    expect(await s.json("", [[["k", "v"]]])).toBe(400);
    await s.settle();
    expect(exported[0].body.resourceSpans[0].scopeSpans[0].spans[0].status).toEqual({
      code: 2,
      message: "rate limit domain must not be empty",
    });
  });
});
