// Settings of the rate limit service's statistics, metrics and traces (read by src/ratelimit/stats/), and the helpers
// that let the spec's names win over the reference's aliases.
import { z } from "../shared/zod";
import {
  booleanText,
  envBoolean,
  envDurationMs,
  envHttpUrl,
  envEnum,
  envNumber,
  envOptionalString,
  envString,
  unsetIfEmpty,
} from "../shared/settings";

/**
 * The defaults of the statistics settings that have an alias: their fields stay undefined when unset, so that the
 * spec's name can win over the reference's, and stats/config.ts applies these once the aliases are settled.
 */
export const STATS_DEFAULTS = {
  USE_METRICSD: true,
  METRICSD_HOST: "localhost",
  METRICSD_PORT: 8125,
  USE_TAGGED_METRICSD: false,
  USE_PULLMETRICS: false,
  PULLMETRICS_PATH: "/metrics",
} as const;

/** A boolean that stays undefined when unset, so a spec name can win over the reference's alias. */
const envOptionalBoolean = (effectiveDefault?: boolean) =>
  z
    .preprocess(unsetIfEmpty, booleanText().optional())
    .meta({ kind: "boolean", default: effectiveDefault === undefined ? undefined : String(effectiveDefault) });
const envOptionalPort = (effectiveDefault?: number) =>
  z
    .preprocess(unsetIfEmpty, z.coerce.number().int().min(1).max(65535).optional())
    .meta({ kind: "integer", default: effectiveDefault === undefined ? undefined : String(effectiveDefault) });
const envOptionalPath = (effectiveDefault?: string) =>
  z.preprocess(unsetIfEmpty, z.string().startsWith("/").optional()).meta({ kind: "string", default: effectiveDefault });

/** The reference's name for a setting: read when the spec's name is unset (stats/config.ts settles which). */
export const aliasOf = <S extends z.ZodType>(schema: S, name: string) => schema.meta({ aliasOf: name });

/**
 * Statistics, push and pull metrics, and traces (src/ratelimit/stats/). Where the reference's own name is an alias,
 * both are read and stats/config.ts resolves them: the spec's name wins when both are set. LOG_LEVEL and LOG_FORMAT
 * apply to every service and are read by src/shared/log.ts.
 */
export const observabilityFields = {
  DISABLE_STATS: envBoolean(false),
  STATS_FLUSH_INTERVAL: envDurationMs("10s"),
  EXTRA_TAGS: envString(""),
  USE_METRICSD: envOptionalBoolean(STATS_DEFAULTS.USE_METRICSD),
  USE_STATSD: aliasOf(envOptionalBoolean(), "USE_METRICSD"),
  METRICSD_HOST: envOptionalString().meta({ default: STATS_DEFAULTS.METRICSD_HOST }),
  STATSD_HOST: aliasOf(envOptionalString(), "METRICSD_HOST"),
  METRICSD_PORT: envOptionalPort(STATS_DEFAULTS.METRICSD_PORT),
  STATSD_PORT: aliasOf(envOptionalPort(), "METRICSD_PORT"),
  USE_TAGGED_METRICSD: envOptionalBoolean(STATS_DEFAULTS.USE_TAGGED_METRICSD),
  USE_DOG_STATSD: aliasOf(envOptionalBoolean(), "USE_TAGGED_METRICSD"),
  TAGGED_METRICSD_MOGRIFIERS: envOptionalString(),
  DOG_STATSD_MOGRIFIERS: aliasOf(envOptionalString(), "TAGGED_METRICSD_MOGRIFIERS"),
  USE_DOG_STATSD_MOGRIFIERS: aliasOf(envOptionalString(), "TAGGED_METRICSD_MOGRIFIERS"),
  USE_PULLMETRICS: envOptionalBoolean(STATS_DEFAULTS.USE_PULLMETRICS),
  USE_PROMETHEUS: aliasOf(envOptionalBoolean(), "USE_PULLMETRICS"),
  PULLMETRICS_ADDR: envOptionalString(),
  PROMETHEUS_ADDR: aliasOf(envOptionalString(), "PULLMETRICS_ADDR"),
  PULLMETRICS_PATH: envOptionalPath(STATS_DEFAULTS.PULLMETRICS_PATH),
  PROMETHEUS_PATH: aliasOf(envOptionalPath(), "PULLMETRICS_PATH"),
  PULLMETRICS_MAPPER_YAML: envOptionalString(),
  PROMETHEUS_MAPPER_YAML: aliasOf(envOptionalString(), "PULLMETRICS_MAPPER_YAML"),
  TRACING_ENABLED: envBoolean(false),
  TRACING_EXPORTER_PROTOCOL: envEnum(["http", "grpc"], "http"),
  TRACING_SERVICE_NAME: envString("RateLimit"),
  TRACING_SERVICE_NAMESPACE: envString(""),
  TRACING_SERVICE_INSTANCE_ID: envString(""),
  TRACING_SAMPLING_RATE: envNumber(1, (s) => s.min(0).max(1)),
  OTEL_EXPORTER_OTLP_ENDPOINT: envString("http://localhost:4318").pipe(envHttpUrl()).meta({ kind: "url" }),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: envOptionalString().pipe(envHttpUrl().optional()).meta({ kind: "url" }),
  OTEL_EXPORTER_OTLP_HEADERS: envString(""),
  OTEL_EXPORTER_OTLP_TRACES_HEADERS: envOptionalString(),
};
