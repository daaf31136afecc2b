// The xDS form of PUT /rlconfig/files ({"configs": [RateLimitConfig...]}) through the real Worker and D1, its refusals
// and their config_load_error count, and CONFIG_TYPE=GRPC_XDS_SOTW, where no configuration is in force until one is PUT.
import { createExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import worker from "../../../src/index";
import { bundledConfigFiles } from "../../../src/ratelimit/config/bundled.gen";
import { call, callJson } from "../../support/worker-http";
import { descriptor, parseStats, RATELIMIT_ADMIN, statDelta } from "../../support/ratelimit-calls";

const LOAD_SUCCESS = "ratelimit.service.config_load_success";
const LOAD_ERROR = "ratelimit.service.config_load_error";

const ORDERS = {
  name: "orders",
  domain: "xds-orders",
  descriptors: [{ key: "user", rateLimit: { unit: "MINUTE", requestsPerUnit: 3, name: "per-user" } }],
};
// Original field names and an enum number (4 = DAY).
const CART = {
  name: "cart",
  domain: "xds-cart",
  descriptors: [{ key: "item", value: "gift", shadow_mode: true, rate_limit: { unit: 4, requests_per_unit: "2" } }],
};
const ORDERS_YAML =
  "domain: xds-orders\ndescriptors:\n  - key: user\n    rate_limit:\n      unit: MINUTE\n      requests_per_unit: 3\n" +
  "      name: per-user\n";
const CART_YAML =
  "domain: xds-cart\ndescriptors:\n  - key: item\n    value: gift\n    rate_limit:\n      unit: DAY\n" +
  "      requests_per_unit: 2\n    shadow_mode: true\n";

/** GET /rlconfig/files under CONFIG_TYPE=GRPC_XDS_SOTW once only ORDERS is stored. */
const ORDERS_ONLY = {
  source: "runtime",
  version: expect.any(Number),
  domains: ["xds-orders"],
  files: { orders: ORDERS_YAML },
  uploaded: ["orders"],
};
/** The same under CONFIG_TYPE=FILE: the uploaded files are laid over the bundled ones, the README's example. */
const EXAMPLE_YAML = bundledConfigFiles["ratelimit/example.yaml"];
const ORDERS_OVER_BUNDLED = {
  ...ORDERS_ONLY,
  domains: ["example", "xds-orders"],
  files: { "example.yaml": EXAMPLE_YAML, orders: ORDERS_YAML },
};
/** Appended to the refusals of a body's shape. */
const SHAPE =
  'request body must be JSON {"files": {"<name>.yaml": "<YAML text>"}} (or an xDS snapshot {"configs": [...]}); ' +
  "to upload one YAML file as it is, use PUT /rlconfig/files/{name}";

/** A Worker whose env carries these variables: a distinct env object has its own settings and its own cached config. */
function service(vars: Record<string, unknown>) {
  const workerEnv = { ...env, ...vars } as Env;
  const fetch = (path: string, init: RequestInit = {}) =>
    worker.fetch(new Request(`http://example.com${path}`, init), workerEnv, createExecutionContext());
  return {
    fetch,
    put: async (body: unknown) => {
      const init = { method: "PUT", headers: RATELIMIT_ADMIN, body: JSON.stringify(body) };
      const response = await fetch("/rlconfig/files", init);
      // A refusal is text/plain, like every error of the service.
      return { status: response.status, body: response.ok ? await response.json() : await response.text() };
    },
    files: async () => (await fetch("/rlconfig/files", { headers: RATELIMIT_ADMIN })).json(),
    remove: async () => {
      const response = await fetch("/rlconfig/files", { method: "DELETE", headers: RATELIMIT_ADMIN });
      return { status: response.status, body: await response.json() };
    },
    json: async (body: unknown) => {
      const response = await fetch("/json", { method: "POST", body: JSON.stringify(body) });
      return { status: response.status, text: await response.text() };
    },
    stats: async () => parseStats(await (await fetch("/stats", { headers: RATELIMIT_ADMIN })).text()),
  };
}

const putConfigs = (body: unknown) => callJson("/rlconfig/files", "PUT", body, RATELIMIT_ADMIN);
const currentFiles = async () => (await call("/rlconfig/files", { headers: RATELIMIT_ADMIN })).json();

describe("PUT /rlconfig/files with RateLimitConfig resources", () => {
  it("stores the resources as YAML files named after them, and applies them", async () => {
    const put = await putConfigs({ configs: [ORDERS, CART] });
    expect(put.status).toBe(200);
    expect(await put.json()).toEqual({ domains: ["xds-cart", "example", "xds-orders"] });
    expect(await currentFiles()).toEqual({
      source: "runtime",
      version: expect.any(Number),
      domains: ["xds-cart", "example", "xds-orders"],
      files: { cart: CART_YAML, "example.yaml": EXAMPLE_YAML, orders: ORDERS_YAML },
      uploaded: ["cart", "orders"],
    });
    const stored = await env.DB.prepare("SELECT name, content FROM ratelimit_config_files ORDER BY name").all();
    expect(stored.results).toEqual([
      { name: "cart", content: CART_YAML },
      { name: "orders", content: ORDERS_YAML },
    ]);
    const answer = await callJson("/json", "POST", { domain: "xds-orders", descriptors: [descriptor(["user", "u1"])] });
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual({
      overallCode: "OK",
      statuses: [
        {
          code: "OK",
          currentLimit: { requestsPerUnit: 3, unit: "MINUTE", name: "per-user" },
          limitRemaining: 2,
          durationUntilReset: expect.any(String),
        },
      ],
    });
  });

  it("refuses a set that fails validation with the resource's name, and keeps the previous set", async () => {
    expect((await putConfigs({ configs: [ORDERS] })).status).toBe(200);
    const noUnit = {
      name: "no-unit",
      domain: "xds-nu",
      descriptors: [{ key: "k", rateLimit: { requestsPerUnit: 5 } }],
    };
    const refused = await putConfigs({ configs: [CART, noUnit] });
    expect(refused.status).toBe(400);
    expect(refused.headers.get("content-type")).toBe("text/plain; charset=UTF-8");
    expect(await refused.text()).toBe("no-unit: invalid rate limit unit 'UNKNOWN'");
    const unlimitedMinute = {
      name: "unl",
      domain: "xds-unl",
      descriptors: [{ key: "k", rateLimit: { unit: "MINUTE", unlimited: true } }],
    };
    const refusedToo = await putConfigs({ configs: [unlimitedMinute] });
    expect(refusedToo.status).toBe(400);
    expect(await refusedToo.text()).toBe("unl: should not specify rate limit unit when unlimited");
    expect(await currentFiles()).toEqual(ORDERS_OVER_BUNDLED);
    const stored = await env.DB.prepare("SELECT name FROM ratelimit_config_files ORDER BY name").all();
    expect(stored.results).toEqual([{ name: "orders" }]);
  });

  it.each<[string, unknown, string]>([
    [
      "an unknown field",
      { configs: [ORDERS, { name: "x", domain: "x", extra: 1 }] },
      "x: extra: unknown field",
    ],
    ["a missing name", { configs: [{ domain: "x" }] }, "configs[0]: a RateLimitConfig needs a name"],
    ["a duplicate name", { configs: [ORDERS, { ...CART, name: "orders" }] }, "orders: two configs have this name"],
    [
      "an algorithm field refused by the YAML validation",
      {
        configs: [
          {
            name: "q",
            domain: "q",
            descriptors: [
              {
                key: "k",
                rateLimit: { unit: "SECOND", requestsPerUnit: 1, algorithm: { kind: "FIXED_WINDOW", burst: 3 } },
              },
            ],
          },
        ],
      },
      "q: rate_limit.burst is only for algorithm token_bucket, not fixed_window",
    ],
  ])("refuses a resource with %s (400), keeping the previous set", async (_label, body, error) => {
    expect((await putConfigs({ configs: [ORDERS] })).status).toBe(200);
    const refused = await putConfigs(body);
    expect(refused.status).toBe(400);
    expect(await refused.text()).toBe(error);
    expect(await currentFiles()).toEqual(ORDERS_OVER_BUNDLED);
  });

  it.each<[string, unknown, string]>([
    ["both configs and files", { configs: [], files: {} }, `Unrecognized key: "files"; ${SHAPE}`],
    [
      "configs that are not a list",
      { configs: { name: "orders" } },
      `configs: Invalid input: expected array, received object; ${SHAPE}`,
    ],
  ])("refuses a body with %s", async (_label, body, error) => {
    const refused = await putConfigs(body);
    expect(refused.status).toBe(400);
    expect(await refused.text()).toBe(error);
  });

  it("counts an unreadable resource and a set that fails validation as failed config loads", async () => {
    const s = service({ STATS_FLUSH_INTERVAL: "1h" });
    const before = await s.stats();
    expect(await s.put({ configs: [{ name: "x", domain: "x", extra: 1 }] })).toEqual({
      status: 400,
      body: "x: extra: unknown field",
    });
    const afterUnreadable = await s.stats();
    expect(statDelta(before, afterUnreadable, LOAD_ERROR)).toBe(1);
    expect(statDelta(before, afterUnreadable, LOAD_SUCCESS)).toBe(0);
    const noUnit = { name: "y", domain: "y", descriptors: [{ key: "k", rateLimit: {} }] };
    const refused = await s.put({ configs: [noUnit] });
    expect(refused).toEqual({ status: 400, body: "y: invalid rate limit unit 'UNKNOWN'" });
    expect((await s.put({ configs: [ORDERS] })).status).toBe(200);
    const after = await s.stats();
    expect(statDelta(afterUnreadable, after, LOAD_ERROR)).toBe(1);
    expect(statDelta(afterUnreadable, after, LOAD_SUCCESS)).toBe(1);
  });
});

describe("CONFIG_TYPE=GRPC_XDS_SOTW", () => {
  const exampleRequest = { domain: "example", descriptors: [descriptor(["path", "/login"])] };
  const ordersRequest = { domain: "xds-orders", descriptors: [descriptor(["user", "u2"])] };

  it("keeps the bundled files out of force: nothing loads until a set is PUT, and DELETE returns to nothing", async () => {
    // Under FILE, an empty D1 state means the bundled files ("example").
    const cleared = await call("/rlconfig/files", { method: "DELETE", headers: RATELIMIT_ADMIN });
    expect(await cleared.json()).toEqual({ source: "bundled", domains: ["example"] });

    const xds = service({ CONFIG_TYPE: "GRPC_XDS_SOTW" });
    expect(await xds.json(exampleRequest)).toEqual({ status: 400, text: "no rate limit configuration loaded" });
    expect(await xds.files()).toEqual({ source: "bundled", version: expect.any(Number), domains: [], files: {}, uploaded: [] });

    expect(await xds.put({ configs: [ORDERS] })).toEqual({ status: 200, body: { domains: ["xds-orders"] } });
    const limited = await xds.json(ordersRequest);
    expect(limited.status).toBe(200);
    const perUser = { requestsPerUnit: 3, unit: "MINUTE", name: "per-user" };
    expect(JSON.parse(limited.text).statuses[0].currentLimit).toEqual(perUser);
    expect(await xds.files()).toEqual(ORDERS_ONLY);

    expect(await xds.remove()).toEqual({ status: 200, body: { source: "bundled", domains: [] } });
    expect(await xds.json(ordersRequest)).toEqual({ status: 400, text: "no rate limit configuration loaded" });
    expect(await xds.json(exampleRequest)).toEqual({ status: 400, text: "no rate limit configuration loaded" });
    expect(await xds.files()).toEqual({ source: "bundled", version: expect.any(Number), domains: [], files: {}, uploaded: [] });
  });

  it("is unhealthy under HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED until a set is PUT", async () => {
    await call("/rlconfig/files", { method: "DELETE", headers: RATELIMIT_ADMIN });
    const xds = service({ CONFIG_TYPE: "GRPC_XDS_SOTW", HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED: "true" });
    const before = await xds.fetch("/healthcheck");
    expect(before.status).toBe(500);
    expect(await before.text()).toBe("");
    expect((await xds.put({ configs: [ORDERS] })).status).toBe(200);
    const after = await xds.fetch("/healthcheck");
    expect(after.status).toBe(200);
    expect(await after.text()).toBe("OK");
  });
});
