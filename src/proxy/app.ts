// The proxy configuration API (spec 1) and its management endpoints: the routes of each OpenAPI tag, declared once
// with createRoute in routes/, registered in the order of the document. The root app serves the document.
import { OpenAPIHono } from "@hono/zod-openapi";
import { proxyErrorResponse } from "./errors";
import { registerAdminRoutes } from "./routes/admin";
import type { ProxyEnv } from "./routes/auth";
import { registerBackendRoutes } from "./routes/backends";
import { registerContainerRoutes } from "./routes/containers";
import { registerDomainRoutes } from "./routes/domains";
import { registerJobRoutes } from "./routes/jobs";
import { registerOperationsRoutes } from "./routes/operations";
import { registerProjectRoutes } from "./routes/projects";
import { registerTestRoutes } from "./routes/test";

export const proxyApp = new OpenAPIHono<ProxyEnv>();

proxyApp.onError(proxyErrorResponse);

proxyApp.openAPIRegistry.registerComponent("securitySchemes", "user_auth", {
  type: "http",
  scheme: "basic",
  description:
    "An API user (POST /admin/apiusers), or the administrator: PROXY_ADMIN_USERNAME and PROXY_ADMIN_PASSWORD",
});

registerTestRoutes(proxyApp);
registerProjectRoutes(proxyApp);
registerDomainRoutes(proxyApp);
registerContainerRoutes(proxyApp);
registerBackendRoutes(proxyApp);
registerAdminRoutes(proxyApp);
registerJobRoutes(proxyApp);
registerOperationsRoutes(proxyApp);
