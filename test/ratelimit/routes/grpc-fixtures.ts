// What the RateLimitService route tests share: their rules, the Connect and gRPC-Web clients over the Worker, and the
// reverse bridge's raw application/proto POST.
import { create, fromBinary, toBinary, type MessageInitShape } from "@bufbuild/protobuf";
import { createClient, type Client } from "@connectrpc/connect";
import { createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-web";
import {
  RateLimitRequestSchema,
  RateLimitResponseSchema,
  RateLimitService,
} from "../../../src/ratelimit/gen/envoy/service/ratelimit/v3/rls_pb";
import { workerFetch } from "../../support/ratelimit-wires";
import { GOLD_METADATA, UNLIMITED_AND_BLOCKED_RULES } from "../../support/ratelimit-rules";

export const PATH = "/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit";

export const CONFIG = `
domain: grpc
descriptors:
  - key: shared
    rate_limit:
      unit: hour
      requests_per_unit: 4
  - key: client
    rate_limit:
      unit: hour
      requests_per_unit: 3
  - key: user
    rate_limit:
      name: per-user
      unit: minute
      requests_per_unit: 2
  - key: path
    value: /free
${UNLIMITED_AND_BLOCKED_RULES}
  - key: tagged
${GOLD_METADATA}
      nothing: ~
    rate_limit:
      unit: hour
      requests_per_unit: 5
  - key: bucket
    rate_limit:
      algorithm: token_bucket
      unit: second
      requests_per_unit: 10
`;

export type RequestInit_ = MessageInitShape<typeof RateLimitRequestSchema>;

export function clients(vars?: Record<string, unknown>): Record<string, Client<typeof RateLimitService>> {
  const options = { baseUrl: "http://example.com", fetch: workerFetch(vars) };
  return {
    "Connect binary": createClient(RateLimitService, createConnectTransport({ ...options, useBinaryFormat: true })),
    "Connect JSON": createClient(RateLimitService, createConnectTransport(options)),
    "gRPC-Web": createClient(RateLimitService, createGrpcWebTransport(options)),
  };
}

export const transports = clients();

/** The reverse bridge's request: the bare message, no gRPC frame, no Connect headers. */
export async function rawProto(request: RequestInit_, vars?: Record<string, unknown>) {
  const response = await workerFetch(vars)(`http://example.com${PATH}`, {
    method: "POST",
    headers: { "content-type": "application/proto" },
    body: toBinary(RateLimitRequestSchema, create(RateLimitRequestSchema, request)),
  });
  const contentType = response.headers.get("content-type");
  if (contentType !== "application/proto")
    return { status: response.status, contentType, error: await response.json() };
  return {
    status: response.status,
    contentType,
    message: fromBinary(RateLimitResponseSchema, new Uint8Array(await response.arrayBuffer())),
  };
}
