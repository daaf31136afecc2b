// The gateway's way to the Worker (createUpstream, plain Node, against a stand-in HTTP server): an answer that is no
// Connect error (a wrong URL or prefix, a proxy in between) and a /healthcheck other than 200 are logged, at most
// once per 10 s each, the next line counting those left out.
import grpc from "@grpc/grpc-js";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createUpstream } from "../../grpc-gateway/upstream.mjs";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  vi.useRealTimers();
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** A server answering every request `status` with this content type and body; the upstream to it, and its log. */
async function upstreamAnswering(status: number, contentType: string, body: string) {
  const server: Server = createServer((request, response) => {
    request.resume();
    request.on("end", () => {
      response.writeHead(status, { "content-type": contentType });
      response.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const log = vi.fn();
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/wrong-prefix`;
  const upstream = createUpstream({ url, connectTimeoutMs: 2000, defaultTimeoutMs: 3000, log });
  cleanups.push(async () => {
    upstream.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return { upstream, log };
}

const call = { deadline: Infinity };

describe("createUpstream: answers that are not the Worker's", () => {
  it("logs an answer without a Connect error once per 10 s, then with how many were left out", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const { upstream, log } = await upstreamAnswering(404, "application/json", '{"error":"Not Found"}');
    const refused = { ok: false, code: grpc.status.UNIMPLEMENTED, details: "rate limit service answered HTTP 404" };
    for (let i = 0; i < 3; i++) expect(await upstream.shouldRateLimit(Buffer.from([10, 1, 97]), call)).toEqual(refused);
    vi.advanceTimersByTime(10_000);
    expect(await upstream.shouldRateLimit(Buffer.from([10, 1, 97]), call)).toEqual(refused);
    const message = "grpc-gateway: the rate limit service answered without a Connect error";
    expect(log.mock.calls).toEqual([
      ["warn", message, { status: 404, contentType: "application/json" }],
      ["warn", message, { status: 404, contentType: "application/json", suppressed: 2 }],
    ]);
  });

  it("does not log the Worker's own Connect errors", async () => {
    const { upstream, log } = await upstreamAnswering(400, "application/json", '{"code":"invalid_argument"}');
    expect(await upstream.shouldRateLimit(Buffer.alloc(0), call)).toEqual({
      ok: false,
      code: grpc.status.INVALID_ARGUMENT,
      details: "",
    });
    expect(log).not.toHaveBeenCalled();
  });

  it("logs a /healthcheck answered other than 200 once per 10 s", async () => {
    const { upstream, log } = await upstreamAnswering(404, "text/plain", "Not Found");
    expect([await upstream.healthy(2000), await upstream.healthy(2000)]).toEqual([false, false]);
    expect(log.mock.calls).toEqual([
      ["warn", "grpc-gateway: Worker health check answered other than 200", { status: 404 }],
    ]);
  });
});
