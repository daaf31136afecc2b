// HTTP routes of the rate limit service: the reference's HTTP server (/json, /healthcheck) and its debug
// routes (/debug, /rlconfig, /stats, the Prometheus /metrics), plus the runtime configuration set (/rlconfig/files).
import { Hono } from "hono";
import { createMiddleware } from "hono/factory";
import { z } from "zod";
import { parseBearer } from "../shared/basic-auth";
import { database } from "../shared/db";
import { HttpError } from "../shared/errors";
import { constantTimeEqualText } from "../shared/passwords";
import { describeZodError } from "../shared/validate";
import { compileConfig, currentConfig, installConfig, loadBundled } from "./config-provider";
import { clearConfigFiles, replaceConfigFiles } from "./config-repo";
import { counterStoreHealthy, storeErrorsArePublic } from "./counter-stores";
import { dumpConfig, type ConfigFile } from "./core/config";
import { parseRateLimitRequestJson, rateLimitResponseToJson } from "./core/json";
import { xdsConfigsToFiles } from "./core/xds-config";
import { decide } from "./engine";
import { ratelimitErrorResponse } from "./errors";
import { rateLimitSettings } from "./settings";
import { logError } from "../shared/log";
import { flushAfter, recordConfigLoad, shouldRateLimitCall } from "./stats/isolate";
import { debugIndex, metricsPage, pullMetricsPath, statsPage } from "./stats/pages";

export const ratelimitApp = new Hono<{ Bindings: Env }>();
ratelimitApp.onError(ratelimitErrorResponse);

/** Admin routes need the RATELIMIT_ADMIN_TOKEN bearer; without a configured token they do not exist. */
const requireAdminToken = createMiddleware<{ Bindings: Env }>(async (c, next) => {
  const expected = rateLimitSettings(c.env).RATELIMIT_ADMIN_TOKEN;
  if (!expected) throw new HttpError(404, "404 page not found");
  const given = parseBearer(c.req.header("Authorization"));
  if (given === undefined || !constantTimeEqualText(given, expected)) {
    throw new HttpError(401, "unauthorized: send Authorization: Bearer <RATELIMIT_ADMIN_TOKEN>", {
      "WWW-Authenticate": 'Bearer realm="ratelimit"',
    });
  }
  await next();
});

// Like the reference's handler, /json takes any method: the body decides. It answers the same ShouldRateLimit call as
// gRPC, so it is counted under that method.
ratelimitApp.use("/json", shouldRateLimitCall("ShouldRateLimit"));
ratelimitApp.all("/json", async (c) => {
  let body: unknown;
  try {
    body = JSON.parse(await c.req.text());
  } catch {
    throw new HttpError(400, "request body is not valid JSON");
  }
  const request = parseRateLimitRequestJson(body);
  if (!request.ok) throw new HttpError(400, request.error);
  const decision = await decide(c.env, request.value, Date.now());
  if (!decision.ok) {
    if (decision.error.kind === "service") throw new HttpError(400, decision.error.message);
    logError("ratelimit: counter store failed", { message: decision.error.message });
    // The key-value store's and object cache's messages are safe to show (as the reference's are); see counter-stores.
    throw new HttpError(500, storeErrorsArePublic(c.env) ? `rate limit counter store error: ${decision.error.message}` : "rate limit counter store error");
  }
  const { response } = decision.value;
  return c.json(rateLimitResponseToJson(response), response.overallCode === "OVER_LIMIT" ? 429 : 200);
});

ratelimitApp.all("/healthcheck", async (c) => {
  const settings = rateLimitSettings(c.env);
  if (settings.HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED) {
    const loaded = await currentConfig(database(c.env.DB), settings, Date.now());
    if (!loaded.config || loaded.config.domains.length === 0) return c.body(null, 500);
  }
  if (!(await counterStoreHealthy(c.env))) return c.body(null, 500);
  return c.text("OK");
});

ratelimitApp.get("/rlconfig", requireAdminToken, async (c) => {
  const loaded = await currentConfig(database(c.env.DB), rateLimitSettings(c.env), Date.now());
  return c.text(loaded.config ? dumpConfig(loaded.config) : "");
});

ratelimitApp.get("/rlconfig/files", requireAdminToken, async (c) => {
  const loaded = await currentConfig(database(c.env.DB), rateLimitSettings(c.env), Date.now());
  return c.json({
    source: loaded.source,
    version: loaded.version,
    domains: loaded.config?.domains ?? [],
    files: Object.fromEntries(loaded.files.map((file) => [file.name, file.text])),
  });
});

const ConfigFilesBody = z.strictObject({ files: z.record(z.string(), z.string()) });
const XdsConfigsBody = z.strictObject({ configs: z.array(z.unknown()) });
const FILE_NAME = /^[^/\\\s]+\.yaml$/;

/** The set a PUT body describes: YAML files by name, or the RateLimitConfig resources of an xDS snapshot. */
function configFilesOf(body: unknown): { ok: true; files: ConfigFile[] } | { ok: false; error: string; xds?: true } {
  if (typeof body === "object" && body !== null && "configs" in body) {
    const parsed = XdsConfigsBody.safeParse(body);
    if (!parsed.success) return { ok: false, error: describeZodError(parsed.error) };
    const files = xdsConfigsToFiles(parsed.data.configs);
    return files.ok ? { ok: true, files: files.value } : { ok: false, error: files.error, xds: true };
  }
  const parsed = ConfigFilesBody.safeParse(body);
  if (!parsed.success) return { ok: false, error: describeZodError(parsed.error) };
  const badName = Object.keys(parsed.data.files).find((name) => !FILE_NAME.test(name));
  if (badName !== undefined) return { ok: false, error: `${badName}: file names must end in .yaml and contain no slashes or spaces` };
  const files = Object.entries(parsed.data.files)
    .map(([name, text]) => ({ name, text }))
    .sort((a, b) => (a.name < b.name ? -1 : 1));
  return { ok: true, files };
}

ratelimitApp.put("/rlconfig/files", requireAdminToken, async (c) => {
  let body: unknown;
  try {
    body = JSON.parse(await c.req.text());
  } catch {
    return c.json({ error: "request body is not valid JSON" }, 400);
  }
  const settings = rateLimitSettings(c.env);
  const described = configFilesOf(body);
  if (!described.ok) {
    // A snapshot whose resources cannot be read is a failed load, as the reference counts it.
    if (described.xds) {
      recordConfigLoad(settings, false);
      flushAfter(c);
    }
    return c.json({ error: described.error }, 400);
  }
  const { files } = described;
  const compiled = compileConfig(files, settings);
  recordConfigLoad(settings, compiled.ok);
  flushAfter(c);
  if (!compiled.ok) return c.json({ error: compiled.error.message }, 400);
  const version = await replaceConfigFiles(database(c.env.DB), files);
  installConfig(settings, { config: compiled.value, source: "runtime", version, files }, Date.now());
  return c.json({ domains: compiled.value.domains });
});

ratelimitApp.delete("/rlconfig/files", requireAdminToken, async (c) => {
  const settings = rateLimitSettings(c.env);
  const version = await clearConfigFiles(database(c.env.DB));
  const loaded = loadBundled(settings, version);
  flushAfter(c);
  installConfig(settings, loaded, Date.now());
  return c.json({ source: "bundled", domains: loaded.config?.domains ?? [] });
});

ratelimitApp.get("/debug", requireAdminToken, (c) => c.text(debugIndex(c.env)));

ratelimitApp.get("/stats", requireAdminToken, async (c) => c.text(await statsPage(c.env)));

// PULLMETRICS_PATH is a setting, so the route cannot be a fixed path: this GET sees every path no route before it
// took and passes the others on (to later routes and the 404).
ratelimitApp.get("*", async (c, next) => {
  if (c.req.path !== pullMetricsPath(c.env)) return next();
  let page: Awaited<ReturnType<typeof metricsPage>> | undefined;
  await requireAdminToken(c, async () => {
    page = await metricsPage(c.env);
  });
  return c.body(page!.body, page!.status, { "content-type": page!.contentType });
});
