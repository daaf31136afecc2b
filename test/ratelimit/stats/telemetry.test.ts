// The rate limit service's statistics through the real Worker: exact names and values after known request
// sequences on /json and gRPC, service-level counters, the /stats, /metrics and /debug pages and their bearer, when
// isolates flush (never per request), DISABLE_STATS, EXTRA_TAGS, the log sink, and spans joined to a traceparent.
// Each test uses its own env object (its own isolate buffer) and its own domains; the aggregate is shared by the
// file, so service-level counters are compared before and after.
import parsePrometheusTextFormat from "parse-prometheus-text-format";
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import worker from "../../../src/index";
import { parseStats, RATELIMIT_ADMIN, statDelta } from "../../support/ratelimit-calls";
import { expectedRuleStats, STATS_CONFIG, statsSequence } from "../../support/ratelimit-stats-fixture";
import { executionSpan } from "../../support/ratelimit-spans";

// 2030-01-01T00:00:30Z. Only Date is frozen: flush timers run in real time, and response times are 0 ms.
const NOW = Date.UTC(2030, 0, 1, 0, 0, 30);
const GRPC_PATH = "/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit";

beforeAll(() => vi.useFakeTimers({ toFake: ["Date"], now: NOW }));
afterAll(() => vi.useRealTimers());
afterEach(() => vi.restoreAllMocks());

type Pairs = [string, string][];
const body = (domain: string, descriptors: Pairs[]) =>
  JSON.stringify({
    domain,
    descriptors: descriptors.map((pairs) => ({ entries: pairs.map(([key, value]) => ({ key, value })) })),
  });

/** A Worker whose env carries these variables (its own settings, so its own isolate buffer). */
function service(vars: Record<string, unknown> = {}) {
  // An hour between flushes: nothing reaches the aggregate unless a test flushes (GET /stats does).
  const serviceEnv = { ...env, STATS_FLUSH_INTERVAL: "1h", ...vars } as Env;
  const lastContexts: ExecutionContext[] = [];
  const fetch = async (path: string, init: RequestInit = {}) => {
    const ctx = createExecutionContext();
    lastContexts.push(ctx);
    return worker.fetch(new Request(`http://example.com${path}`, init), serviceEnv, ctx);
  };
  return {
    env: serviceEnv,
    fetch,
    /** Waits for every waitUntil of the calls so far (flushes and their timers). */
    settle: () => Promise.all(lastContexts.splice(0).map((ctx) => waitOnExecutionContext(ctx))),
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

const only = (stats: Record<string, number>, ...fragments: string[]) =>
  Object.fromEntries(Object.entries(stats).filter(([name]) => fragments.some((fragment) => name.includes(fragment))));

const TOTAL_REQUESTS = "ratelimit_server.ShouldRateLimit.total_requests";
const RESPONSE_TIME = "ratelimit_server.ShouldRateLimit.response_time";
const SERVICE_ERROR = "ratelimit.service.call.should_rate_limit.service_error";
const REDIS_ERROR = "ratelimit.service.call.should_rate_limit.redis_error";
const LOAD_SUCCESS = "ratelimit.service.config_load_success";
const LOAD_ERROR = "ratelimit.service.config_load_error";

const simpleConfig = (domain: string, limit = 2) =>
  `domain: ${domain}\ndescriptors:\n  - key: k\n    rate_limit:\n      unit: hour\n      requests_per_unit: ${limit}\n`;

describe("statistics of known request sequences", () => {
  it("counts every rule statistic exactly over /json (near, over, shadow, replaces, detailed_metric, value_to_metric)", async () => {
    const s = service();
    const before = await s.stats();
    expect((await s.put({ "seq.yaml": STATS_CONFIG("seq") })).status).toBe(200);
    const steps = statsSequence("seq", "seq-unknown");
    const statuses: number[] = [];
    for (const step of steps) statuses.push(await s.json(step.domain, step.descriptors));
    expect(statuses).toEqual(steps.map((step) => (step.code === "OK" ? 200 : 429)));

    const after = await s.stats();
    expect(only(after, ".seq.", ".seq-unknown.")).toEqual(expectedRuleStats("seq", "seq-unknown"));
    expect(statDelta(before, after, TOTAL_REQUESTS)).toBe(steps.length);
    expect(statDelta(before, after, RESPONSE_TIME)).toBe(steps.length);
    expect(statDelta(before, after, LOAD_SUCCESS)).toBe(1);
    expect(statDelta(before, after, SERVICE_ERROR)).toBe(0);
  });

  it("counts gRPC (Connect) calls under the same names as /json", async () => {
    const s = service();
    const before = await s.stats();
    expect((await s.put({ "rpc.yaml": STATS_CONFIG("rpc") })).status).toBe(200);
    const steps = statsSequence("rpc", "rpc-unknown");
    const codes: (string | undefined)[] = [];
    for (const step of steps) codes.push((await s.grpc(step.domain, step.descriptors)).body.overallCode);
    expect(codes).toEqual(steps.map((step) => step.code));
    const after = await s.stats();
    expect(only(after, ".rpc.", ".rpc-unknown.")).toEqual(expectedRuleStats("rpc", "rpc-unknown"));
    expect(statDelta(before, after, TOTAL_REQUESTS)).toBe(steps.length);
  });

  it("counts global shadow mode overrides", async () => {
    const s = service({ SHADOW_MODE: "true" });
    expect((await s.put({ "g.yaml": simpleConfig("gshadow") })).status).toBe(200);
    const before = await s.stats();
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push(await s.json("gshadow", [[["k", "v"]]]));
    expect(statuses).toEqual([200, 200, 200, 200, 200]);
    const after = await s.stats();
    expect(statDelta(before, after, "ratelimit.service.global_shadow_mode")).toBe(3);
    expect(after["ratelimit.service.rate_limit.gshadow.k.over_limit"]).toBe(3);
  });

  it("counts service errors and counter store errors by type", async () => {
    const s = service();
    const before = await s.stats();
    expect(await s.json("", [[["k", "v"]]])).toBe(400);
    expect(await s.json("errors", [])).toBe(400);
    const failing = service({
      RATE_LIMIT_COUNTER: {
        getByName: () => ({
          increment: async () => {
            throw new Error("store down");
          },
        }),
      },
    });
    vi.spyOn(console, "error").mockImplementation(() => {});
    expect((await failing.put({ "e.yaml": simpleConfig("errors") })).status).toBe(200);
    expect(await failing.json("errors", [[["k", "v"]]])).toBe(500);
    await failing.stats();
    const after = await s.stats();
    expect(statDelta(before, after, SERVICE_ERROR)).toBe(2);
    expect(statDelta(before, after, REDIS_ERROR)).toBe(1);
    expect(statDelta(before, after, TOTAL_REQUESTS)).toBe(3);
    expect(after["ratelimit.service.rate_limit.errors.k.total_hits"]).toBeUndefined();
  });

  it("counts configuration loads: a refused set, an accepted one, and an isolate loading the stored set", async () => {
    const s = service();
    const before = await s.stats();
    const refused = await s.put({
      "bad.yaml":
        "domain: loads\ndescriptors:\n  - key: k\n    rate_limit:\n      unit: fortnight\n      requests_per_unit: 1\n",
    });
    expect(refused).toEqual({ status: 400, body: "bad.yaml: invalid rate limit unit 'fortnight'" });
    expect((await s.put({ "loads.yaml": simpleConfig("loads") })).status).toBe(200);
    // Another env is another view of the configuration: its first decision loads the stored set.
    const other = service();
    expect(await other.json("loads", [[["k", "v"]]])).toBe(200);
    await other.stats();
    const after = await s.stats();
    expect(statDelta(before, after, LOAD_ERROR)).toBe(1);
    expect(statDelta(before, after, LOAD_SUCCESS)).toBe(2);
  });
});

describe("flushing", () => {
  const domainSnapshot = (domain: string) => env.RATE_LIMIT_STATS.getByName(`domain:${domain}`).snapshot();

  /** Installs `domain` (100 an hour) on `s` and sends it `hits` hits; asserts none has reached the aggregate yet. */
  async function hitUnflushed(s: ReturnType<typeof service>, domain: string, hits: number) {
    expect((await s.put({ [`${domain}.yaml`]: simpleConfig(domain, 100) })).status).toBe(200);
    for (let i = 0; i < hits; i++) expect(await s.json(domain, [[["k", "v"]]])).toBe(200);
    expect((await domainSnapshot(domain)).rules).toEqual({});
  }

  it("writes nothing to the aggregate per request: statistics wait in the isolate until a flush", async () => {
    const s = service();
    await hitUnflushed(s, "buffered", 3);
    await s.stats();
    expect((await domainSnapshot("buffered")).rules).toEqual({ "buffered.k": [3, 0, 0, 3, 0, 0] });
  });

  it("flushes everything buffered in one batch at the end of the interval, from the first call's waitUntil", async () => {
    const s = service({ STATS_FLUSH_INTERVAL: "2s" });
    await hitUnflushed(s, "timed", 4);
    await s.settle();
    expect((await domainSnapshot("timed")).rules).toEqual({ "timed.k": [4, 0, 0, 4, 0, 0] });
  });

  it("flushes at the end of every call with STATS_FLUSH_INTERVAL=0", async () => {
    const s = service({ STATS_FLUSH_INTERVAL: "0" });
    expect((await s.put({ "eager.yaml": simpleConfig("eager", 100) })).status).toBe(200);
    expect(await s.json("eager", [[["k", "v"]]])).toBe(200);
    await s.settle();
    expect((await domainSnapshot("eager")).rules).toEqual({ "eager.k": [1, 0, 0, 1, 0, 0] });
    expect(await s.json("eager", [[["k", "v"]]])).toBe(200);
    await s.settle();
    expect((await domainSnapshot("eager")).rules).toEqual({ "eager.k": [2, 0, 0, 2, 0, 0] });
  });

  it("DISABLE_STATS records, flushes and serves nothing", async () => {
    const s = service({ DISABLE_STATS: "true", STATS_FLUSH_INTERVAL: "0" });
    expect((await s.put({ "off.yaml": simpleConfig("off") })).status).toBe(200);
    const serviceBefore = await env.RATE_LIMIT_STATS.getByName("service").snapshot();
    expect(await s.json("off", [[["k", "v"]]])).toBe(200);
    await s.settle();
    expect(await s.statsText()).toBe("");
    const metrics = await s.fetch("/metrics", { headers: RATELIMIT_ADMIN });
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toBe("");
    expect((await domainSnapshot("off")).rules).toEqual({});
    expect((await env.RATE_LIMIT_STATS.getByName("service").snapshot()).counters[TOTAL_REQUESTS]).toBe(
      serviceBefore.counters[TOTAL_REQUESTS],
    );
  });

  it("writes each flush's changes to the log when USE_METRICSD=false and pull metrics are off", async () => {
    const s = service({
      USE_METRICSD: "false",
      USE_PULLMETRICS: "false",
      STATS_FLUSH_INTERVAL: "0",
      EXTRA_TAGS: "env:test",
    });
    expect((await s.put({ "logged.yaml": simpleConfig("logged") })).status).toBe(200);
    await s.settle();
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    expect(await s.json("logged", [[["k", "v"]]])).toBe(200);
    await s.settle();
    const lines = log.mock.calls
      .map(([line]) => JSON.parse(String(line)))
      .filter((line) => line["@message"] === "ratelimit: statistics");
    expect(lines).toEqual([
      {
        "@timestamp": "2030-01-01T00:00:30.000Z",
        level: "info",
        "@message": "ratelimit: statistics",
        stats: {
          "ratelimit.service.rate_limit.logged.k.total_hits.__env=test": 1,
          "ratelimit.service.rate_limit.logged.k.within_limit.__env=test": 1,
          "ratelimit_server.ShouldRateLimit.response_time.__env=test": { count: 1, sum_ms: 0 },
          "ratelimit_server.ShouldRateLimit.total_requests.__env=test": 1,
        },
      },
    ]);
  });
});

describe("the statistics pages", () => {
  it.each(["/stats", "/debug", "/metrics"])(
    "%s answers 401 without the bearer and 404 when no token is configured",
    async (path) => {
      const s = service();
      const missing = await s.fetch(path);
      expect(missing.status).toBe(401);
      expect(missing.headers.get("WWW-Authenticate")).toBe('Bearer realm="ratelimit"');
      expect((await s.fetch(path, { headers: { Authorization: "Bearer wrong" } })).status).toBe(401);
      const unset = await service({ RATELIMIT_ADMIN_TOKEN: "" }).fetch(path, { headers: RATELIMIT_ADMIN });
      expect(unset.status).toBe(404);
    },
  );

  it("/debug lists the debug endpoints, with the Prometheus path when pull metrics are on", async () => {
    const on = await service({ PULLMETRICS_PATH: "/prom" }).fetch("/debug", { headers: RATELIMIT_ADMIN });
    expect(await on.text()).toBe(
      [
        "/debug: print out this index of the debug endpoints",
        "/prom: prometheus metrics",
        "/rlconfig: print out the currently loaded configuration for debugging",
        "/rlconfig/files: the configuration files in force (GET), replace the runtime set (PUT), back to the bundled files (DELETE)",
        "/stats: print out stats",
        "",
      ].join("\n"),
    );
    const off = await service({ USE_PULLMETRICS: "false" }).fetch("/debug", { headers: RATELIMIT_ADMIN });
    expect(await off.text()).not.toContain("prometheus");
  });

  it("/stats prints `name: value` lines sorted by name, with EXTRA_TAGS in the names", async () => {
    const s = service({ EXTRA_TAGS: "env:prod,zone:eu" });
    expect((await s.put({ "tagged.yaml": simpleConfig("tagged") })).status).toBe(200);
    expect(await s.json("tagged", [[["k", "v"]]])).toBe(200);
    const text = await s.statsText();
    const lines = text.trimEnd().split("\n");
    expect(lines).toEqual([...lines].sort());
    expect(lines).toContain("ratelimit.service.rate_limit.tagged.k.total_hits.__env=prod.__zone=eu: 1");
    expect(lines).toContain("ratelimit.service.rate_limit.tagged.k.over_limit.__env=prod.__zone=eu: 0");
    expect(lines.find((line) => line.startsWith(`${RESPONSE_TIME}.__env=prod.__zone=eu: `))).toMatch(
      /^[^:]+: \{"count":\d+,"sum_ms":[\d.]+\}$/,
    );
  });

  it("serves Prometheus text at PULLMETRICS_PATH with the default mapping", async () => {
    const s = service({ EXTRA_TAGS: "env:prod" });
    expect((await s.put({ "prom.yaml": STATS_CONFIG("prom") })).status).toBe(200);
    for (const step of statsSequence("prom", "prom-unknown")) await s.json(step.domain, step.descriptors);
    const response = await s.fetch("/metrics", { headers: RATELIMIT_ADMIN });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
    const families = Object.fromEntries(
      (
        parsePrometheusTextFormat(await response.text()) as {
          name: string;
          type: string;
          metrics: { labels?: Record<string, string>; value?: string }[];
        }[]
      ).map((family) => [family.name, family]),
    );
    const ofDomain = (name: string) => families[name].metrics.filter((metric) => metric.labels?.domain === "prom");
    expect(ofDomain("ratelimit_service_rate_limit_total_hits")).toEqual([
      { labels: { domain: "prom", env: "prod", key1: "client_10_0_0_1" }, value: "1" },
      { labels: { domain: "prom", env: "prod", key1: "detailed_x" }, value: "1" },
      { labels: { domain: "prom", env: "prod", key1: "detailed_y" }, value: "1" },
      { labels: { domain: "prom", env: "prod", key1: "near" }, value: "7" },
      { labels: { domain: "prom", env: "prod", key1: "new" }, value: "1" },
      { labels: { domain: "prom", env: "prod", key1: "route_draw", key2: "method" }, value: "1" },
      { labels: { domain: "prom", env: "prod", key1: "shadow" }, value: "3" },
    ]);
    expect(ofDomain("ratelimit_service_rate_limit_near_limit").find((m) => m.labels?.key1 === "near")?.value).toBe("1");
    expect(ofDomain("ratelimit_service_rate_limit_shadow_mode").find((m) => m.labels?.key1 === "shadow")?.value).toBe(
      "1",
    );
    expect(families.ratelimit_service_rate_limit_domain_not_found.metrics).toContainEqual({
      labels: { domain: "prom-unknown", env: "prod" },
      value: "2",
    });
    expect(families.ratelimit_service_total_requests).toMatchObject({ type: "COUNTER" });
    expect(families.ratelimit_service_total_requests.metrics[0].labels).toEqual({
      env: "prod",
      grpc_method: "ShouldRateLimit",
    });
    expect(families.ratelimit_service_response_time_seconds).toMatchObject({ type: "HISTOGRAM" });
    expect(families.ratelimit_service_config_load_success).toMatchObject({ type: "COUNTER" });
  });

  it("moves to PULLMETRICS_PATH, and is absent with USE_PULLMETRICS=false (or USE_PROMETHEUS=false)", async () => {
    const moved = service({ PULLMETRICS_PATH: "/prom/metrics" });
    expect((await moved.fetch("/prom/metrics", { headers: RATELIMIT_ADMIN })).status).toBe(200);
    const old = await moved.fetch("/metrics", { headers: RATELIMIT_ADMIN });
    expect(old.status).toBe(404);
    expect(await old.json()).toEqual({ error: "no route for GET /metrics" });
    expect((await service({ USE_PULLMETRICS: "false" }).fetch("/metrics", { headers: RATELIMIT_ADMIN })).status).toBe(
      404,
    );
    expect(
      (await service({ USE_PULLMETRICS: "", USE_PROMETHEUS: "false" }).fetch("/metrics", { headers: RATELIMIT_ADMIN }))
        .status,
    ).toBe(404);
    // The spec's name wins over the reference's.
    expect(
      (await service({ PULLMETRICS_PATH: "/a", PROMETHEUS_PATH: "/b" }).fetch("/a", { headers: RATELIMIT_ADMIN }))
        .status,
    ).toBe(200);
  });

  it("uses PULLMETRICS_MAPPER_YAML (YAML text, or a file bundled under config/) and names it when it is wrong", async () => {
    const s = service({
      PROMETHEUS_MAPPER_YAML:
        'mappings:\n  - match: "ratelimit_server.*.total_requests"\n    name: "calls"\n    labels: {method: "$1"}\n',
    });
    await s.json("nothing-configured", [[["k", "v"]]]);
    const text = await (await s.fetch("/metrics", { headers: RATELIMIT_ADMIN })).text();
    expect(text).toMatch(
      /^# HELP calls Rate limit service statistic\.\n# TYPE calls counter\ncalls\{method="ShouldRateLimit"\} \d+$/m,
    );
    vi.spyOn(console, "error").mockImplementation(() => {});
    // config/ratelimit/example.yaml is bundled, but it is a rate limit configuration, not a mapping.
    const wrong = await service({ PULLMETRICS_MAPPER_YAML: "config/ratelimit/example.yaml" }).fetch("/metrics", {
      headers: RATELIMIT_ADMIN,
    });
    expect(wrong.status).toBe(500);
    expect(await wrong.text()).toBe('ratelimit settings are invalid: PULLMETRICS_MAPPER_YAML: unknown field "domain"');
  });

  it("answers 500 naming a malformed statistics setting", async () => {
    vi.spyOn(console, "error").mockImplementation(() => {});
    const response = await service({ EXTRA_TAGS: "env" }).fetch("/json", {
      method: "POST",
      body: body("x", [[["k", "v"]]]),
    });
    expect(response.status).toBe(500);
    expect(await response.text()).toBe('ratelimit settings are invalid: EXTRA_TAGS: expected key:value, got "env"');
  });
});

describe("traces", () => {
  const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
  const PARENT = "00f067aa0ba902b7";

  function captureExports() {
    const exported: { url: string; headers: Headers; body: any }[] = [];
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input: RequestInfo | URL, init?: RequestInit) => {
      const request = new Request(input, init);
      exported.push({ url: request.url, headers: request.headers, body: await request.json() });
      return new Response("{}", { status: 200 });
    });
    return exported;
  }

  const tracing = {
    TRACING_ENABLED: "true",
    STATS_FLUSH_INTERVAL: "0",
    OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector.test:4318/",
    OTEL_EXPORTER_OTLP_HEADERS: "authorization=Bearer%20otlp-secret",
    TRACING_SERVICE_NAMESPACE: "edge",
    TRACING_SERVICE_INSTANCE_ID: "instance-1",
  };

  it("exports one span per decision over OTLP/HTTP, joined to the caller's traceparent, from /json and gRPC", async () => {
    const s = service(tracing);
    expect((await s.put({ "traced.yaml": simpleConfig("traced", 1) })).status).toBe(200);
    await s.settle();
    const exported = captureExports();
    expect(await s.json("traced", [[["k", "v"]], [["other", "x"]]], { traceparent: `00-${TRACE}-${PARENT}-01` })).toBe(
      200,
    );
    await s.settle();
    expect((await s.grpc("traced", [[["k", "v"]]])).body.overallCode).toBe("OVER_LIMIT");
    await s.settle();
    expect(exported.map((e) => [e.url, e.headers.get("authorization"), e.headers.get("content-type")])).toEqual([
      ["http://collector.test:4318/v1/traces", "Bearer otlp-secret", "application/json"],
      ["http://collector.test:4318/v1/traces", "Bearer otlp-secret", "application/json"],
    ]);
    const [first, second] = exported.map((e) => e.body.resourceSpans[0]);
    expect(first.resource.attributes).toEqual([
      { key: "service.name", value: { stringValue: "RateLimit" } },
      { key: "service.namespace", value: { stringValue: "edge" } },
      { key: "service.instance.id", value: { stringValue: "instance-1" } },
    ]);
    const [joined] = first.scopeSpans[0].spans;
    expect(joined).toMatchObject(executionSpan(TRACE, PARENT, "traced", 2, "OK"));
    expect(joined.spanId).toMatch(/^[0-9a-f]{16}$/);
    const [root] = second.scopeSpans[0].spans;
    expect(root.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(root.traceId).not.toBe(TRACE);
    expect(root.parentSpanId).toBeUndefined();
    expect(root.attributes[2]).toEqual({ key: "overall_code", value: { stringValue: "OVER_LIMIT" } });
  });

  it("exports nothing for a caller that did not sample, nor with TRACING_SAMPLING_RATE=0", async () => {
    const s = service({ ...tracing, TRACING_SAMPLING_RATE: "0" });
    await s.json("traced", [[["k", "v"]]]);
    await s.settle();
    const exported = captureExports();
    await s.json("traced", [[["k", "v"]]], { traceparent: `00-${TRACE}-${PARENT}-00` });
    await s.json("traced", [[["k", "v"]]]);
    await s.settle();
    expect(exported).toEqual([]);
  });

  it("marks a failed decision's span as an error", async () => {
    const s = service(tracing);
    await s.settle();
    const exported = captureExports();
    expect(await s.json("", [[["k", "v"]]])).toBe(400);
    await s.settle();
    expect(exported[0].body.resourceSpans[0].scopeSpans[0].spans[0].status).toEqual({
      code: 2,
      message: "rate limit domain must not be empty",
    });
  });
});
