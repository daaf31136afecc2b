// The rate limit service's HTTP router: the reference's HTTP server (/json, /healthcheck), the configuration routes
// (/rlconfig, /rlconfig/files) and the debug routes (/debug, /stats, the Prometheus page), in that order, so that the
// metrics GET, which sees every path, comes last. Documented routes join the one OpenAPI document (tag "ratelimit").
import { OpenAPIHono } from "@hono/zod-openapi";
import { ratelimitErrorResponse } from "./errors";
import { registerAdminTokenScheme } from "./routes/auth";
import { pullMetricsPath, registerDebugRoutes } from "./routes/debug";
import { registerHttpRoutes } from "./routes/http";
import { registerConfigRoutes } from "./routes/rlconfig";
import { registerValidateRoutes } from "./routes/rlconfig-validate";

export const ratelimitApp = new OpenAPIHono<{ Bindings: Env }>();
ratelimitApp.onError(ratelimitErrorResponse);

registerAdminTokenScheme(ratelimitApp);
registerHttpRoutes(ratelimitApp);
registerConfigRoutes(ratelimitApp);
registerValidateRoutes(ratelimitApp);
registerDebugRoutes(ratelimitApp);

/** The routes whose path is a setting, which the root's 404 and 405 read per request: the metrics page. */
export function ratelimitSettingRoutes(env: Env): { method: string; path: string }[] {
  const metrics = pullMetricsPath(env);
  return metrics === undefined ? [] : [{ method: "GET", path: metrics }];
}
