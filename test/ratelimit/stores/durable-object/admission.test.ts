// The per_key layout's admission bound in the Workers runtime: past COUNTER_OBJECT_ACTIVE_LIMIT objects in use, a
// request for a new key that no object frees for within COUNTER_OBJECT_ADMISSION_MAX_WAIT is answered at once, 500 on
// /json and UNAVAILABLE over Connect, with a message naming both settings, and nothing of it is counted; keys in use
// still pass, and with the limit at 0 (the deploy configuration) nothing waits.
import { Code, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";
import { createExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import worker from "../../../../src/index";
import { counterStoreSettings } from "../../../../src/ratelimit/counter-store-settings";
import { RateLimitService } from "../../../../src/ratelimit/gen/envoy/service/ratelimit/v3/rls_pb";
import { connectErrorOf, descriptor, installConfig } from "../../../support/ratelimit-calls";
import { workerWith } from "../../../support/ratelimit-stores";

const CONFIG = `
domain: admission
descriptors:
  - key: client
    rate_limit:
      unit: hour
      requests_per_unit: 3
`;

const BUSY =
  "rate limit counter store error: this isolate already uses COUNTER_OBJECT_ACTIVE_LIMIT (2) counter objects, and " +
  "none frees within COUNTER_OBJECT_ADMISSION_MAX_WAIT (5000 ms)";

const hit = (...clients: string[]) => ({
  domain: "admission",
  descriptors: clients.map((client) => descriptor(["client", client])),
});

/** What a decision left of each status: its code and limitRemaining. */
const remaining = (body: { statuses: { code: string; limitRemaining?: number }[] }) =>
  body.statuses.map((status) => [status.code, status.limitRemaining ?? 0]);

beforeAll(() => installConfig({ "admission.yaml": CONFIG }));

describe("COUNTER_OBJECT_ACTIVE_LIMIT reached, per_key layout", () => {
  // The isolate's clock stands still: a request that waited for a slot or for the bound would never see either come,
  // and would run into the test's time limit, so "at once" needs no measurement.
  beforeAll(() => vi.useFakeTimers({ toFake: ["Date"], now: Date.now() }));
  afterAll(() => vi.useRealTimers());

  const limited = (prefix: string) =>
    workerWith({
      COUNTER_OBJECT_ACTIVE_LIMIT: "2",
      COUNTER_OBJECT_ADMISSION_MAX_WAIT: "5s",
      CACHE_KEY_PREFIX: prefix,
    });

  it("answers a new key 500 naming both settings, at once, and counts nothing of that request", async () => {
    const isolate = limited("adm_json_");
    expect((await isolate.rateLimit(hit("a"))).status).toBe(200);
    expect((await isolate.rateLimit(hit("b"))).status).toBe(200);
    const error = vi.spyOn(console, "error").mockImplementation(() => {});
    // Its slot could free only when "a" ages out, about 15 s on: far past the bound, so it does not wait for it.
    const refused = await isolate.rateLimit(hit("c"));
    // A request naming a key in use and a new one is refused whole: "a" is not counted either.
    const mixed = await isolate.rateLimit(hit("a", "d"));
    error.mockRestore();
    expect(refused).toEqual({ status: 500, body: BUSY, contentType: "text/plain; charset=UTF-8" });
    expect(mixed).toEqual(refused);
    // Keys in use still pass, counted from where they were.
    const again = await isolate.rateLimit(hit("a", "b"));
    expect([again.status, remaining(again.body)]).toEqual([
      200,
      [
        ["OK", 1],
        ["OK", 1],
      ],
    ]);
  });

  it("answers UNAVAILABLE over Connect with the same message", async () => {
    const isolate = limited("adm_connect_");
    const fetch = (async (input: RequestInfo | URL, init: RequestInit = {}) => {
      const { redirect: _redirect, ...rest } = init;
      return worker.fetch(new Request(input, rest), isolate.env, createExecutionContext());
    }) as typeof globalThis.fetch;
    const client = createClient(
      RateLimitService,
      createConnectTransport({ baseUrl: "http://example.com", fetch, useBinaryFormat: true }),
    );
    const error = vi.spyOn(console, "error").mockImplementation(() => {});
    const first = await client.shouldRateLimit(hit("a"));
    await client.shouldRateLimit(hit("b"));
    const refused = await connectErrorOf(client.shouldRateLimit(hit("c")));
    error.mockRestore();
    expect(first.overallCode).toBe(1);
    expect(refused).toEqual({ code: Code.Unavailable, message: BUSY });
  });

  it("is on in the tests, whose workerd runs the objects in its own process as wrangler dev does", () => {
    expect(counterStoreSettings(env).COUNTER_OBJECT_ACTIVE_LIMIT).toBe(2000);
  });

  it("lets every new key through at 0, the deploy configuration's value", async () => {
    const unlimited = workerWith({ COUNTER_OBJECT_ACTIVE_LIMIT: "0", CACHE_KEY_PREFIX: "adm_off_" });
    const statuses = [];
    for (const client of ["a", "b", "c", "d"]) statuses.push((await unlimited.rateLimit(hit(client))).status);
    expect(statuses).toEqual([200, 200, 200, 200]);
  });
});
