// HTTP routes of the rate limit service: the reference's HTTP server (/json, /healthcheck) and its debug
// routes (/debug, /rlconfig, /stats, the Prometheus /metrics), plus the runtime configuration set (/rlconfig/files).
import { Hono } from "hono";
import { createMiddleware } from "hono/factory";
import { z } from "zod";
import { parseBearer } from "../shared/http/basic-auth";
import { database } from "../shared/db";
import { HttpError } from "../shared/http/errors";
import { constantTimeEqualText } from "../shared/passwords";
import { describeZodError } from "../shared/http/validate";
import { compileConfig, currentConfig, installConfig, loadBundled } from "./config-provider";
import { clearConfigFiles, replaceConfigFiles } from "./config-repo";
import { counterStoreHealthy, storeErrorsArePublic } from "./counter-stores";
import { dumpConfig, type ConfigFile } from "./core/config";
import { parseRateLimitRequestText, rateLimitResponseToJson } from "./core/json";
import { jsonTextTooDeep, limitText, tooDeep } from "./core/limits";
import { xdsConfigsToFiles } from "./core/xds-config";
import { decide } from "./engine";
import { ratelimitErrorResponse } from "./errors";
import { configLimits, rateLimitSettings, requestLimits, type RateLimitSettings } from "./settings";
import { logError } from "../shared/log";
import { InvalidUtf8, PayloadTooLarge, readBodyText } from "../shared/http/request-body";
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
// gRPC, so it is counted under that method. Every limit is checked before the counters are touched.
ratelimitApp.use("/json", shouldRateLimitCall("ShouldRateLimit"));
ratelimitApp.all("/json", async (c) => {
  const settings = rateLimitSettings(c.env);
  const limit = { maxBytes: settings.RATELIMIT_MAX_REQUEST_BYTES, setting: "RATELIMIT_MAX_REQUEST_BYTES" };
  const request = parseRateLimitRequestText(await readBodyText(c.req.raw, limit), requestLimits(settings));
  if (!request.ok) throw new HttpError(400, request.error);
  const decision = await decide(c.env, request.value, Date.now());
  if (!decision.ok) {
    if (decision.error.kind === "service") throw new HttpError(400, decision.error.message);
    logError("ratelimit: counter store failed", { message: decision.error.message });
    // The key-value store's and object cache's messages are safe to show (as the reference's are); see counter-stores.
    throw new HttpError(
      500,
      storeErrorsArePublic(c.env)
        ? `rate limit counter store error: ${decision.error.message}`
        : "rate limit counter store error",
    );
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
/** A file's name is stored beside its text in one D1 row, and shown in every message about it. */
const MAX_FILE_NAME_LENGTH = 255;

type Described = { ok: true; files: ConfigFile[] } | { ok: false; error: string; xds?: true };

const longName = (files: ConfigFile[]) => files.find((file) => file.name.length > MAX_FILE_NAME_LENGTH)?.name;
const longNameError = (name: string) =>
  `${name.slice(0, 32)}...: a file name is at most ${MAX_FILE_NAME_LENGTH} characters long`;

/**
 * The set a PUT body describes: YAML files by name, or the RateLimitConfig resources of an xDS snapshot. The number of
 * files is checked before any is read.
 */
function configFilesOf(body: unknown, settings: RateLimitSettings): Described {
  const maxFiles = { max: settings.RATELIMIT_CONFIG_MAX_FILES, setting: "RATELIMIT_CONFIG_MAX_FILES" };
  const tooMany = (count: number) => `the set has ${count} files, more than ${limitText(maxFiles)}`;
  if (typeof body === "object" && body !== null && "configs" in body) {
    const parsed = XdsConfigsBody.safeParse(body);
    if (!parsed.success) return { ok: false, error: describeZodError(parsed.error) };
    const { configs } = parsed.data;
    if (configs.length > maxFiles.max) return { ok: false, error: tooMany(configs.length), xds: true };
    const files = xdsConfigsToFiles(configs, configLimits(settings));
    if (!files.ok) return { ok: false, error: files.error, xds: true };
    const tooLong = longName(files.value);
    if (tooLong !== undefined) return { ok: false, error: longNameError(tooLong), xds: true };
    return { ok: true, files: files.value };
  }
  const parsed = ConfigFilesBody.safeParse(body);
  if (!parsed.success) return { ok: false, error: describeZodError(parsed.error) };
  const files = Object.entries(parsed.data.files).map(([name, text]) => ({ name, text }));
  if (files.length > maxFiles.max) return { ok: false, error: tooMany(files.length) };
  const tooLong = longName(files);
  if (tooLong !== undefined) return { ok: false, error: longNameError(tooLong) };
  const badName = files.find((file) => !FILE_NAME.test(file.name))?.name;
  if (badName !== undefined) {
    return { ok: false, error: `${badName}: file names must end in .yaml and contain no slashes or spaces` };
  }
  return { ok: true, files: files.sort((a, b) => (a.name < b.name ? -1 : 1)) };
}

type ConfigBody = { ok: true; body: unknown } | { ok: false; status: 400 | 413; error: string };

/** The PUT body as JSON: within RATELIMIT_CONFIG_MAX_BODY_BYTES, UTF-8, and nested no deeper than the limit. */
async function configBodyOf(request: Request, settings: RateLimitSettings): Promise<ConfigBody> {
  const limit = { maxBytes: settings.RATELIMIT_CONFIG_MAX_BODY_BYTES, setting: "RATELIMIT_CONFIG_MAX_BODY_BYTES" };
  let text: string;
  try {
    text = await readBodyText(request, limit);
  } catch (error) {
    if (error instanceof PayloadTooLarge) return { ok: false, status: 413, error: error.message };
    if (error instanceof InvalidUtf8) return { ok: false, status: 400, error: error.message };
    throw error;
  }
  const { depth } = configLimits(settings);
  if (jsonTextTooDeep(text, depth.max)) return { ok: false, status: 400, error: tooDeep("request body", depth) };
  try {
    return { ok: true, body: JSON.parse(text) };
  } catch {
    return { ok: false, status: 400, error: "request body is not valid JSON" };
  }
}

// Refusals answer {error} like the route's other 4xx, which the xDS client reads.
ratelimitApp.put("/rlconfig/files", requireAdminToken, async (c) => {
  const settings = rateLimitSettings(c.env);
  const read = await configBodyOf(c.req.raw, settings);
  if (!read.ok) return c.json({ error: read.error }, read.status);
  const described = configFilesOf(read.body, settings);
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
