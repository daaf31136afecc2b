// The debug pages of the statistics: /stats (every statistic with its value), the Prometheus page at
// PULLMETRICS_PATH, and the /debug index. Both statistics pages flush this isolate's buffer first, then read the
// aggregate, so they include everything this isolate counted and what the others flushed (within an interval).
import { SettingsError } from "../../shared/settings";
import { bundledConfigFiles } from "../bundled-config.gen";
import { statsConfig, type StatsConfig } from "../settings";
import { snapshotEntries } from "./buffer";
import { flushNow } from "./isolate";
import { DEFAULT_MAPPER_YAML, parseMapperConfig, type MapperConfig } from "./mapper";
import { PROMETHEUS_CONTENT_TYPE, renderPrometheus } from "./prometheus";
import { readAggregate } from "./sinks";
import { statsText } from "./text";

/** The Prometheus path when pull metrics are on (undefined when off or when the settings do not parse). */
export function pullMetricsPath(env: Env): string | undefined {
  try {
    const config = statsConfig(env);
    return config.pullMetrics ? config.pullMetricsPath : undefined;
  } catch {
    return undefined;
  }
}

/** The reference's debug index: `<path>: <what it prints>`, sorted by path. */
export function debugIndex(env: Env): string {
  const entries: [string, string][] = [
    ["/debug", "print out this index of the debug endpoints"],
    ["/rlconfig", "print out the currently loaded configuration for debugging"],
    [
      "/rlconfig/files",
      "the configuration files in force (GET), replace the runtime set (PUT), back to the bundled files (DELETE)",
    ],
    ["/stats", "print out stats"],
  ];
  const metrics = pullMetricsPath(env);
  if (metrics !== undefined) entries.push([metrics, "prometheus metrics"]);
  return entries
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([path, help]) => `${path}: ${help}\n`)
    .join("");
}

/** Every statistic, `name: value` per line; empty with DISABLE_STATS. */
export async function statsPage(env: Env): Promise<string> {
  const config = statsConfig(env);
  if (!config.enabled) return "";
  await flushNow(env);
  return statsText(snapshotEntries(await readAggregate(env)), config.extraTags);
}

const mappers = new WeakMap<StatsConfig, MapperConfig>();
let defaultMapper: MapperConfig | undefined;

/**
 * The mapping in force: PULLMETRICS_MAPPER_YAML names a file under config/ (bundled with the Worker) or is the YAML
 * itself; unset, the default mapping. A mapping that does not parse is a SettingsError naming the variable.
 */
function mapperOf(config: StatsConfig): MapperConfig {
  if (!config.mapper) return (defaultMapper ??= parseMapperConfig(DEFAULT_MAPPER_YAML));
  let mapper = mappers.get(config);
  if (!mapper) {
    const { variable, value } = config.mapper;
    const path = value.trim().replace(/^(\.\/)?config\//, "");
    const text = bundledConfigFiles[path] ?? value;
    try {
      mapper = parseMapperConfig(text);
    } catch (error) {
      throw new SettingsError(
        `ratelimit settings are invalid: ${variable}: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    mappers.set(config, mapper);
  }
  return mapper;
}

/** The Prometheus text of the aggregate; empty with DISABLE_STATS. */
export async function metricsPage(env: Env): Promise<{ status: 200; body: string; contentType: string }> {
  const config = statsConfig(env);
  const mapper = mapperOf(config);
  if (!config.enabled) return { status: 200, body: "", contentType: PROMETHEUS_CONTENT_TYPE };
  await flushNow(env);
  const body = renderPrometheus(snapshotEntries(await readAggregate(env)), mapper, config.extraTags);
  return { status: 200, body, contentType: PROMETHEUS_CONTENT_TYPE };
}
