// The debug routes: /debug (the index), /stats (every statistic with its value) and the Prometheus page at
// PULLMETRICS_PATH. Both statistics pages flush this isolate's buffer first, then read the
// aggregate, so they include everything this isolate counted and what the others flushed (within an interval).
import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { HttpError } from "../../shared/http/errors";
import { register, text } from "../../shared/http/openapi";
import { logWarn } from "../../shared/log";
import { perIsolate } from "../../shared/isolate";
import { statsConfig, type StatsConfig } from "../stats/config";
import { snapshotEntries } from "../stats/buffer";
import { flushNow } from "../stats/telemetry";
import { DEFAULT_MAPPER_YAML, parseMapperConfig, type MapperConfig } from "../stats/mapper";
import { mapperOfSetting } from "../stats/mapper-setting";
import { PROMETHEUS_CONTENT_TYPE, renderPrometheus } from "../stats/prometheus";
import { AggregateUnanswered, readAggregate } from "../stats/sinks";
import { statsText } from "../stats/text";
import { adminErrors, adminSecurity, requireAdminToken } from "./auth";

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

/** The aggregate the pages show; 503 naming the instance that did not answer, rather than a wait without end. */
async function aggregateOfPage(env: Env, timeoutMs: number) {
  try {
    return await readAggregate(env, timeoutMs);
  } catch (error) {
    if (!(error instanceof AggregateUnanswered)) throw error;
    logWarn("ratelimit: a statistics page could not read the aggregate", { target: error.target });
    throw new HttpError(503, `statistics unavailable: ${error.message}`);
  }
}

/** Every statistic, `name: value` per line; empty with DISABLE_STATS. */
export async function statsPage(env: Env): Promise<string> {
  const config = statsConfig(env);
  if (!config.enabled) return "";
  await flushNow(env);
  return statsText(snapshotEntries(await aggregateOfPage(env, config.sinkTimeoutMs)), config.extraTags);
}

let defaultMapper: MapperConfig | undefined;

/** The mapping a set mapping variable gives, parsed once per statistics config. */
const configuredMapper = perIsolate("ratelimit metrics mapper", (config: StatsConfig) =>
  mapperOfSetting(config.mapper!),
);

/**
 * The mapping in force: PULLMETRICS_MAPPER_YAML names a file under config/ (bundled with the Worker) or is the YAML
 * itself; unset, the default mapping. A mapping that does not parse is a SettingsError naming the variable.
 */
function mapperOf(config: StatsConfig): MapperConfig {
  if (!config.mapper) return (defaultMapper ??= parseMapperConfig(DEFAULT_MAPPER_YAML));
  return configuredMapper(config);
}

/** The Prometheus text of the aggregate; empty with DISABLE_STATS. */
export async function metricsPage(env: Env): Promise<{ status: 200; body: string; contentType: string }> {
  const config = statsConfig(env);
  const mapper = mapperOf(config);
  if (!config.enabled) return { status: 200, body: "", contentType: PROMETHEUS_CONTENT_TYPE };
  await flushNow(env);
  const body = renderPrometheus(
    snapshotEntries(await aggregateOfPage(env, config.sinkTimeoutMs)),
    mapper,
    config.extraTags,
  );
  return { status: 200, body, contentType: PROMETHEUS_CONTENT_TYPE };
}

type RateLimitEnv = { Bindings: Env };

const adminText = (description: string) => ({ 200: text(description), ...adminErrors });

/** The statistics pages' answers: they also wait on the aggregate, within its bound. */
const statisticsText = (description: string) => ({
  ...adminText(description),
  503: text(
    "An instance of the statistics aggregate gave no answer within 5 s: `statistics unavailable: the statistics " +
      'aggregate (Durable Object RATE_LIMIT_STATS "<instance>") did not answer within 5000 ms`',
  ),
});

export const debugIndexRoute = createRoute({
  method: "get",
  path: "/debug",
  operationId: "debugIndex",
  tags: ["ratelimit"],
  summary: "The index of the debug endpoints, `<path>: <what it prints>` per line",
  security: adminSecurity,
  middleware: [requireAdminToken],
  responses: adminText("The index"),
});

export const statsRoute = createRoute({
  method: "get",
  path: "/stats",
  operationId: "rateLimitStats",
  tags: ["ratelimit"],
  summary: "Every statistic, `name: value` per line (empty with DISABLE_STATS)",
  security: adminSecurity,
  middleware: [requireAdminToken],
  responses: statisticsText("The statistics"),
});

/** Documented at its default path; the catch-all GET of registerDebugRoutes serves it where the settings put it. */
export const metricsRoute = createRoute({
  method: "get",
  path: "/metrics",
  operationId: "prometheusMetrics",
  tags: ["ratelimit"],
  summary: "Every statistic in the Prometheus text format (empty with DISABLE_STATS)",
  description:
    "Served at PULLMETRICS_PATH (alias PROMETHEUS_PATH, default /metrics) while USE_PULLMETRICS (alias " +
    "USE_PROMETHEUS) is true, with Content-Type text/plain; version=0.0.4.",
  security: adminSecurity,
  responses: statisticsText("The Prometheus text exposition"),
});

export function registerDebugRoutes(app: OpenAPIHono<RateLimitEnv>): void {
  register(app, debugIndexRoute, (c) => c.text(debugIndex(c.env)));
  register(app, statsRoute, async (c) => c.text(await statsPage(c.env)));
  app.openAPIRegistry.registerPath(metricsRoute);
  // PULLMETRICS_PATH is a setting, so the route cannot be a fixed path: this GET sees every path no route before it
  // took and passes the others on (to later routes and the 404). It stays last.
  app.get("*", async (c, next) => {
    if (c.req.path !== pullMetricsPath(c.env)) return next();
    let page: Awaited<ReturnType<typeof metricsPage>> | undefined;
    await requireAdminToken(c, async () => {
      page = await metricsPage(c.env);
    });
    return c.body(page!.body, page!.status, { "content-type": page!.contentType });
  });
}
