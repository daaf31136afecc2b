// Envoy's RateLimitService v3 on the Worker when it refuses or fails: the reference's codes and messages on every
// path, a failing or slow counter store, gRPC proper and GET, and no configuration loaded.
import { Code } from "@connectrpc/connect";
import { describe, expect, it, vi } from "vitest";
import { call, callJson } from "../../support/worker-http";
import { connectErrorOf, descriptor, installConfig, RATELIMIT_ADMIN, rateLimit } from "../../support/ratelimit-calls";
import { workerFetch } from "../../support/ratelimit-wires";
import { atNowWithConfig } from "../../support/ratelimit-decision-suite";
import { okStatus } from "../../support/ratelimit-statuses";
import { clients, CONFIG, PATH, rawProto, type RequestInit_, transports } from "./grpc-fixtures";

/** Every Connect and gRPC-Web client gets `code` with `message`; the raw POST gets `raw`'s status and error code. */
async function expectRefusedOnEveryPath(
  request: RequestInit_,
  code: Code,
  raw: { status: number; code: string },
  message: string,
) {
  for (const client of Object.values(transports)) {
    expect(await connectErrorOf(client.shouldRateLimit(request))).toEqual({ code, message });
  }
  expect(await rawProto(request)).toEqual({
    status: raw.status,
    contentType: "application/json",
    error: { code: raw.code, message },
  });
}

atNowWithConfig({ "grpc.yaml": CONFIG });

describe("ShouldRateLimit errors", () => {
  it.each([
    ["an empty domain", { domain: "", descriptors: [descriptor(["a", "b"])] }, "rate limit domain must not be empty"],
    ["no descriptors", { domain: "grpc", descriptors: [] }, "rate limit descriptor list must not be empty"],
  ])("answers %s with UNKNOWN and the reference's message on every path", async (_label, request, message) => {
    await expectRefusedOnEveryPath(request, Code.Unknown, { status: 500, code: "unknown" }, message);
  });

  it("refuses an override without a unit with INVALID_ARGUMENT", async () => {
    const request = {
      domain: "grpc",
      descriptors: [{ entries: [{ key: "a", value: "b" }], limit: { requestsPerUnit: 5 } }],
    };
    const message = "descriptor 0: limit override needs a unit";
    await expectRefusedOnEveryPath(request, Code.InvalidArgument, { status: 400, code: "invalid_argument" }, message);
  });

  it("refuses a hits_addend past 2^53 - 1, which /json refuses too", async () => {
    const request = { domain: "grpc", descriptors: [{ entries: [{ key: "a", value: "b" }], hitsAddend: 2n ** 53n }] };
    expect(await connectErrorOf(transports["Connect binary"].shouldRateLimit(request))).toEqual({
      code: Code.InvalidArgument,
      message: "descriptor 0: hits_addend 9007199254740992 is larger than 2^53 - 1",
    });
    expect(
      (
        await rateLimit({
          domain: "grpc",
          descriptors: [{ entries: [{ key: "a", value: "b" }], hitsAddend: "9007199254740992" }],
        })
      ).status,
    ).toBe(400);
  });

  it("refuses unknown JSON fields like the reference's protojson, and reads snake_case names", async () => {
    const unknown = await callJson(PATH, "POST", { domain: "grpc", descriptors: [descriptor(["a", "b"])], extra: 1 });
    expect(unknown.status).toBe(400);
    expect(await unknown.json()).toMatchObject({
      code: "invalid_argument",
      message: expect.stringContaining('"extra"'),
    });
    const snake = await callJson(PATH, "POST", {
      domain: "grpc",
      hits_addend: 3,
      descriptors: [descriptor(["client", "snake-case"])],
    });
    expect(snake.status).toBe(200);
    expect(((await snake.json()) as { statuses: unknown[] }).statuses).toEqual([okStatus(3, "HOUR", 0, "3570s")]);
  });

  it("answers UNAVAILABLE (HTTP 503) with a generic message when the counter store fails", async () => {
    const failing = {
      getByName: () => ({
        increment: async () => {
          throw new Error("storage exploded: secret detail");
        },
        read: async () => {
          throw new Error("storage exploded: secret detail");
        },
      }),
    };
    const error = vi.spyOn(console, "error").mockImplementation(() => {});
    const client = clients({ RATE_LIMIT_COUNTER: failing })["Connect binary"];
    expect(
      await connectErrorOf(client.shouldRateLimit({ domain: "grpc", descriptors: [descriptor(["client", "store"])] })),
    ).toEqual({
      code: Code.Unavailable,
      message: "rate limit counter store error",
    });
    const raw = await workerFetch({ RATE_LIMIT_COUNTER: failing })(`http://example.com${PATH}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ domain: "grpc", descriptors: [descriptor(["client", "store-raw"])] }),
    });
    expect(raw.status).toBe(503);
    expect(await raw.json()).toEqual({ code: "unavailable", message: "rate limit counter store error" });
    expect(error.mock.calls.map((args) => String(args[0])).join("\n")).toContain("storage exploded: secret detail");
    error.mockRestore();
  });

  it("answers DEADLINE_EXCEEDED at the Connect timeout the caller sent, even when the store is slow", async () => {
    let release = () => {};
    const released = new Promise<void>((resolve) => (release = resolve));
    const slow = {
      getByName: () => ({
        increment: async (items: unknown[]) => {
          await released;
          return items.map(() => 1);
        },
      }),
    };
    const response = await workerFetch({ RATE_LIMIT_COUNTER: slow })(`http://example.com${PATH}`, {
      method: "POST",
      headers: { "content-type": "application/json", "connect-timeout-ms": "150" },
      body: JSON.stringify({ domain: "grpc", descriptors: [descriptor(["client", "slow"])] }),
    });
    release();
    expect(response.status).toBe(504);
    expect(await response.json()).toEqual({ code: "deadline_exceeded", message: "the operation timed out" });
  });

  it("answers 415 to gRPC proper, which a Worker cannot answer without trailers, and 405 to GET", async () => {
    const grpc = await call(PATH, {
      method: "POST",
      headers: { "content-type": "application/grpc" },
      body: new Uint8Array(5),
    });
    expect(grpc.status).toBe(415);
    const get = await call(PATH);
    expect(get.status).toBe(405);
    expect(get.headers.get("allow")).toBe("POST");
    expect(get.headers.get("content-type")).toMatch(/^text\/plain/);
    expect(await get.text()).toBe(`method GET is not allowed on ${PATH}; allowed: POST`);
  });

  it("answers UNKNOWN with the reference's message when no configuration is loaded", async () => {
    // A set stored under MERGE_DOMAIN_CONFIG=true cannot load in an isolate whose settings forbid merging.
    const merged = {
      "a.yaml": "domain: twice\ndescriptors:\n  - key: k\n",
      "b.yaml": "domain: twice\ndescriptors:\n  - key: j\n",
    };
    const stored = await workerFetch({ MERGE_DOMAIN_CONFIG: "true" })("http://example.com/rlconfig/files", {
      method: "PUT",
      headers: RATELIMIT_ADMIN,
      body: JSON.stringify({ files: merged }),
    });
    expect(stored.status).toBe(200);
    try {
      const request = { domain: "twice", descriptors: [descriptor(["k", "v"])] };
      const message = "no rate limit configuration loaded";
      for (const client of Object.values(clients({ MERGE_DOMAIN_CONFIG: "false" }))) {
        expect(await connectErrorOf(client.shouldRateLimit(request))).toEqual({ code: Code.Unknown, message });
      }
    } finally {
      await installConfig({ "grpc.yaml": CONFIG });
    }
  });
});
