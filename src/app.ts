// The root Hono app: mounts the three services at the root paths their specs give (their paths do not
// collide) and answers the index and unknown routes.
import { Hono } from "hono";
import packageJson from "../package.json";
import { newsApp } from "./news/app";
import { proxyApp } from "./proxy/app";
import { ratelimitApp } from "./ratelimit/app";
import { ratelimitGrpcApp } from "./ratelimit/grpc";
import { logError } from "./shared/log";

export const app = new Hono<{ Bindings: Env }>();

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

app.route("/", proxyApp);
app.route("/", newsApp);
app.route("/", ratelimitApp);
app.route("/", ratelimitGrpcApp);

app.notFound((c) => c.json({ error: `no route for ${c.req.method} ${new URL(c.req.url).pathname}` }, 404));

app.onError((error, c) => {
  logError("unhandled error outside the services", error);
  return c.json({ error: "Internal Server Error" }, 500);
});
