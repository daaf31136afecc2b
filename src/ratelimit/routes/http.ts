// The reference's HTTP server: POST /json (ShouldRateLimit in proto3 JSON) and /healthcheck. Both take any method, as
// the reference's handlers do; the declarations document the method callers use.
import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import { z } from "../../shared/zod";
import { database } from "../../shared/db";
import { HttpError } from "../../shared/http/errors";
import { register, text } from "../../shared/http/openapi";
import { readBodyText } from "../../shared/http/request-body";
import { logError } from "../../shared/log";
import { currentConfig } from "../config/provider";
import { counterStoreHealthy, decide } from "../runtime";
import { configLoadSettings, rateLimitSettings, requestLimits } from "../settings";
import { shouldRateLimitCall } from "../stats/telemetry";
import { requireAdminFor } from "./auth";
import { parseRateLimitRequestText, rateLimitResponseToJson } from "./codec";
import { rateLimitRequestExample } from "./examples";
import { RATE_LIMIT_REQUEST, RATE_LIMIT_RESPONSE, registerMessageSchemas } from "./message-schemas";

type RateLimitEnv = { Bindings: Env };

export const shouldRateLimitRoute = createRoute({
  method: "post",
  path: "/json",
  operationId: "shouldRateLimitJson",
  security: [],
  tags: ["ratelimit"],
  summary: "ShouldRateLimit over HTTP: decide a request in proto3 JSON (any method; the body decides)",
  request: {
    query: z.object({
      explain: z
        .string()
        .optional()
        .describe(
          "`true` (with the RATELIMIT_ADMIN_TOKEN bearer, else 401): the response gains `explain`, per descriptor the " +
            "rule that matched (or why none), its statistics key, each window's usage before and after, the " +
            "algorithm, shadow and quota mode, replaces, and whether the local cache answered. Other values: ignored",
        ),
    }),
    body: {
      required: true,
      content: { "application/json": { schema: RATE_LIMIT_REQUEST, example: rateLimitRequestExample } },
    },
  },
  responses: {
    200: {
      description: "Every descriptor is within its limit",
      content: { "application/json": { schema: RATE_LIMIT_RESPONSE } },
    },
    429: { description: "Over the limit", content: { "application/json": { schema: RATE_LIMIT_RESPONSE } } },
    400: text("The request cannot be read or decided; the message names the problem"),
    401: text("explain=true without the RATELIMIT_ADMIN_TOKEN bearer"),
    413: text("The body is larger than RATELIMIT_MAX_REQUEST_BYTES"),
    500: text("The counter store failed"),
  },
});

export const healthcheckRoute = createRoute({
  method: "get",
  path: "/healthcheck",
  operationId: "healthcheck",
  security: [],
  tags: ["ratelimit"],
  summary: "Health: the counter store (and, if required, a loaded configuration) is usable (any method)",
  responses: { 200: text("OK"), 500: { description: "Unhealthy" } },
});

// Every limit is checked before the counters are touched.
async function shouldRateLimit(c: Context<RateLimitEnv>) {
  // Checked before the body is read: explaining shows the configuration, an admin's view.
  const explain = c.req.query("explain") === "true";
  if (explain) await requireAdminFor(c.env, c.req.header("Authorization"), "explain=true");
  const settings = rateLimitSettings(c.env);
  const limit = { maxBytes: settings.RATELIMIT_MAX_REQUEST_BYTES, setting: "RATELIMIT_MAX_REQUEST_BYTES" };
  const request = parseRateLimitRequestText(await readBodyText(c.req.raw, limit), requestLimits(settings));
  if (!request.ok) throw new HttpError(400, request.error);
  const decision = await decide(c.env, request.value, Date.now(), { explain });
  if (!decision.ok) {
    if (decision.error.kind === "service") throw new HttpError(400, decision.error.message);
    logError("ratelimit: counter store failed", { message: decision.error.message });
    // Only a server's own error reply or what the service composed (PublicStoreError): never an address or a node list.
    const shown = decision.error.shown;
    throw new HttpError(500, `rate limit counter store error${shown === undefined ? "" : `: ${shown}`}`);
  }
  const { response } = decision.value;
  const body = rateLimitResponseToJson(response);
  const status = response.overallCode === "OVER_LIMIT" ? 429 : 200;
  return c.json(explain ? { ...body, explain: decision.value.explain } : body, status);
}

async function healthcheck(c: Context<RateLimitEnv>) {
  const settings = configLoadSettings(c.env);
  if (settings.service.HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED) {
    const loaded = await currentConfig(database(c.env.DB), settings, Date.now());
    if (!loaded.config || loaded.config.domains.length === 0) return c.body(null, 500);
  }
  if (!(await counterStoreHealthy(c.env))) return c.body(null, 500);
  return c.text("OK");
}

export function registerHttpRoutes(app: OpenAPIHono<RateLimitEnv>): void {
  registerMessageSchemas(app);
  // /json answers the same ShouldRateLimit call as gRPC, so it is counted under that method.
  app.use(shouldRateLimitRoute.getRoutingPath(), shouldRateLimitCall("ShouldRateLimit"));
  register(app, shouldRateLimitRoute, shouldRateLimit);
  app.all(shouldRateLimitRoute.getRoutingPath(), shouldRateLimit);
  register(app, healthcheckRoute, healthcheck);
  app.all(healthcheckRoute.getRoutingPath(), healthcheck);
}
