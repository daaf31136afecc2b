// Envoy's RateLimitService v3 on the Worker: Connect (binary and JSON), gRPC-Web and the reverse bridge's raw
// application/proto POST, through the real Worker with real Durable Objects and a frozen clock. Each path must
// answer like POST /json for the same request and count on the same counters.
import { create, fromBinary, toBinary, toJson } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import {
  RateLimitRequestSchema,
  RateLimitResponseSchema,
} from "../../../src/ratelimit/gen/envoy/service/ratelimit/v3/rls_pb";
import { RateLimitUnit } from "../../../src/ratelimit/gen/envoy/type/v3/ratelimit_unit_pb";
import { call, callJson } from "../../support/worker-http";
import { descriptor, rateLimit } from "../../support/ratelimit-calls";
import { workerFetch } from "../../support/ratelimit-wires";
import { atNowWithConfig } from "../../support/ratelimit-decision-suite";
import { okStatus, overStatus } from "../../support/ratelimit-statuses";
import { everyKindOfDescriptor } from "../../support/ratelimit-requests";
import { clients, CONFIG, PATH, rawProto, type RequestInit_, transports } from "./grpc-fixtures";

/**
 * Calls over the given path and answers in proto3 JSON, the form POST /json answers; with `vars`, the Worker runs with
 * those changed, as in workerFetch.
 */
async function decideVia(path: string, request: RequestInit_, vars?: Record<string, unknown>): Promise<unknown> {
  if (path === "/json") {
    const body = JSON.stringify(toJson(RateLimitRequestSchema, create(RateLimitRequestSchema, request)));
    return (await workerFetch(vars)("http://example.com/json", { method: "POST", body })).json();
  }
  if (path === "raw application/proto") {
    const answer = await rawProto(request, vars);
    expect(answer.status).toBe(200);
    return toJson(RateLimitResponseSchema, answer.message!);
  }
  return toJson(RateLimitResponseSchema, await (vars ? clients(vars) : transports)[path].shouldRateLimit(request));
}

const PATHS = ["Connect binary", "Connect JSON", "gRPC-Web", "raw application/proto"] as const;

atNowWithConfig({ "grpc.yaml": CONFIG });

describe("ShouldRateLimit on the Worker", () => {
  it("counts on the same counters as POST /json, whatever the path", async () => {
    const request = { domain: "grpc", descriptors: [descriptor(["shared", "one"])] };
    const answers = [];
    for (const path of ["/json", ...PATHS, "/json"]) answers.push(await decideVia(path, request));
    const ok = (remaining: number) => ({ overallCode: "OK", statuses: [okStatus(4, "HOUR", remaining, "3570s")] });
    const over = {
      overallCode: "OVER_LIMIT",
      statuses: [overStatus(4, "HOUR", "3570s")],
    };
    expect(answers).toEqual([ok(3), ok(2), ok(1), ok(0), over, over]);
  });

  it.each(PATHS)("answers every kind of status as POST /json does, over %s", async (path) => {
    // Same rules, fresh keys per call, so the path and /json start from the same counts.
    const request = (who: string) => ({
      domain: "grpc",
      descriptors: [...everyKindOfDescriptor(who), descriptor(["blocked", "b"])],
    });
    const viaPath = await decideVia(path, request(`kinds-${path}`));
    const viaJson = await rateLimit(request(`kinds-json-${path}`));
    expect(viaJson.status).toBe(429);
    expect(viaPath).toEqual(viaJson.body);
    expect(viaPath).toEqual({
      overallCode: "OVER_LIMIT",
      statuses: [
        okStatus(3, "HOUR", 2, "3570s"),
        okStatus(2, "MINUTE", 1, "30s", "per-user"),
        { code: "OK" },
        { code: "OK", limitRemaining: 4294967295 },
        { code: "OK" },
        overStatus(0, "DAY", "86370s"),
      ],
    });
  });

  it.each(PATHS)("applies hits_addend, an explicit zero and a limit override like /json, over %s", async (path) => {
    const request = (suffix: string) => ({
      domain: "grpc",
      hitsAddend: 2,
      descriptors: [
        descriptor(["client", `hits-${suffix}`]),
        { entries: [{ key: "client", value: `peek-${suffix}` }], hitsAddend: 0n },
        {
          entries: [{ key: "client", value: `override-${suffix}` }],
          limit: { requestsPerUnit: 10, unit: RateLimitUnit.DAY },
        },
      ],
    });
    const viaPath = await decideVia(path, request(path));
    const viaJson = await decideVia("/json", request(`json-${path}`));
    expect(viaPath).toEqual(viaJson);
    expect(viaPath).toEqual({
      overallCode: "OK",
      statuses: [okStatus(3, "HOUR", 1, "3570s"), okStatus(3, "HOUR", 3, "3570s"), okStatus(10, "DAY", 8, "86370s")],
    });
  });

  it("answers OVER_LIMIT with HTTP 200 on every path, the decision in the body", async () => {
    const request = { domain: "grpc", descriptors: [descriptor(["blocked", "http-status"])] };
    const raw = await rawProto(request);
    expect([raw.status, raw.contentType, raw.message?.overallCode]).toEqual([200, "application/proto", 2]);

    const connect = await callJson(PATH, "POST", request);
    expect(connect.status).toBe(200);
    expect(connect.headers.get("content-type")).toBe("application/json");
    expect(await connect.json()).toEqual({
      overallCode: "OVER_LIMIT",
      statuses: [overStatus(0, "DAY", "86370s")],
    });

    // gRPC-Web by hand: one length-prefixed message frame, then a trailer frame carrying grpc-status 0.
    const message = toBinary(RateLimitRequestSchema, create(RateLimitRequestSchema, request));
    const frame = new Uint8Array(5 + message.length);
    new DataView(frame.buffer).setUint32(1, message.length);
    frame.set(message, 5);
    const grpcWeb = await call(PATH, {
      method: "POST",
      headers: { "content-type": "application/grpc-web+proto" },
      body: frame,
    });
    expect(grpcWeb.status).toBe(200);
    const body = new Uint8Array(await grpcWeb.arrayBuffer());
    const view = new DataView(body.buffer);
    const length = view.getUint32(1);
    expect(fromBinary(RateLimitResponseSchema, body.slice(5, 5 + length)).overallCode).toBe(2);
    expect(body[5 + length]).toBe(0x80);
    expect(new TextDecoder().decode(body.slice(10 + length))).toContain("grpc-status: 0");
  });

  it("adds the RateLimit headers when enabled, as /json does", async () => {
    const vars = { LIMIT_RESPONSE_HEADERS_ENABLED: "true" };
    const request = (client: string) => ({ domain: "grpc", descriptors: [descriptor(["client", client])] });
    const viaConnect = toJson(
      RateLimitResponseSchema,
      await clients(vars)["Connect binary"].shouldRateLimit(request("headers-grpc")),
    );
    const viaJson = await workerFetch(vars)(`http://example.com/json`, {
      method: "POST",
      body: JSON.stringify(request("headers-json")),
    });
    expect(viaConnect).toEqual(await viaJson.json());
    expect(viaConnect).toMatchObject({
      responseHeadersToAdd: [
        { key: "RateLimit-Limit", value: "3" },
        { key: "RateLimit-Remaining", value: "2" },
        { key: "RateLimit-Reset", value: "3570" },
      ],
    });
  });
});

describe("the newest response fields on every path", () => {
  const vars = { RESPONSE_DYNAMIC_METADATA: "true" };
  const request = (who: string): RequestInit_ => ({
    domain: "grpc",
    hitsAddend: 2,
    descriptors: [
      descriptor(["tagged", who]),
      { entries: [{ key: "unlimited", value: "u" }], hitsAddend: 0n },
      { entries: [{ key: "client", value: who }], limit: { requestsPerUnit: 10, unit: RateLimitUnit.DAY } },
    ],
  });

  it.each(PATHS)("answers dynamicMetadata as a Struct equal to what /json answers, over %s", async (path) => {
    const viaPath = await decideVia(path, request(`metadata-${path}`), vars);
    const viaJson = await decideVia("/json", request(`metadata-json-${path}`), vars);
    const forWho = (who: string) => ({
      domain: "grpc",
      descriptors: [
        { entries: [`tagged=${who}`] },
        { entries: ["unlimited=u"], hitsAddend: 0 },
        { entries: [`client=${who}`], limit: "requests_per_unit:10 unit:DAY" },
      ],
      hitsAddend: 2,
      metadata: { tier: "gold", limits: { daily: 100 }, tags: ["a", "b"], ratio: 0.5, nothing: null },
    });
    expect(viaJson).toMatchObject({ dynamicMetadata: forWho(`metadata-json-${path}`) });
    expect(viaPath).toEqual({ ...(viaJson as object), dynamicMetadata: forWho(`metadata-${path}`) });
    expect(viaPath).toMatchObject({
      overallCode: "OK",
      statuses: [
        okStatus(5, "HOUR", 3, "3570s"),
        { code: "OK", limitRemaining: 4294967295 },
        okStatus(10, "DAY", 8, "86370s"),
      ],
    });
  });

  it("answers a token bucket's fractional durationUntilReset over Connect as /json does", async () => {
    const bucket = (who: string) => ({ domain: "grpc", descriptors: [descriptor(["bucket", who])] });
    const message = await transports["Connect binary"].shouldRateLimit(bucket("fraction-connect"));
    // 10 a second: the token taken comes back 0.1 s later.
    expect(message.statuses[0].durationUntilReset).toMatchObject({ seconds: 0n, nanos: 100_000_000 });
    const status = okStatus(10, "SECOND", 9, "0.100s");
    expect(toJson(RateLimitResponseSchema, message)).toEqual({ overallCode: "OK", statuses: [status] });
    expect(await decideVia("Connect JSON", bucket("fraction-connect-json"))).toEqual({
      overallCode: "OK",
      statuses: [status],
    });
    expect((await rateLimit(bucket("fraction-json"))).body).toEqual({ overallCode: "OK", statuses: [status] });
  });
});

describe("the bare binary call (the gateway's and the reverse bridge's)", () => {
  /** The same call with `content-encoding: identity`, which the Connect router answers instead of the fast path. */
  async function bothWays(body: Uint8Array, headers: Record<string, string> = {}) {
    const answers = [];
    const variants: Record<string, string>[] = [{}, { "content-encoding": "identity" }];
    for (const extra of variants) {
      const response = await call(PATH, {
        method: "POST",
        headers: { "content-type": "application/proto", ...headers, ...extra },
        body,
      });
      answers.push({
        status: response.status,
        headers: Object.fromEntries([...response.headers].filter(([name]) => name !== "content-length")),
        body: [...new Uint8Array(await response.arrayBuffer())],
      });
    }
    return answers;
  }
  const encode = (request: RequestInit_) => toBinary(RateLimitRequestSchema, create(RateLimitRequestSchema, request));

  const free = () =>
    encode({ domain: "grpc", descriptors: [descriptor(["unlimited", "both-ways"]), descriptor(["path", "/free"])] });
  it.each([
    ["a decision", free(), {}, 200],
    [
      "a decision with the Connect headers",
      free(),
      { "connect-protocol-version": "1", "connect-timeout-ms": "5000" },
      200,
    ],
    ["an empty domain", encode({ domain: "", descriptors: [descriptor(["a", "b"])] }), {}, 500],
    [
      "an override without a unit",
      encode({ domain: "grpc", descriptors: [{ entries: [{ key: "a", value: "b" }], limit: { requestsPerUnit: 1 } }] }),
      {},
      400,
    ],
    ["a body that does not decode", new Uint8Array([0x0a, 0x05, 0x61]), {}, 500],
    ["a malformed timeout", free(), { "connect-timeout-ms": "soon" }, 400],
  ])("answers %s exactly as the Connect router does", async (_label, body, headers, status) => {
    const [fast, router] = await bothWays(body, headers);
    expect(fast).toEqual(router);
    expect(fast.status).toBe(status);
  });

  it("answers DEADLINE_EXCEEDED at connect-timeout-ms when the store is slow", async () => {
    let release = () => {};
    const released = new Promise<void>((resolve) => (release = resolve));
    const slow = { getByName: () => ({ increment: async (items: unknown[]) => (await released, items.map(() => 1)) }) };
    const response = await workerFetch({ RATE_LIMIT_COUNTER: slow })(`http://example.com${PATH}`, {
      method: "POST",
      headers: { "content-type": "application/proto", "connect-timeout-ms": "150" },
      body: encode({ domain: "grpc", descriptors: [descriptor(["client", "slow-binary"])] }),
    });
    release();
    expect([response.status, response.headers.get("content-type")]).toEqual([504, "application/json"]);
    expect(await response.json()).toEqual({ code: "deadline_exceeded", message: "the operation timed out" });
  });
});
