// Bodies over a service's limit through a real `wrangler dev`: the 413 comes back, and the client's keep-alive
// connection still answers the next request, whether the body declared its length or streamed past the limit.
import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWranglerDev, type DevServer } from "../support/wrangler-dev.mjs";

let server: DevServer;
let agent: http.Agent;

beforeAll(async () => {
  server = await startWranglerDev({});
  agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
});

afterAll(async () => {
  agent?.destroy();
  await server?.stop();
});

/** One request on the single kept-alive socket; `chunks` are written one by one (no Content-Length when several). */
function send(method: string, path: string, chunks: string[] = [], headers: Record<string, string> = {}) {
  const { port } = new URL(server.url);
  return new Promise<{ status: number; body: string; socket: unknown }>((resolve, reject) => {
    const request = http.request({ host: "127.0.0.1", port, method, path, agent, headers }, (response) => {
      let body = "";
      response.on("data", (data) => (body += data));
      response.on("end", () => resolve({ status: response.statusCode!, body, socket: request.socket }));
    });
    request.on("error", reject);
    request.setTimeout(10_000, () => request.destroy(new Error(`${method} ${path} got no answer in 10 s`)));
    for (const chunk of chunks) request.write(chunk);
    request.end();
  });
}

const MiB = 1024 * 1024;
const tooLarge = (setting: string) => `request body is larger than ${MiB} bytes (the limit set by ${setting})`;

describe("a body over the limit", () => {
  const half = "x".repeat(MiB);
  it.each<[string, string[], Record<string, string>]>([
    ["with a declared length", ["x".repeat(2 * MiB)], { "content-length": String(2 * MiB) }],
    ["streamed without a length", [half, half, half], {}],
  ])("%s: 413, and the same connection answers the next request", async (_name, parts, headers) => {
    const refused = await send("POST", "/json", parts, headers);
    expect({ status: refused.status, body: refused.body }).toEqual({
      status: 413,
      body: tooLarge("RATELIMIT_MAX_REQUEST_BYTES"),
    });
    const next = await send("GET", "/test/ping");
    expect({ status: next.status, body: next.body }).toEqual({ status: 200, body: "pong from master instance" });
    expect(next.socket).toBe(refused.socket);
  });
});
