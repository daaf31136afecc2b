// The statistics, metrics and tracing settings: spec defaults, the reference's names as aliases (the spec's name wins
// when both are set), which push sink a flush uses, and malformed values named in the error.
import { describe, expect, it } from "vitest";
import { statsConfig } from "../../../src/ratelimit/stats/config";

describe("statsConfig", () => {
  it("has the spec's defaults: statsd to localhost:8125 every 10 s, no pull metrics, no tracing", () => {
    expect(statsConfig({})).toEqual({
      enabled: true,
      flushIntervalMs: 10_000,
      sinkTimeoutMs: 5000,
      extraTags: [],
      push: { kind: "statsd", host: "localhost", port: 8125, tagged: false, mogrifiers: [] },
      pullMetrics: false,
      pullMetricsPath: "/metrics",
      mapper: undefined,
      tracing: undefined,
    });
  });

  it("accepts the reference's names, and the spec's name wins when both are set", () => {
    expect(statsConfig({ USE_STATSD: "true", STATSD_HOST: "stats.internal", STATSD_PORT: "9125" }).push).toEqual({
      kind: "statsd",
      host: "stats.internal",
      port: 9125,
      tagged: false,
      mogrifiers: [],
    });
    expect(
      statsConfig({ METRICSD_HOST: "spec", STATSD_HOST: "alias", METRICSD_PORT: "1", STATSD_PORT: "2" }).push,
    ).toMatchObject({
      host: "spec",
      port: 1,
    });
    expect(statsConfig({ USE_METRICSD: "false", USE_STATSD: "true" }).push).toEqual({ kind: "log" });
    expect(statsConfig({ USE_METRICSD: "", USE_STATSD: "false" }).push).toEqual({ kind: "log" });
    expect(statsConfig({ USE_DOG_STATSD: "1" }).push).toMatchObject({ kind: "statsd", tagged: true });
    expect(statsConfig({ USE_STATSD: "F" }).push).toEqual({ kind: "log" });
    expect(statsConfig({ USE_TAGGED_METRICSD: "false", USE_DOG_STATSD: "true", USE_METRICSD: "false" }).push).toEqual({
      kind: "log",
    });
    const pull = statsConfig({
      USE_PROMETHEUS: "true",
      PROMETHEUS_PATH: "/prom",
      PROMETHEUS_MAPPER_YAML: "mappings: []",
      USE_METRICSD: "false",
    });
    expect(pull).toMatchObject({
      pullMetrics: true,
      pullMetricsPath: "/prom",
      mapper: { variable: "PROMETHEUS_MAPPER_YAML", value: "mappings: []" },
      // The pull sink replaces the log sink, as the reference's Prometheus sink does.
      push: { kind: "none" },
    });
    expect(statsConfig({ USE_PULLMETRICS: "false", USE_PROMETHEUS: "true" }).pullMetrics).toBe(false);
    expect(statsConfig({ PULLMETRICS_MAPPER_YAML: "a", PROMETHEUS_MAPPER_YAML: "b" }).mapper).toEqual({
      variable: "PULLMETRICS_MAPPER_YAML",
      value: "a",
    });
  });

  it("reads the flush interval, DISABLE_STATS, EXTRA_TAGS and the mogrifiers", () => {
    const config = statsConfig({
      STATS_FLUSH_INTERVAL: "1m30s",
      DISABLE_STATS: "TRUE",
      EXTRA_TAGS: "b:2,a:1",
      USE_TAGGED_METRICSD: "true",
      TAGGED_METRICSD_MOGRIFIERS: "M",
      TAGGED_METRICSD_MOGRIFIER_M_PATTERN: "^(.*)$",
      TAGGED_METRICSD_MOGRIFIER_M_NAME: "x.$1",
    });
    expect(config).toMatchObject({
      enabled: false,
      flushIntervalMs: 90_000,
      extraTags: [
        ["a", "1"],
        ["b", "2"],
      ],
    });
    expect(config.push).toMatchObject({
      kind: "statsd",
      tagged: true,
      mogrifiers: [{ name: "M", template: "x.$1", tags: [] }],
    });
  });

  it("resolves tracing: endpoint, headers, service identity and sampling", () => {
    expect(statsConfig({ TRACING_ENABLED: "true" }).tracing).toEqual({
      url: "http://localhost:4318/v1/traces",
      headers: {},
      samplingRate: 1,
      serviceName: "RateLimit",
      serviceNamespace: "",
      serviceInstanceId: "",
      grpcRequested: false,
    });
    expect(
      statsConfig({
        TRACING_ENABLED: "1",
        TRACING_EXPORTER_PROTOCOL: "grpc",
        TRACING_SERVICE_NAME: "rl",
        TRACING_SERVICE_NAMESPACE: "edge",
        TRACING_SERVICE_INSTANCE_ID: "i-1",
        TRACING_SAMPLING_RATE: "0.25",
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://otel.example/v1/traces",
        OTEL_EXPORTER_OTLP_HEADERS: "a=1",
        OTEL_EXPORTER_OTLP_TRACES_HEADERS: "b=2",
      }).tracing,
    ).toEqual({
      url: "https://otel.example/v1/traces",
      headers: { b: "2" },
      samplingRate: 0.25,
      serviceName: "rl",
      serviceNamespace: "edge",
      serviceInstanceId: "i-1",
      grpcRequested: true,
    });
  });

  it.each([
    [{ STATS_FLUSH_INTERVAL: "10 seconds" }, "STATS_FLUSH_INTERVAL"],
    [{ USE_METRICSD: "yes" }, "USE_METRICSD"],
    [{ METRICSD_PORT: "70000" }, "METRICSD_PORT"],
    [{ PULLMETRICS_PATH: "metrics" }, "PULLMETRICS_PATH"],
    [{ TRACING_SAMPLING_RATE: "1.5" }, "TRACING_SAMPLING_RATE"],
    [{ TRACING_EXPORTER_PROTOCOL: "udp" }, "TRACING_EXPORTER_PROTOCOL"],
    [{ EXTRA_TAGS: "novalue" }, "EXTRA_TAGS"],
    [{ TRACING_ENABLED: "true", OTEL_EXPORTER_OTLP_HEADERS: "broken" }, "OTEL_EXPORTER_OTLP_HEADERS"],
    [{ TAGGED_METRICSD_MOGRIFIERS: "M" }, "TAGGED_METRICSD_MOGRIFIER_M_PATTERN"],
  ])("refuses %j naming %s", (env, variable) => {
    expect(() => statsConfig(env)).toThrow(new RegExp(`^ratelimit settings are invalid: .*${variable}: `));
  });
});
