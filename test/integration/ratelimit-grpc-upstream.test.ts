// The Node gateway in front of a slow or failing Worker, played by a stand-in upstream: what it forwards, deadlines,
// HTTP answers mapped to gRPC statuses, the request size limit, kept-alive connections and SIGTERM.
import grpc from "@grpc/grpc-js";
import { beforeAll, describe, expect, it } from "vitest";
import { rateLimitClient, startGateway, type Gateway, type RateLimitClient } from "../support/grpc-gateway";
import { descriptor, fake, grpcSuite, track } from "../support/ratelimit-grpc-suite";

grpcSuite({ upstream: true });

describe("a slow or failing Worker (stand-in upstream)", () => {
  let gateway: Gateway;
  let client: RateLimitClient;

  beforeAll(async () => {
    gateway = track(
      await startGateway({ RATELIMIT_UPSTREAM_URL: fake.url, GRPC_PORT: "0", GRPC_GATEWAY_DRAIN_TIME: "2s" }),
    );
    client = track(rateLimitClient(gateway.target));
  });

  it("forwards the raw request as Connect application/proto with the caller's deadline", async () => {
    fake.answer = { delayMs: 200, status: 200, contentType: "application/proto", body: Buffer.from([0x08, 0x02]) };
    const result = await client.shouldRateLimit({ domain: "d", descriptors: [descriptor(["k", "v"])] }, 5000);
    expect(result).toEqual({ ok: true, value: { overallCode: "OVER_LIMIT" } });
    const seen = fake.seen.at(-1)!;
    expect(seen.method).toBe("POST");
    expect(seen.url).toBe("/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit");
    expect(seen.headers["content-type"]).toBe("application/proto");
    expect(seen.headers["connect-protocol-version"]).toBe("1");
    const timeout = Number(seen.headers["connect-timeout-ms"]);
    expect(timeout).toBeGreaterThan(0);
    expect(timeout).toBeLessThanOrEqual(5000);
    // domain "d" (field 1) and one descriptor (field 2), exactly as the caller encoded them.
    expect(seen.body.subarray(0, 3)).toEqual(Buffer.from([0x0a, 0x01, 0x64]));
  });

  it("answers DEADLINE_EXCEEDED at the caller's deadline and abandons the upstream request", async () => {
    fake.answer = { delayMs: 5000, status: 200, contentType: "application/proto", body: Buffer.from([0x08, 0x01]) };
    const before = fake.seen.length;
    const result = await client.shouldRateLimit({ domain: "d", descriptors: [descriptor(["k", "slow"])] }, 300);
    expect(result).toMatchObject({ ok: false, code: grpc.status.DEADLINE_EXCEEDED });
    const seen = fake.seen[before];
    expect(Number(seen.headers["connect-timeout-ms"])).toBeLessThanOrEqual(300);
    // The stand-in would answer after 5 s; the gateway hangs up long before.
    for (let i = 0; i < 30 && !seen.abandoned; i++) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(seen.abandoned).toBe(true);
  });

  it.each([
    [
      500,
      "application/json",
      JSON.stringify({ code: "resource_exhausted", message: "slow down" }),
      grpc.status.RESOURCE_EXHAUSTED,
      "slow down",
    ],
    [
      504,
      "application/json",
      JSON.stringify({ code: "deadline_exceeded", message: "the operation timed out" }),
      grpc.status.DEADLINE_EXCEEDED,
      "the operation timed out",
    ],
    [502, "text/html", "<html>bad gateway</html>", grpc.status.UNAVAILABLE, "rate limit service answered HTTP 502"],
    [404, "text/plain", "no route", grpc.status.UNIMPLEMENTED, "rate limit service answered HTTP 404"],
  ])("maps an HTTP %i %s answer to a gRPC status", async (status, contentType, body, code, details) => {
    fake.answer = { delayMs: 0, status, contentType, body };
    expect(await client.shouldRateLimit({ domain: "d", descriptors: [descriptor(["k", "v"])] })).toEqual({
      ok: false,
      code,
      details,
    });
  });

  it("refuses a message over RATELIMIT_MAX_REQUEST_BYTES with RESOURCE_EXHAUSTED without forwarding it", async () => {
    const before = fake.seen.length;
    const request = { domain: "x".repeat(1024 * 1024), descriptors: [descriptor(["k", "v"])] };
    // grpc-js's own refusal, as grpc-go's: the message is the 1 MiB domain plus 14 bytes of framing and descriptor.
    expect(await client.shouldRateLimit(request)).toEqual({
      ok: false,
      code: grpc.status.RESOURCE_EXHAUSTED,
      details: "Received message larger than max (1048590 vs 1048576)",
    });
    expect(fake.seen.length).toBe(before);
  });

  it("sends a call again on a fresh connection when a kept-alive one turns out closed", async () => {
    fake.answer = { delayMs: 0, status: 200, contentType: "application/proto", body: Buffer.from([0x08, 0x01]) };
    const request = { domain: "d", descriptors: [descriptor(["k", "keep-alive"])] };
    expect(await client.shouldRateLimit(request)).toEqual({ ok: true, value: { overallCode: "OK" } });
    fake.answer = { ...fake.answer, resetReusedSockets: true };
    const before = fake.seen.length;
    expect(await client.shouldRateLimit(request)).toEqual({ ok: true, value: { overallCode: "OK" } });
    expect(fake.seen.slice(before).map((seen) => seen.abandoned)).toEqual([true, false]);
    fake.answer = { ...fake.answer, resetReusedSockets: false };
  });

  it("on SIGTERM turns NOT_SERVING, finishes the calls in flight, then exits", async () => {
    // The call outlives the 2 s drain, so it is still in flight when the server stops taking calls.
    fake.answer = { delayMs: 3000, status: 200, contentType: "application/proto", body: Buffer.from([0x08, 0x01]) };
    const before = fake.seen.length;
    const inFlight = client.shouldRateLimit({ domain: "d", descriptors: [descriptor(["k", "in-flight"])] }, 10_000);
    while (fake.seen.length === before) await new Promise((resolve) => setTimeout(resolve, 20));
    gateway.child.kill("SIGTERM");
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await client.check("")).toEqual({ ok: true, value: { status: "NOT_SERVING" } });
    expect(await client.check("ratelimit")).toEqual({ ok: true, value: { status: "NOT_SERVING" } });
    expect(await inFlight).toEqual({ ok: true, value: { overallCode: "OK" } });
    expect(await gateway.exited).toBe(0);
    expect(gateway.output()).toContain("grpc-gateway: stopped");
  });
});
