// The kept-alive requests of the rate limit burst suites: a request nobody answers fails within its bound, naming
// itself, and one that wrangler dev's proxy lost is sent once more.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import {
  agent,
  keepProxyConnectionsFresh,
  proxyLosses,
  refreshProxyConnections,
  send,
  Unanswered,
} from "./ratelimit-kept-alive";
import { PROXY_LOST_REQUEST } from "./wrangler-dev.mjs";

let server: http.Server | undefined;

/** A local server that handles each request with `handle`; its URL. */
async function serve(handle: (request: http.IncomingMessage, response: http.ServerResponse) => void) {
  server = http.createServer(handle);
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

afterEach(async () => {
  agent.destroy();
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
});

describe("send", () => {
  it("fails a request nobody answers within its bound, naming it, and closes its connection", async () => {
    let closed = 0;
    const url = await serve((request) => request.socket.on("close", () => closed++));
    const started = Date.now();
    const failure = await send(url, "POST", "/json", "{}", 300).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(Unanswered);
    expect((failure as Error).message).toBe("POST /json: no answer within 300 ms");
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    // The server hears of the close a moment later, longer on a loaded machine.
    await expect.poll(() => closed, { timeout: 5000 }).toBe(1);
  });

  it("sends a request the proxy lost once more, counts it, and answers the second reply", async () => {
    const bodies: string[] = [];
    const url = await serve((request, response) => {
      let body = "";
      request.on("data", (chunk) => (body += chunk));
      request.on("end", () => {
        bodies.push(body);
        if (bodies.length === 1) response.writeHead(503).end(PROXY_LOST_REQUEST);
        else response.writeHead(200).end("counted");
      });
    });
    const before = proxyLosses.resent;
    expect(await send(url, "POST", "/json", '{"a":1}')).toEqual({ status: 200, text: "counted" });
    expect(bodies).toEqual(['{"a":1}', '{"a":1}']);
    expect(proxyLosses.resent - before).toBe(1);
  });
});

describe("refreshProxyConnections", () => {
  it("tries an unanswered GET again, and resolves once every GET is answered", async () => {
    const seen: string[] = [];
    const url = await serve((request, response) => {
      seen.push(`${request.method} ${request.url}`);
      // The first request is held: the refresh must not wait for it beyond its bound.
      if (seen.length > 1) response.end("pong");
    });
    const held = proxyLosses.heldPings;
    await refreshProxyConnections(url);
    expect(proxyLosses.heldPings - held).toBe(1);
    expect(seen.length).toBe(65);
    expect(new Set(seen)).toEqual(new Set(["GET /test/ping"]));
  }, 20_000);
});

describe("keepProxyConnectionsFresh", () => {
  it("gives up GETs nobody answers at their bound, counts them, and stops when told", async () => {
    let seen = 0;
    const url = await serve(() => seen++);
    const held = proxyLosses.heldPings;
    const stop = keepProxyConnectionsFresh(url, 100);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    await stop();
    // The round in flight when told to stop (64 GETs) ends at its bound, 5 s, and no other round begins.
    expect(proxyLosses.heldPings - held).toBe(64);
    expect(seen).toBe(64);
  }, 20_000);
});
