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
  oneLine,
  unsetIfEmpty,
  type SettingDoc,
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
  DISABLE_STATS: envBoolean(false).describe(
    "Turns every statistic off: nothing is counted, flushed or pushed, and /stats and /metrics answer empty.",
  ),
  STATS_FLUSH_INTERVAL: envDurationMs("10s").describe(oneLine`
    How often an isolate sends the statistics it gathered to the aggregate (and to statsd); \`0\` flushes after every
    request. A flush waits inside the request's \`waitUntil\`, which lives at most 30 s, so values above \`25s\` act as
    \`25s\`.`),
  EXTRA_TAGS: envString("").describe(oneLine`
    \`k1:v1,k2:v2\`: tags on every statistic (statsd name suffix \`.__k=v\`, tagged statsd tags, Prometheus
    labels).`),
  USE_METRICSD: envOptionalBoolean(STATS_DEFAULTS.USE_METRICSD).describe(oneLine`
    Push statsd lines (the plain-text metrics protocol of statsd) over TCP at each flush; Workers have no UDP.
    \`false\` writes each flush's changes to the log instead, unless pull metrics are on.`),
  USE_STATSD: aliasOf(envOptionalBoolean(), "USE_METRICSD"),
  METRICSD_HOST: envOptionalString()
    .meta({ default: STATS_DEFAULTS.METRICSD_HOST })
    .describe("Host of the statsd server."),
  STATSD_HOST: aliasOf(envOptionalString(), "METRICSD_HOST"),
  METRICSD_PORT: envOptionalPort(STATS_DEFAULTS.METRICSD_PORT).describe("TCP port of the statsd server."),
  STATSD_PORT: aliasOf(envOptionalPort(), "METRICSD_PORT"),
  USE_TAGGED_METRICSD: envOptionalBoolean(STATS_DEFAULTS.USE_TAGGED_METRICSD).describe(oneLine`
    Push tagged statsd lines (the DogStatsD form, \`name:1|c|#k:v\`) instead of plain ones, rewritten by the
    mogrifiers.`),
  USE_DOG_STATSD: aliasOf(envOptionalBoolean(), "USE_TAGGED_METRICSD"),
  TAGGED_METRICSD_MOGRIFIERS: envOptionalString().describe(oneLine`
    Comma-separated names N of mogrifiers: rules that turn a statistic's name into a shorter name and tags for tagged
    statsd, each defined by the TAGGED_METRICSD_MOGRIFIER_<N>_* variables below.`),
  DOG_STATSD_MOGRIFIERS: aliasOf(envOptionalString(), "TAGGED_METRICSD_MOGRIFIERS"),
  USE_DOG_STATSD_MOGRIFIERS: aliasOf(envOptionalString(), "TAGGED_METRICSD_MOGRIFIERS"),
  USE_PULLMETRICS: envOptionalBoolean(STATS_DEFAULTS.USE_PULLMETRICS).describe(
    "Serve the statistics in the Prometheus text format at PULLMETRICS_PATH.",
  ),
  USE_PROMETHEUS: aliasOf(envOptionalBoolean(), "USE_PULLMETRICS"),
  PULLMETRICS_ADDR: envOptionalString().describe(
    "Accepted, not used: the Worker serves the Prometheus page on its own origin.",
  ),
  PROMETHEUS_ADDR: aliasOf(envOptionalString(), "PULLMETRICS_ADDR"),
  PULLMETRICS_PATH: envOptionalPath(STATS_DEFAULTS.PULLMETRICS_PATH).describe(
    "Path of the Prometheus page, on the Worker's origin.",
  ),
  PROMETHEUS_PATH: aliasOf(envOptionalPath(), "PULLMETRICS_PATH"),
  PULLMETRICS_MAPPER_YAML: envOptionalString().describe(oneLine`
    A statsd_exporter mapping (rules naming Prometheus metrics and labels after statsd names) that replaces the
    default one: the YAML itself, or the path of a file under config/, bundled with the Worker (e.g.
    \`metrics/mapper.yaml\`). One that does not parse makes the page answer 500 naming the variable.`),
  PROMETHEUS_MAPPER_YAML: aliasOf(envOptionalString(), "PULLMETRICS_MAPPER_YAML"),
  TRACING_ENABLED: envBoolean(false).describe(
    "Export one span per decision over OTLP/HTTP (OpenTelemetry's protocol, in its JSON form).",
  ),
  TRACING_EXPORTER_PROTOCOL: envEnum(["http", "grpc"], "http").describe(
    "OTLP transport. A Worker cannot speak OTLP/gRPC, so `grpc` also exports over OTLP/HTTP (and logs so once).",
  ),
  TRACING_SERVICE_NAME: envString("RateLimit").describe("The spans' resource attribute `service.name`."),
  TRACING_SERVICE_NAMESPACE: envString("").describe("The spans' resource attribute `service.namespace`."),
  TRACING_SERVICE_INSTANCE_ID: envString("").describe(
    "The spans' resource attribute `service.instance.id`; empty: a random UUID per isolate.",
  ),
  TRACING_SAMPLING_RATE: envNumber(1, (s) => s.min(0).max(1)).describe(
    "Share of new traces sampled (0 to 1); a caller's `traceparent` header decides for its own trace.",
  ),
  OTEL_EXPORTER_OTLP_ENDPOINT: envString("http://localhost:4318")
    .pipe(envHttpUrl())
    .meta({ kind: "url" })
    .describe("OTLP/HTTP base URL: spans go to `<endpoint>/v1/traces`."),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: envOptionalString()
    .pipe(envHttpUrl().optional())
    .meta({ kind: "url" })
    .describe("Full URL for spans; wins over OTEL_EXPORTER_OTLP_ENDPOINT."),
  OTEL_EXPORTER_OTLP_HEADERS: envString("").describe(
    "`k=v,k2=v2` (values URL-encoded) sent with every export, e.g. `authorization=Bearer%20...`.",
  ),
  OTEL_EXPORTER_OTLP_TRACES_HEADERS: envOptionalString().describe(
    "The same, for spans only; wins over OTEL_EXPORTER_OTLP_HEADERS.",
  ),
};

/**
 * The variables of each mogrifier N named in TAGGED_METRICSD_MOGRIFIERS. stats/statsd.ts reads them itself, since
 * their names are the operator's choice; the first pattern that matches a statistic's name rewrites it.
 */
export const mogrifierSettingDocs: SettingDoc[] = [
  {
    name: "TAGGED_METRICSD_MOGRIFIER_<N>_PATTERN",
    kind: "string",
    alias: "DOG_STATSD_MOGRIFIER_<N>_PATTERN",
    description: "Regular expression matched against a statistic's name; required.",
  },
  {
    name: "TAGGED_METRICSD_MOGRIFIER_<N>_NAME",
    kind: "string",
    alias: "DOG_STATSD_MOGRIFIER_<N>_NAME",
    description: "The new name, with `$1`, `$2`... for the pattern's groups; required.",
  },
  {
    name: "TAGGED_METRICSD_MOGRIFIER_<N>_TAGS",
    kind: "string",
    alias: "DOG_STATSD_MOGRIFIER_<N>_TAGS",
    description: "`k:$1,k2:$2`: the tags added; an empty key or value answers 500 naming the variable.",
  },
];
