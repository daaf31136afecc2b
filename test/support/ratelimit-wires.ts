// Calling the rate limit service with changed variables or bindings, over each wire of ShouldRateLimit (POST /json,
// Connect binary and JSON, gRPC-Web, the reverse bridge's bare application/proto), and a counter binding that
// records which counter objects a request reached.
import { create, toBinary, type MessageInitShape } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-web";
import { createExecutionContext } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import worker from "../../src/index";
import { RateLimitRequestSchema, RateLimitService } from "../../src/ratelimit/gen/envoy/service/ratelimit/v3/rls_pb";

export const SHOULD_RATE_LIMIT = "/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit";

/** Calls the Worker with extra or changed variables and bindings (settings are parsed per env object). */
export function callWithEnv(vars: Record<string, unknown>, path: string, init: RequestInit = {}) {
  const request = new Request(`http://example.com${path}`, init);
  return worker.fetch(request, { ...env, ...vars } as Env, createExecutionContext());
}

/** POST /json with this body, under `vars`. */
export const postJson = (vars: Record<string, unknown>, body: BodyInit) =>
  callWithEnv(vars, "/json", { method: "POST", body });

/** The reverse bridge's call (and the Node gateway's): the bare message, no frame, no Connect headers. */
export const postRawProto = (vars: Record<string, unknown>, request: MessageInitShape<typeof RateLimitRequestSchema>) =>
  callWithEnv(vars, SHOULD_RATE_LIMIT, {
    method: "POST",
    headers: { "content-type": "application/proto" },
    body: toBinary(RateLimitRequestSchema, create(RateLimitRequestSchema, request)),
  });

/** A Durable Object namespace in place of RATE_LIMIT_COUNTER that records every counter object asked for. */
export function recordingCounters() {
  const objects: string[] = [];
  const binding = {
    getByName(name: string) {
      objects.push(name);
      return {
        increment: async (items: unknown[]) => items.map(() => 1),
        read: async (keys: unknown[]) => keys.map(() => 0),
      };
    },
  };
  return { objects, binding };
}

/**
 * A fetch over the Worker for connect-web: workerd refuses `redirect: "error"`, so the browser-only fields are
 * dropped. With `vars`, the Worker runs with those variables or bindings changed (settings are per env object).
 */
export function workerFetch(vars?: Record<string, unknown>): typeof globalThis.fetch {
  return (async (input: RequestInfo | URL, init: RequestInit = {}) => {
    const {
      redirect: _redirect,
      mode: _mode,
      credentials: _credentials,
      ...rest
    } = init as RequestInit & {
      mode?: string;
      credentials?: string;
    };
    const request = new Request(input, rest);
    if (!vars) return exports.default.fetch(request);
    return worker.fetch(request, { ...env, ...vars } as Env, createExecutionContext());
  }) as typeof globalThis.fetch;
}

/** connect-web clients over the Worker (workerd refuses the browser-only fetch fields), with `vars` applied. */
export function clients(vars: Record<string, unknown>) {
  const options = { baseUrl: "http://example.com", fetch: workerFetch(vars) };
  return {
    "Connect binary": createClient(RateLimitService, createConnectTransport({ ...options, useBinaryFormat: true })),
    "Connect JSON": createClient(RateLimitService, createConnectTransport(options)),
    "gRPC-Web": createClient(RateLimitService, createGrpcWebTransport(options)),
  };
}
