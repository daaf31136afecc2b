// The root app: mounts the three services at the root paths their specs give (their paths do not collide), serves
// the one OpenAPI document of every service's declared routes (each mounted OpenAPIHono's registry is copied into
// this one) with its Swagger UI at /docs (api-docs.ts), and answers the index and unknown routes.
import { OpenAPIHono } from "@hono/zod-openapi";
// Named imports, so that the bundle keeps these two fields of package.json and not the whole file.
import { name as packageName, version as packageVersion } from "../package.json";
import { docsPage, DOCS_PATH, DOCUMENT_PATH, documentConfig } from "./api-docs";
import { newsApp, newsErrorResponse } from "./news/index";
import { proxyApp, proxyErrorResponse } from "./proxy/index";
import { ratelimitApp, ratelimitErrorResponse, ratelimitGrpcApp, ratelimitSettingRoutes } from "./ratelimit/index";
import { errorHandler } from "./shared/http/errors";
import { unmatchedRoute } from "./shared/http/unmatched-route";

export const app = new OpenAPIHono<{ Bindings: Env }>();

app.get("/", (c) =>
  c.json({
    name: packageName,
    version: packageVersion,
    services: [
      {
        name: "proxy-config-api",
        description: "Projects, backends, containers and domains; HAProxy and SSH proxy config",
      },
      { name: "news-api", description: "Users, JWT login and news about Australian companies" },
      { name: "ratelimit", description: "Envoy-compatible rate limit decisions (POST /json, gRPC v3)" },
    ],
  }),
);

// Before the services: the rate limit service's metrics route answers every other GET.
app.doc31(DOCUMENT_PATH, documentConfig(packageVersion));
app.get(DOCS_PATH, docsPage);

app.route("/", proxyApp);
app.route("/", newsApp);
app.route("/", ratelimitApp);
app.route("/", ratelimitGrpcApp);

// A request no route answers gets 405 with Allow when its path exists with other methods, else 404, in the shape of
// the service that owns the path (its routes, or the first segment of its routes; see shared/http/unmatched-route.ts):
// the proxy's {success: false, payload, warnings}, the news API's {valid: false, name, param, message}, the rate limit
// service's text/plain; paths no service owns (/, /openapi.json, /docs, unknown prefixes) get the root's {error}.
const rootErrorResponse = errorHandler("root", {
  expected: (c, error) => c.json({ error: error.message }, error.status as 404, error.headers),
  failure: (c, message) => c.json({ error: message }, 500),
});
app.notFound(
  unmatchedRoute<{ Bindings: Env }>([
    { routes: proxyApp.routes, render: proxyErrorResponse },
    { routes: newsApp.routes, render: newsErrorResponse },
    { routes: ratelimitApp.routes, settingRoutes: ratelimitSettingRoutes, render: ratelimitErrorResponse },
    { routes: ratelimitGrpcApp.routes, render: ratelimitErrorResponse },
    { routes: app.routes, render: rootErrorResponse },
  ]),
);

app.onError(rootErrorResponse);
