// The root app: mounts the three services at the root paths their specs give (their paths do not collide), serves
// the one OpenAPI document of every service's declared routes (each mounted OpenAPIHono's registry is copied into
// this one) with its Swagger UI at /docs, and answers the index and unknown routes.
import { OpenAPIHono } from "@hono/zod-openapi";
import { swaggerUI } from "@hono/swagger-ui";
import packageJson from "../package.json";
import { newsApp } from "./news/index";
import { proxyApp } from "./proxy/index";
import { ratelimitApp, ratelimitGrpcApp } from "./ratelimit/index";
import { logError } from "./shared/log";

export const app = new OpenAPIHono<{ Bindings: Env }>();

app.get("/", (c) =>
  c.json({
    name: packageJson.name,
    version: packageJson.version,
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
app.doc31("/openapi.json", {
  openapi: "3.1.0",
  info: {
    title: "Proxy configuration API",
    version: "1.0.0",
    description: "Projects, backends, containers and domains of the HAProxy and SSH proxy installation (HTTP Basic).",
  },
});
app.get("/docs", swaggerUI({ url: "/openapi.json", title: "Proxy configuration API" }));

app.route("/", proxyApp);
app.route("/", newsApp);
app.route("/", ratelimitApp);
app.route("/", ratelimitGrpcApp);

app.notFound((c) => c.json({ error: `no route for ${c.req.method} ${new URL(c.req.url).pathname}` }, 404));

app.onError((error, c) => {
  logError("unhandled error outside the services", error);
  return c.json({ error: "Internal Server Error" }, 500);
});
