// The caller's W3C trace context through the gateway: a real gRPC client's traceparent and tracestate metadata reach
// the Worker (a stand-in upstream) as HTTP headers when well-formed, and nothing of a malformed one does.
import grpc from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway } from "../../grpc-gateway/server.mjs";
import { gatewaySettings } from "../../grpc-gateway/settings.mjs";
import { isValidTracestate, TRACESTATE_MAX_LENGTH } from "../../grpc-gateway/trace-context.mjs";
import { rateLimitClient, startFakeUpstream, type FakeUpstream, type RateLimitClient } from "../support/grpc-gateway";

const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT = "00f067aa0ba902b7";
const TRACEPARENT = `00-${TRACE}-${PARENT}-01`;

let fake: FakeUpstream;
let gateway: Awaited<ReturnType<typeof startGateway>>;
let client: RateLimitClient;

beforeAll(async () => {
  fake = await startFakeUpstream();
  const settings = gatewaySettings({
    RATELIMIT_UPSTREAM_URL: fake.url,
    GRPC_HOST: "127.0.0.1",
    GRPC_PORT: "0",
    GRPC_GATEWAY_DRAIN_TIME: "0",
  });
  gateway = await startGateway(settings, () => {});
  client = rateLimitClient(gateway.address);
});

afterAll(async () => {
  client?.close();
  await gateway?.shutdown();
  await fake?.close();
});

/** The trace headers the upstream received for one call carrying `entries` as metadata. */
async function forwarded(entries: [string, string][]) {
  const metadata = new grpc.Metadata();
  for (const [key, value] of entries) metadata.add(key, value);
  const before = fake.seen.length;
  const result = await client.shouldRateLimit({ domain: "d", descriptors: [] }, 5000, metadata);
  expect(result).toEqual({ ok: true, value: { overallCode: "OK" } });
  expect(fake.seen).toHaveLength(before + 1);
  const { traceparent, tracestate } = fake.seen[before].headers;
  return { traceparent, tracestate };
}

describe("trace context", () => {
  it("forwards the caller's traceparent and tracestate as HTTP headers, unchanged", async () => {
    expect(await forwarded([["traceparent", TRACEPARENT]])).toEqual({
      traceparent: TRACEPARENT,
      tracestate: undefined,
    });
    const tracestate = "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7";
    expect(
      await forwarded([
        ["traceparent", TRACEPARENT],
        ["tracestate", tracestate],
      ]),
    ).toEqual({
      traceparent: TRACEPARENT,
      tracestate,
    });
  });

  it("forwards repeated tracestate entries as one list, as W3C joins repeated headers", async () => {
    const entries: [string, string][] = [
      ["traceparent", TRACEPARENT],
      ["tracestate", "congo=t61rcWkgMzE"],
      ["tracestate", "rojo=00f067aa0ba902b7"],
    ];
    // grpc-js hands the server repeated metadata joined with ", " (W3C allows spaces around the commas).
    expect(await forwarded(entries)).toEqual({
      traceparent: TRACEPARENT,
      tracestate: "congo=t61rcWkgMzE, rojo=00f067aa0ba902b7",
    });
  });

  it("forwards nothing for a traceparent that is not W3C's form, and drops its tracestate", async () => {
    for (const traceparent of [
      `00-${TRACE.toUpperCase()}-${PARENT}-01`,
      `00-${"0".repeat(32)}-${PARENT}-01`,
      `00-${TRACE}-${"0".repeat(16)}-01`,
      `ff-${TRACE}-${PARENT}-01`,
      `00-${TRACE}-${PARENT}-01-extra`,
      `00-${TRACE}-${PARENT}`,
      ` ${TRACEPARENT}`,
      "",
    ]) {
      const entries: [string, string][] = [
        ["traceparent", traceparent],
        ["tracestate", "congo=t61rcWkgMzE"],
      ];
      expect(await forwarded(entries)).toEqual({ traceparent: undefined, tracestate: undefined });
    }
    expect(await forwarded([["tracestate", "congo=t61rcWkgMzE"]])).toEqual({
      traceparent: undefined,
      tracestate: undefined,
    });
    const twice: [string, string][] = [
      ["traceparent", TRACEPARENT],
      ["traceparent", `00-${TRACE}-${"1".repeat(16)}-01`],
    ];
    expect(await forwarded(twice)).toEqual({ traceparent: undefined, tracestate: undefined });
  });

  it("forwards a tracestate of up to 512 characters, and drops a longer one but keeps the traceparent", async () => {
    const longest = `a=${"b".repeat(TRACESTATE_MAX_LENGTH - 2)}`;
    expect(TRACESTATE_MAX_LENGTH).toBe(512);
    expect(
      await forwarded([
        ["traceparent", TRACEPARENT],
        ["tracestate", longest],
      ]),
    ).toEqual({
      traceparent: TRACEPARENT,
      tracestate: longest,
    });
    expect(
      await forwarded([
        ["traceparent", TRACEPARENT],
        ["tracestate", `${longest}b`],
      ]),
    ).toEqual({
      traceparent: TRACEPARENT,
      tracestate: undefined,
    });
  });

  it("refuses a tracestate with a control character (which grpc-js clients cannot send)", () => {
    expect(isValidTracestate("congo=t61rcWkgMzE")).toBe(true);
    for (const text of ["congo=t61\trcWkgMzE", "congo=x\r\nx-injected: 1", "congo=\x7f", "congo=é", ""])
      expect(isValidTracestate(text)).toBe(false);
  });
});
