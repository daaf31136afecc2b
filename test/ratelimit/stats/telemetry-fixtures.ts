// What the statistics tests through the real Worker share: the frozen clock, a Worker over its own env (so its own
// isolate buffer) with its calls, and the names of the service-level statistics.
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterAll, afterEach, beforeAll, expect, vi } from "vitest";
import worker from "../../../src/index";
import { parseStats, RATELIMIT_ADMIN } from "../../support/ratelimit-calls";

// 2030-01-01T00:00:30Z. Only Date is frozen: flush timers run in real time, and response times are 0 ms.
const NOW = Date.UTC(2030, 0, 1, 0, 0, 30);
const GRPC_PATH = "/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit";

/** Sets up the calling file: Date frozen at NOW, and every spy restored after each test. */
export function frozenDate(): void {
  beforeAll(() => vi.useFakeTimers({ toFake: ["Date"], now: NOW }));
  afterAll(() => vi.useRealTimers());
  afterEach(() => vi.restoreAllMocks());
}

export type Pairs = [string, string][];
export const body = (domain: string, descriptors: Pairs[]) =>
  JSON.stringify({
    domain,
    descriptors: descriptors.map((pairs) => ({ entries: pairs.map(([key, value]) => ({ key, value })) })),
  });

/** A Worker whose env carries these variables (its own settings, so its own isolate buffer). */
export function service(vars: Record<string, unknown> = {}) {
  // An hour between flushes: nothing reaches the aggregate unless a test flushes (GET /stats does).
  const serviceEnv = { ...env, STATS_FLUSH_INTERVAL: "1h", ...vars } as Env;
  const lastContexts: ExecutionContext[] = [];
  const everyContext: ExecutionContext[] = [];
  const fetch = async (path: string, init: RequestInit = {}) => {
    const ctx = createExecutionContext();
    lastContexts.push(ctx);
    everyContext.push(ctx);
    return worker.fetch(new Request(`http://example.com${path}`, init), serviceEnv, ctx);
  };
  return {
    env: serviceEnv,
    fetch,
    /** Waits for every waitUntil of the calls so far (flushes and their timers). */
    settle: () => Promise.all(lastContexts.splice(0).map((ctx) => waitOnExecutionContext(ctx))),
    /** Waits for the waitUntils of this Worker's `index`-th call (from 0) only. */
    settleCall: (index: number) => waitOnExecutionContext(everyContext[index]),
    json: async (domain: string, descriptors: Pairs[], headers: Record<string, string> = {}) => {
      const response = await fetch("/json", { method: "POST", body: body(domain, descriptors), headers });
      await response.arrayBuffer();
      return response.status;
    },
    grpc: async (domain: string, descriptors: Pairs[], headers: Record<string, string> = {}) => {
      const response = await fetch(GRPC_PATH, {
        method: "POST",
        body: body(domain, descriptors),
        headers: { "content-type": "application/json", ...headers },
      });
      return { status: response.status, body: (await response.json()) as { overallCode?: string } };
    },
    put: async (files: Record<string, string>) => {
      const response = await fetch("/rlconfig/files", {
        method: "PUT",
        body: JSON.stringify({ files }),
        headers: RATELIMIT_ADMIN,
      });
      // A refusal is text/plain, like every error of the service.
      return { status: response.status, body: response.ok ? await response.json() : await response.text() };
    },
    statsText: async () => {
      const response = await fetch("/stats", { headers: RATELIMIT_ADMIN });
      expect(response.status).toBe(200);
      return response.text();
    },
    stats: async () => parseStats(await (await fetch("/stats", { headers: RATELIMIT_ADMIN })).text()),
  };
}

export const TOTAL_REQUESTS = "ratelimit_server.ShouldRateLimit.total_requests";
export const RESPONSE_TIME = "ratelimit_server.ShouldRateLimit.response_time";
export const SERVICE_ERROR = "ratelimit.service.call.should_rate_limit.service_error";
export const REDIS_ERROR = "ratelimit.service.call.should_rate_limit.redis_error";
export const LOAD_SUCCESS = "ratelimit.service.config_load_success";
export const LOAD_ERROR = "ratelimit.service.config_load_error";

export const simpleConfig = (domain: string, limit = 2) =>
  `domain: ${domain}\ndescriptors:\n  - key: k\n    rate_limit:\n      unit: hour\n      requests_per_unit: ${limit}\n`;
