// Routes of the proxy configuration API (spec 1).
import { Hono } from "hono";
import { requireBasicAuth, type ProxyEnv } from "./auth";
import { proxyErrorResponse } from "./errors";
import { proxySettings } from "./settings";

export const proxyApp = new Hono<ProxyEnv>();
proxyApp.onError(proxyErrorResponse);

proxyApp.get("/test/ping", (c) => c.text(`pong from ${proxySettings(c.env).INSTANCE_ROLE} instance`));

proxyApp.get("/test/authping", requireBasicAuth, (c) =>
  c.text(`authpong ${c.get("caller").username} from ${proxySettings(c.env).INSTANCE_ROLE} instance`),
);
