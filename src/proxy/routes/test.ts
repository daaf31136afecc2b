// Routes of the "test" tag: availability checks, one public and one behind Basic authentication.
import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { register } from "../../shared/http/openapi";
import { proxySettings } from "../settings";
import { requireBasicAuth, type ProxyEnv } from "./auth";
import { basicAuth, pick, text } from "./openapi";

const ping = createRoute({
  method: "get",
  path: "/test/ping",
  operationId: "ping",
  security: [],
  tags: ["test"],
  summary: "Availability check",
  responses: { 200: text("`pong from master instance` or `pong from slave instance`") },
});

const authPing = createRoute({
  method: "get",
  path: "/test/authping",
  operationId: "authPing",
  tags: ["test"],
  summary: "Availability and authentication check",
  security: basicAuth,
  middleware: [requireBasicAuth],
  responses: { 200: text("`authpong <username> from master instance`"), ...pick(401) },
});

export function registerTestRoutes(app: OpenAPIHono<ProxyEnv>): void {
  register(app, ping, (c) => c.text(`pong from ${proxySettings(c.env).INSTANCE_ROLE} instance`));
  register(app, authPing, (c) =>
    c.text(`authpong ${c.get("caller").username} from ${proxySettings(c.env).INSTANCE_ROLE} instance`),
  );
}
