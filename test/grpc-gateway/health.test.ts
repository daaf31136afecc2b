// The gateway's grpc.health.v1 Check handler (createHealth, plain Node, with a stand-in upstream): which names it
// answers, and what it says of another.
import { describe, expect, it, vi } from "vitest";
import grpc from "@grpc/grpc-js";
import { createHealth } from "../../grpc-gateway/health.mjs";

/** What Check answers for `service`, with the Worker's /healthcheck answering `healthy`. */
async function check(service: string, healthy = true) {
  const upstream = { healthy: vi.fn(async () => healthy) };
  const health = createHealth(upstream);
  const call = { request: { service } } as unknown as grpc.ServerUnaryCall<{ service?: string }, { status: string }>;
  const answer = await new Promise((resolve) => health.check(call, (error, value) => resolve({ error, value })));
  return { answer, asked: upstream.healthy.mock.calls.length };
}

describe("createHealth", () => {
  it("answers the gateway itself and mirrors the Worker for ratelimit", async () => {
    expect(await check("")).toEqual({ answer: { error: null, value: { status: "SERVING" } }, asked: 0 });
    expect(await check("ratelimit", false)).toEqual({
      answer: { error: null, value: { status: "NOT_SERVING" } },
      asked: 1,
    });
  });

  it.each(["nope", "x".repeat(100_000)])("answers NOT_FOUND without repeating an unknown name (%#)", async (name) => {
    expect(await check(name)).toEqual({
      answer: { error: { code: grpc.status.NOT_FOUND, details: "unknown service" }, value: undefined },
      asked: 0,
    });
  });
});
