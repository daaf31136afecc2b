// The rate limit service's statistics pages through the real Worker: /stats, /metrics and /debug and their bearer,
// EXTRA_TAGS in the names, the Prometheus mapping and path, and the settings that break them.
import parsePrometheusTextFormat from "parse-prometheus-text-format";
import { describe, expect, it, vi } from "vitest";
import { RATELIMIT_ADMIN } from "../../support/ratelimit-calls";
import { STATS_CONFIG, statsSequence } from "../../support/ratelimit-stats-fixture";
import { body, frozenDate, RESPONSE_TIME, service, simpleConfig } from "./telemetry-fixtures";

frozenDate();

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
    expect(await response.text()).toBe("ratelimit settings are invalid: EXTRA_TAGS: entry 1 is not key:value");
  });

  it("answers 500 naming a malformed OTLP header entry by its place, never quoting the credential in it", async () => {
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    const response = await service({
      TRACING_ENABLED: "true",
      OTEL_EXPORTER_OTLP_HEADERS: "x-tenant=t1,authorization: Bearer s3cr3t-token",
    }).fetch("/json", { method: "POST", body: body("x", [[["k", "v"]]]) });
    expect(response.status).toBe(500);
    expect(await response.text()).toBe(
      "ratelimit settings are invalid: OTEL_EXPORTER_OTLP_HEADERS: entry 2: expected key=value (the value URL-encoded)",
    );
    expect(JSON.stringify(logged.mock.calls)).not.toContain("s3cr3t");
  });

  it(
    "/stats and /metrics answer 503 within 5 s naming the aggregate instance that never answers",
    { timeout: 30_000 },
    async () => {
      const warned = vi.spyOn(console, "warn").mockImplementation(() => {});
      const never = () => new Promise<never>(() => {});
      const totals = { counters: {}, rules: {}, timers: {} };
      // The service instance hangs for one page; for the other it answers, naming a domain instance that hangs.
      const hungService = { getByName: () => ({ add: async () => {}, snapshot: never }) };
      const hungDomain = {
        getByName: (target: string) => ({
          add: async () => {},
          snapshot: target === "service" ? async () => ({ ...totals, domains: ["stalled"] }) : never,
        }),
      };
      const started = performance.now();
      const [stats, metrics] = await Promise.all([
        service({ RATE_LIMIT_STATS: hungDomain }).fetch("/stats", { headers: RATELIMIT_ADMIN }),
        service({ RATE_LIMIT_STATS: hungService }).fetch("/metrics", { headers: RATELIMIT_ADMIN }),
      ]);
      expect(performance.now() - started).toBeLessThan(5000 + 3000);
      const unanswered = (target: string) =>
        `statistics unavailable: the statistics aggregate (Durable Object RATE_LIMIT_STATS "${target}") did not answer within 5000 ms`;
      expect([stats.status, stats.headers.get("content-type"), await stats.text()]).toEqual([
        503,
        "text/plain; charset=UTF-8",
        unanswered("domain:stalled"),
      ]);
      expect([metrics.status, await metrics.text()]).toEqual([503, unanswered("service")]);
      const targets = warned.mock.calls.map(([line]) => JSON.parse(String(line)).target);
      expect(targets.sort()).toEqual(["domain:stalled", "service"]);
    },
  );
});
