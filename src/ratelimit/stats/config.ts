// The statistics, metrics and tracing settings (observability-settings.ts) resolved into what the
// isolate's telemetry uses: the reference's aliases settled (the spec's names win), tags, mogrifiers and OTLP parsed.
import { perIsolate } from "../../shared/isolate";
import { invalidSetting } from "../../shared/settings";
import { STATS_DEFAULTS } from "../observability-settings";
import { rateLimitSettings, type RateLimitSettings } from "../settings";
import { parseExtraTags, type Tags } from "./names";
import { parseMogrifiers, type Mogrifier } from "./statsd";
import { parseOtlpHeaders, tracesUrl } from "./tracing";

/** Where an isolate's flushed statistics are pushed, besides the aggregate behind /stats and /metrics. */
export type StatsPush =
  | { kind: "statsd"; host: string; port: number; tagged: boolean; mogrifiers: Mogrifier[] }
  /** USE_METRICSD=false without pull metrics: the reference's logging sink. */
  | { kind: "log" }
  /** Pull metrics only, as the reference's Prometheus sink. */
  | { kind: "none" };

/** Longest wait of a flush for the aggregate, statsd or the OTLP endpoint: a flush never holds its waitUntil longer. */
export const SINK_TIMEOUT_MS = 5000;

/** The statistics, metrics and tracing settings with the reference's aliases resolved (the spec's names win). */
export interface StatsConfig {
  enabled: boolean;
  flushIntervalMs: number;
  /** Not a setting: SINK_TIMEOUT_MS. Each sink is given it by its caller, without a default of its own. */
  sinkTimeoutMs: number;
  extraTags: Tags;
  push: StatsPush;
  pullMetrics: boolean;
  pullMetricsPath: string;
  /** The mapping variable that is set, if any: its name (for error messages) and value. */
  mapper?: { variable: string; value: string };
  tracing?: {
    url: string;
    headers: Record<string, string>;
    samplingRate: number;
    serviceName: string;
    serviceNamespace: string;
    /** Empty: a random UUID per isolate. */
    serviceInstanceId: string;
    /** TRACING_EXPORTER_PROTOCOL was grpc, which a Worker cannot speak: spans still go over OTLP/HTTP. */
    grpcRequested: boolean;
  };
}

/** The statistics settings of a parsed env resolved as a whole. Throws SettingsError naming a malformed variable. */
export function resolveStatsConfig(s: RateLimitSettings, env: Record<string, unknown>): StatsConfig {
  const invalid = (variable: string, message: string) => invalidSetting("ratelimit", variable, message);
  const extraTags = parseExtraTags(s.EXTRA_TAGS);
  if (!extraTags.ok) throw invalid("EXTRA_TAGS", extraTags.error);
  const tagged = s.USE_TAGGED_METRICSD ?? s.USE_DOG_STATSD ?? STATS_DEFAULTS.USE_TAGGED_METRICSD;
  const metricsd = s.USE_METRICSD ?? s.USE_STATSD ?? STATS_DEFAULTS.USE_METRICSD;
  const pullMetrics = s.USE_PULLMETRICS ?? s.USE_PROMETHEUS ?? STATS_DEFAULTS.USE_PULLMETRICS;
  let push: StatsPush;
  if (tagged || metricsd) {
    const mogrifiers = parseMogrifiers(env);
    if (!mogrifiers.ok) throw invalid(mogrifiers.error.variable, mogrifiers.error.message);
    push = {
      kind: "statsd",
      host: s.METRICSD_HOST ?? s.STATSD_HOST ?? STATS_DEFAULTS.METRICSD_HOST,
      port: s.METRICSD_PORT ?? s.STATSD_PORT ?? STATS_DEFAULTS.METRICSD_PORT,
      tagged,
      mogrifiers: mogrifiers.value,
    };
  } else {
    push = pullMetrics ? { kind: "none" } : { kind: "log" };
  }
  const mapperVariable = s.PULLMETRICS_MAPPER_YAML !== undefined ? "PULLMETRICS_MAPPER_YAML" : "PROMETHEUS_MAPPER_YAML";
  const mapperValue = s.PULLMETRICS_MAPPER_YAML ?? s.PROMETHEUS_MAPPER_YAML;
  let tracing: StatsConfig["tracing"];
  if (s.TRACING_ENABLED) {
    const headerVariable =
      s.OTEL_EXPORTER_OTLP_TRACES_HEADERS !== undefined
        ? "OTEL_EXPORTER_OTLP_TRACES_HEADERS"
        : "OTEL_EXPORTER_OTLP_HEADERS";
    const headers = parseOtlpHeaders(s.OTEL_EXPORTER_OTLP_TRACES_HEADERS ?? s.OTEL_EXPORTER_OTLP_HEADERS);
    if (!headers.ok) throw invalid(headerVariable, headers.error);
    tracing = {
      url: tracesUrl(s.OTEL_EXPORTER_OTLP_ENDPOINT, s.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT),
      headers: headers.value,
      samplingRate: s.TRACING_SAMPLING_RATE,
      serviceName: s.TRACING_SERVICE_NAME,
      serviceNamespace: s.TRACING_SERVICE_NAMESPACE,
      serviceInstanceId: s.TRACING_SERVICE_INSTANCE_ID,
      grpcRequested: s.TRACING_EXPORTER_PROTOCOL === "grpc",
    };
  }
  return {
    enabled: !s.DISABLE_STATS,
    flushIntervalMs: s.STATS_FLUSH_INTERVAL,
    sinkTimeoutMs: SINK_TIMEOUT_MS,
    extraTags: extraTags.value,
    push,
    pullMetrics,
    pullMetricsPath: s.PULLMETRICS_PATH ?? s.PROMETHEUS_PATH ?? STATS_DEFAULTS.PULLMETRICS_PATH,
    mapper: mapperValue === undefined ? undefined : { variable: mapperVariable, value: mapperValue },
    tracing,
  };
}

/**
 * The resolved statistics settings of this env (once per env, like its parsed settings). The mogrifier variables have
 * names chosen by the operator, so they are read here rather than by the schema. Throws SettingsError.
 */
export const statsConfig: (env: object) => StatsConfig = perIsolate("ratelimit stats config", (env: object) =>
  resolveStatsConfig(rateLimitSettings(env), env as Record<string, unknown>),
);
