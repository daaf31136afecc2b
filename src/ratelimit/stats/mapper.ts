// statsd_exporter mapping files (PULLMETRICS_MAPPER_YAML): which Prometheus metric and labels a statsd name becomes,
// and the default mapping the spec gives. The subset the rate limit statistics need: glob and regex matches, names
// and labels with $n, help, drop actions, metric-type filters, histogram or summary timers with their buckets, and
// a scale. Pure: no Workers imports (tested in plain Node).
import { parse as parseYaml } from "yaml";

/** Prometheus' default histogram buckets, in seconds (statsd_exporter's default too). */
export const DEFAULT_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export type ObserverType = "histogram" | "summary";
export type StatKind = "counter" | "timer";

interface Mapping {
  regex: RegExp;
  name: string;
  labels: [string, string][];
  help?: string;
  drop: boolean;
  kind?: StatKind | "gauge";
  observerType?: ObserverType;
  buckets?: number[];
  scale?: number;
}

export interface MapperConfig {
  mappings: Mapping[];
  observerType: ObserverType;
  buckets: number[];
}

/** Where a statsd name ends up; `undefined` from mapMetric means dropped. */
export interface MappedMetric {
  name: string;
  labels: [string, string][];
  help?: string;
  observerType: ObserverType;
  /** Upper bounds in the metric's unit (seconds unless scaled otherwise). */
  buckets: number[];
  /** A timer's value in milliseconds times this gives the metric's value (0.001: seconds, as statsd_exporter). */
  scale: number;
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** Keys statsd_exporter accepts that change nothing here (TTL, summary tuning, native histograms...). */
const IGNORED_MAPPING_KEYS = new Set(["ttl", "quantiles", "summary_options", "honor_labels", "glob_disable_ordering"]);
const MAPPING_KEYS = new Set([
  "match",
  "match_type",
  "name",
  "labels",
  "help",
  "action",
  "match_metric_type",
  "observer_type",
  "timer_type",
  "buckets",
  "histogram_options",
  "scale",
]);
const DEFAULTS_KEYS = new Set(["observer_type", "timer_type", "buckets", "histogram_options", "match_type"]);

function globToRegex(glob: string): RegExp {
  const body = glob
    .split("*")
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
    .join("([^.]*)");
  return new RegExp(`^${body}$`);
}

/** Go's regexp Expand: `$1`, `${1}`, `${name}`, `$$`; an unknown group expands to nothing. */
export function expandTemplate(template: string, groups: RegExpExecArray): string {
  return template.replace(
    /\$(\$|\{([^}]*)\}|([A-Za-z0-9_]+))/g,
    (_whole, token: string, braced?: string, bare?: string) => {
      if (token === "$") return "$";
      const name = braced ?? bare ?? "";
      if (/^\d+$/.test(name)) return groups[Number(name)] ?? "";
      return groups.groups?.[name] ?? "";
    },
  );
}

function numberList(value: unknown, where: string): number[] {
  if (!Array.isArray(value) || value.some((n) => typeof n !== "number" || !Number.isFinite(n))) {
    throw new Error(`${where}: buckets must be a list of numbers`);
  }
  return [...value].sort((a, b) => a - b);
}

function observerTypeOf(value: unknown, where: string): ObserverType | undefined {
  if (value === undefined || value === null || value === "" || value === "default") return undefined;
  if (value === "histogram" || value === "summary") return value;
  throw new Error(`${where}: observer_type must be histogram or summary`);
}

function bucketsOf(record: Record<string, unknown>, where: string): number[] | undefined {
  const options = record.histogram_options as Record<string, unknown> | undefined;
  if (options !== undefined && (typeof options !== "object" || options === null))
    throw new Error(`${where}: histogram_options must be a map`);
  if (options?.buckets !== undefined) return numberList(options.buckets, where);
  if (record.buckets !== undefined) return numberList(record.buckets, where);
  return undefined;
}

function checkKeys(record: Record<string, unknown>, allowed: Set<string>, where: string): void {
  for (const key of Object.keys(record)) {
    if (!allowed.has(key) && !IGNORED_MAPPING_KEYS.has(key)) throw new Error(`${where}: unknown field "${key}"`);
  }
}

function kindOf(value: unknown, where: string): Mapping["kind"] {
  if (value === undefined || value === null || value === "") return undefined;
  if (value === "counter") return "counter";
  if (value === "gauge") return "gauge";
  if (value === "observer" || value === "timer" || value === "histogram" || value === "distribution") return "timer";
  throw new Error(`${where}: match_metric_type must be counter, gauge or observer`);
}

function parseMapping(raw: unknown, index: number, defaultMatchType: string): Mapping {
  const where = `mappings[${index}]`;
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) throw new Error(`${where}: must be a map`);
  const record = raw as Record<string, unknown>;
  checkKeys(record, MAPPING_KEYS, where);
  if (typeof record.match !== "string" || record.match === "") throw new Error(`${where}: match is required`);
  const matchType = (record.match_type as string | undefined) ?? defaultMatchType;
  let regex: RegExp;
  if (matchType === "regex") {
    try {
      regex = new RegExp(record.match);
    } catch {
      throw new Error(`${where}: match is not a valid regular expression`);
    }
  } else if (matchType === "glob" || matchType === "") {
    regex = globToRegex(record.match);
  } else {
    throw new Error(`${where}: match_type must be glob or regex`);
  }
  const action = record.action ?? "map";
  if (action !== "map" && action !== "drop") throw new Error(`${where}: action must be map or drop`);
  const drop = action === "drop";
  const name = record.name;
  if (!drop) {
    if (typeof name !== "string" || name === "") throw new Error(`${where}: name is required`);
    if (!name.includes("$") && !METRIC_NAME.test(name))
      throw new Error(`${where}: "${name}" is not a valid metric name`);
  }
  const labels: [string, string][] = [];
  if (record.labels !== undefined && record.labels !== null) {
    if (typeof record.labels !== "object" || Array.isArray(record.labels))
      throw new Error(`${where}: labels must be a map`);
    for (const [label, value] of Object.entries(record.labels as Record<string, unknown>)) {
      if (!LABEL_NAME.test(label)) throw new Error(`${where}: "${label}" is not a valid label name`);
      labels.push([label, String(value)]);
    }
  }
  if (record.scale !== undefined && (typeof record.scale !== "number" || !Number.isFinite(record.scale))) {
    throw new Error(`${where}: scale must be a number`);
  }
  return {
    regex,
    name: typeof name === "string" ? name : "",
    labels,
    help: typeof record.help === "string" ? record.help : undefined,
    drop,
    kind: kindOf(record.match_metric_type, where),
    observerType: observerTypeOf(record.observer_type ?? record.timer_type, where),
    buckets: bucketsOf(record, where),
    scale: record.scale as number | undefined,
  };
}

/** Parses a statsd_exporter mapping file; throws an Error whose message says what is wrong and where. */
export function parseMapperConfig(text: string): MapperConfig {
  let document: unknown;
  try {
    document = parseYaml(text);
  } catch (error) {
    throw new Error(`not valid YAML: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}`);
  }
  if (document === null || document === undefined) document = {};
  if (typeof document !== "object" || Array.isArray(document)) throw new Error("must be a map with `mappings`");
  const root = document as Record<string, unknown>;
  for (const key of Object.keys(root)) {
    if (key !== "mappings" && key !== "defaults") throw new Error(`unknown field "${key}"`);
  }
  const defaults = (root.defaults ?? {}) as Record<string, unknown>;
  if (typeof defaults !== "object" || Array.isArray(defaults)) throw new Error("defaults must be a map");
  checkKeys(defaults, DEFAULTS_KEYS, "defaults");
  const defaultMatchType = (defaults.match_type as string | undefined) ?? "glob";
  const rawMappings = root.mappings ?? [];
  if (!Array.isArray(rawMappings)) throw new Error("mappings must be a list");
  return {
    mappings: rawMappings.map((raw, i) => parseMapping(raw, i, defaultMatchType)),
    // statsd_exporter's own default observer is a summary.
    observerType: observerTypeOf(defaults.observer_type ?? defaults.timer_type, "defaults") ?? "summary",
    buckets: bucketsOf(defaults, "defaults") ?? DEFAULT_BUCKETS,
  };
}

/** statsd_exporter's name for an unmapped metric: every character Prometheus refuses becomes `_`. */
export function escapeMetricName(name: string): string {
  const escaped = name.replace(/[^a-zA-Z0-9_:]/g, "_");
  return /^[0-9]/.test(escaped) ? `_${escaped}` : escaped;
}

/** Maps one statsd name; undefined when a drop action matches. The first matching mapping wins. */
export function mapMetric(config: MapperConfig, name: string, kind: StatKind): MappedMetric | undefined {
  for (const mapping of config.mappings) {
    if (mapping.kind !== undefined && mapping.kind !== kind) continue;
    const groups = mapping.regex.exec(name);
    if (!groups) continue;
    if (mapping.drop) return undefined;
    return {
      name: escapeMetricName(expandTemplate(mapping.name, groups)),
      labels: mapping.labels.map(([label, value]) => [label, expandTemplate(value, groups)]),
      help: mapping.help,
      observerType: mapping.observerType ?? config.observerType,
      buckets: mapping.buckets ?? config.buckets,
      scale: mapping.scale ?? 0.001,
    };
  }
  return {
    name: escapeMetricName(name),
    labels: [],
    observerType: config.observerType,
    buckets: config.buckets,
    scale: 0.001,
  };
}

const RULE_STAT_HELP: Record<string, string> = {
  total_hits: "Hits on the rule.",
  over_limit: "Hits over the rule's limit.",
  near_limit: "Hits above the near-limit ratio of the rule's limit.",
  within_limit: "Hits within the rule's limit (near-limit ones included).",
  shadow_mode: "Over-limit hits let through by the rule's shadow mode.",
  over_limit_with_local_cache: "Over-limit hits answered from the isolate's local cache.",
};

/**
 * The default mapping, in statsd_exporter's format: the reference's built-in one (per-rule statistics for one level
 * with labels domain and key1, for two or more levels with key2 too; the error, request, response-time and
 * config-load statistics), plus over_limit_with_local_cache, domain_not_found and global_shadow_mode, which the
 * reference leaves unmapped. over_limit_with_local_cache comes before over_limit so that neither swallows the other.
 */
export const DEFAULT_MAPPER_YAML = [
  "defaults:",
  "  observer_type: histogram",
  "mappings:",
  ...Object.keys(RULE_STAT_HELP)
    .sort((a, b) => b.length - a.length)
    .flatMap((stat) => [
      `  - match: "ratelimit.service.rate_limit.*.*.${stat}"`,
      `    name: "ratelimit_service_rate_limit_${stat}"`,
      `    help: "${RULE_STAT_HELP[stat]}"`,
      "    match_metric_type: counter",
      '    labels: {domain: "$1", key1: "$2"}',
      `  - match: '^ratelimit\\.service\\.rate_limit\\.([^.]*)\\.([^.]*)\\.([^.]*)(\\..*)?\\.${stat}$'`,
      "    match_type: regex",
      `    name: "ratelimit_service_rate_limit_${stat}"`,
      `    help: "${RULE_STAT_HELP[stat]}"`,
      "    match_metric_type: counter",
      '    labels: {domain: "$1", key1: "$2", key2: "$3"}',
    ]),
  '  - match: "ratelimit.service.rate_limit.*.domain_not_found"',
  '    name: "ratelimit_service_rate_limit_domain_not_found"',
  '    help: "Descriptors sent for a domain that is not configured."',
  '    labels: {domain: "$1"}',
  '  - match: "ratelimit.service.call.should_rate_limit.*"',
  '    name: "ratelimit_service_should_rate_limit_error"',
  '    help: "ShouldRateLimit calls that failed, by error type."',
  "    match_metric_type: counter",
  '    labels: {err_type: "$1"}',
  '  - match: "ratelimit_server.*.total_requests"',
  '    name: "ratelimit_service_total_requests"',
  '    help: "Calls of the method."',
  "    match_metric_type: counter",
  '    labels: {grpc_method: "$1"}',
  '  - match: "ratelimit_server.*.response_time"',
  '    name: "ratelimit_service_response_time_seconds"',
  '    help: "Time the method took to answer."',
  "    observer_type: histogram",
  "    scale: 0.001",
  '    labels: {grpc_method: "$1"}',
  '  - match: "ratelimit.service.config_load_success"',
  '    name: "ratelimit_service_config_load_success"',
  '    help: "Configuration loads that succeeded (per isolate load)."',
  '  - match: "ratelimit.service.config_load_error"',
  '    name: "ratelimit_service_config_load_error"',
  '    help: "Configuration loads that failed."',
  '  - match: "ratelimit.service.global_shadow_mode"',
  '    name: "ratelimit_service_global_shadow_mode"',
  '    help: "Requests answered OK by global shadow mode although over a limit."',
  "",
].join("\n");
