// Hono middleware for the proxy API: HTTP Basic authentication and the master-only guard.
import { createMiddleware } from "hono/factory";
import { parseBasicAuth } from "../../shared/http/basic-auth";
import { database } from "../../shared/db";
import { HttpError } from "../../shared/http/errors";
import { authenticate, type Caller } from "../installation/api-users";
import { Forbidden } from "../domain-errors";
import { Unauthorized } from "../errors";
import { proxySettings } from "../settings";

export type ProxyEnv = { Bindings: Env; Variables: { caller: Caller } };

/**
 * A browser remembers Basic credentials typed into its login dialog (which any 401 of this API opens) and sends them
 * with every later request to the origin, whichever site's page makes it: a form on another site could then write here
 * as the user, since JSON is read whatever the Content-Type says. Browsers mark such requests with Sec-Fetch-Site;
 * clients that are not browsers send none, and the console and Swagger UI are same-origin.
 */
const CROSS_SITE = new Set(["cross-site", "same-site"]);

export const requireBasicAuth = createMiddleware<ProxyEnv>(async (c, next) => {
  if (CROSS_SITE.has(c.req.header("Sec-Fetch-Site") ?? "")) {
    throw new Forbidden(
      "Refused: a page of another site may not use this API's login (Sec-Fetch-Site), nothing was done",
    );
  }
  const credentials = parseBasicAuth(c.req.header("Authorization"));
  if (!credentials) throw new Unauthorized();
  const settings = proxySettings(c.env);
  const caller = await authenticate(
    database(c.env.DB),
    { username: settings.PROXY_ADMIN_USERNAME, password: settings.PROXY_ADMIN_PASSWORD },
    credentials.username,
    credentials.password,
    { ttlMs: settings.PROXY_AUTH_CACHE_TTL, maxEntries: settings.PROXY_AUTH_CACHE_MAX_ENTRIES },
  );
  if (!caller) throw new Unauthorized();
  c.set("caller", caller);
  await next();
});

const onMasterOnly = (refusal: string) =>
  createMiddleware<ProxyEnv>(async (c, next) => {
    if (proxySettings(c.env).INSTANCE_ROLE !== "master") throw new HttpError(405, refusal);
    await next();
  });

/** Writes run only on the master instance; a slave refuses them with 405. */
export const requireMaster = onMasterOnly("This is a slave instance: writes and jobs must go to the master instance");

/** Jobs run only on the master instance: a slave refuses them with 405 and the original's words. */
export const requireMasterForJob = onMasterOnly(
  "Job needs to be started on master instance (this is a slave instance)",
);

/** The management endpoints (/admin/...) are for the administrator of the secrets only. */
export const requireAdmin = createMiddleware<ProxyEnv>(async (c, next) => {
  if (!c.get("caller").isAdmin) throw new Forbidden();
  await next();
});
