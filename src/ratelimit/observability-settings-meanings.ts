// The meanings of the statistics, metrics and traces settings (src/ratelimit/observability-settings.ts), and the
// mogrifier variables stats/statsd.ts reads without a schema, for docs/settings.md only: the Worker never imports this
// module (.dependency-cruiser.cjs), so the texts stay out of its bundle.
import { type SettingDoc, type SettingMeanings, oneLine } from "../shared/settings";
import type { observabilityFields } from "./observability-settings";

/** The reference's names, each read when the spec's is unset: the page lists them in that setting's row. */
type Alias =
  | "USE_STATSD"
  | "STATSD_HOST"
  | "STATSD_PORT"
  | "USE_DOG_STATSD"
  | "DOG_STATSD_MOGRIFIERS"
  | "USE_DOG_STATSD_MOGRIFIERS"
  | "USE_PROMETHEUS"
  | "PROMETHEUS_ADDR"
  | "PROMETHEUS_PATH"
  | "PROMETHEUS_MAPPER_YAML";

export const observabilitySettingMeanings: SettingMeanings<keyof typeof observabilityFields, Alias> = {
  DISABLE_STATS:
    "Turns every statistic off: nothing is counted, flushed or pushed, and /stats and /metrics answer empty.",
  STATS_FLUSH_INTERVAL: oneLine`
    How often an isolate sends the statistics it gathered to the aggregate (and to statsd); \`0\` flushes after every
    request. A flush waits inside the request's \`waitUntil\`, which lives at most 30 s, so values above \`25s\` act as
    \`25s\`.`,
  EXTRA_TAGS: oneLine`
    \`k1:v1,k2:v2\`: tags on every statistic (statsd name suffix \`.__k=v\`, tagged statsd tags, Prometheus
    labels).`,
  USE_METRICSD: oneLine`
    Push statsd lines (the plain-text metrics protocol of statsd) over TCP at each flush; Workers have no UDP.
    \`false\` writes each flush's changes to the log instead, unless pull metrics are on.`,
  METRICSD_HOST: "Host of the statsd server.",
  METRICSD_PORT: "TCP port of the statsd server.",
  USE_TAGGED_METRICSD: oneLine`
    Push tagged statsd lines (the DogStatsD form, \`name:1|c|#k:v\`) instead of plain ones, rewritten by the
    mogrifiers.`,
  TAGGED_METRICSD_MOGRIFIERS: oneLine`
    Comma-separated names N of mogrifiers: rules that turn a statistic's name into a shorter name and tags for tagged
    statsd, each defined by the TAGGED_METRICSD_MOGRIFIER_<N>_* variables below.`,
  USE_PULLMETRICS: "Serve the statistics in the Prometheus text format at PULLMETRICS_PATH.",
  PULLMETRICS_ADDR: "Accepted, not used: the Worker serves the Prometheus page on its own origin.",
  PULLMETRICS_PATH: "Path of the Prometheus page, on the Worker's origin.",
  PULLMETRICS_MAPPER_YAML: oneLine`
    A statsd_exporter mapping (rules naming Prometheus metrics and labels after statsd names) that replaces the
    default one: the YAML itself, or the path of a file under config/, bundled with the Worker (e.g.
    \`metrics/mapper.yaml\`). One that does not parse makes the page answer 500 naming the variable.`,
  TRACING_ENABLED: "Export one span per decision over OTLP/HTTP (OpenTelemetry's protocol, in its JSON form).",
  TRACING_EXPORTER_PROTOCOL:
    "OTLP transport. A Worker cannot speak OTLP/gRPC, so `grpc` also exports over OTLP/HTTP (and logs so once).",
  TRACING_SERVICE_NAME: "The spans' resource attribute `service.name`.",
  TRACING_SERVICE_NAMESPACE: "The spans' resource attribute `service.namespace`.",
  TRACING_SERVICE_INSTANCE_ID: "The spans' resource attribute `service.instance.id`; empty: a random UUID per isolate.",
  TRACING_SAMPLING_RATE:
    "Share of new traces sampled (0 to 1); a caller's `traceparent` header decides for its own trace.",
  OTEL_EXPORTER_OTLP_ENDPOINT: "OTLP/HTTP base URL: spans go to `<endpoint>/v1/traces`.",
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "Full URL for spans; wins over OTEL_EXPORTER_OTLP_ENDPOINT.",
  OTEL_EXPORTER_OTLP_HEADERS:
    "`k=v,k2=v2` (values URL-encoded) sent with every export, e.g. `authorization=Bearer%20...`.",
  OTEL_EXPORTER_OTLP_TRACES_HEADERS: "The same, for spans only; wins over OTEL_EXPORTER_OTLP_HEADERS.",
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
