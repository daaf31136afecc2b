// Routes of the "operations" tag (administrator only): what the next generation would change (previews), rolling
// back to a stored version (activate), whether each load balancer runs the version in force (status), and the
// Prometheus metrics, which a bearer token from PROXY_METRICS_TOKEN may also read.
import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { z } from "../../shared/zod";
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { database } from "../../shared/db";
import { parseBearer } from "../../shared/http/basic-auth";
import { HttpError } from "../../shared/http/errors";
import { register } from "../../shared/http/openapi";
import { sameSecret } from "../../shared/passwords";
import { versionNotFound } from "../domain-errors";
import { REALM, REALM_NAME } from "../errors";
import { previewHaproxy } from "../haproxy/preview";
import { loadBalancerStatuses } from "../haproxy/status";
import { activeVersionDigest, versionExists } from "../haproxy/versions";
import {
  PROXY_JOB_KINDS,
  runHaproxyRestoreFromApi,
  runSshProxyRestoreFromApi,
  settleUnknownVersionsNow,
} from "../jobs";
import { collectMetrics, PROMETHEUS_CONTENT_TYPE, renderMetrics } from "../monitoring/metrics";
import { proxySettings } from "../settings";
import { previewSshProxy, sshProxySettingsOf, sshProxyVersionExists } from "../sshproxy/versions";
import { requireAdmin, requireBasicAuth, type ProxyEnv } from "./auth";
import { jobStarted, recordJobStart, versionParam } from "./jobs";
import { jsonResponse, serviceResult } from "./json";
import { adminErrors, errorResponse, json, labelParams, pick, reading, writing } from "./openapi";
import { HaproxyPreview, IdResult, LoadBalancerStatus, SshProxyPreview } from "./schemas";

const METRICS_SCHEME = "proxy_metrics_token";

/** Keys sorted as everywhere in this API, but null kept: a preview's `valid` and a status's fields say "none" so. */
const jsonWithNulls = (c: Context, value: unknown) => jsonResponse(c, value, 200, { keepNulls: true });

/**
 * GET /admin/metrics: the PROXY_METRICS_TOKEN bearer, or the administrator's Basic credentials (an API user's answer
 * 403). A wrong or unconfigured bearer answers 401.
 */
const requireMetricsReader = createMiddleware<ProxyEnv>(async (c, next) => {
  const bearer = parseBearer(c.req.header("Authorization"));
  if (bearer === undefined) {
    await requireBasicAuth(c, async () => {
      await requireAdmin(c, next);
    });
    return;
  }
  const expected = proxySettings(c.env).PROXY_METRICS_TOKEN;
  if (expected === undefined || !(await sameSecret(bearer, expected))) {
    throw new HttpError(
      401,
      "Authentication required: the PROXY_METRICS_TOKEN bearer or the administrator's credentials",
      {
        "WWW-Authenticate": `${REALM}, Bearer realm="${REALM_NAME}"`,
      },
    );
  }
  await next();
});

const haproxyPreviewRoute = createRoute({
  method: "get",
  path: "/admin/haproxy/preview",
  operationId: "previewHaproxy",
  tags: ["operations"],
  summary: "What gensynchaprx would generate now: its files, a diff against the version in force, the agent's check",
  description:
    "Nothing is stored or applied. `valid` is the master agent's `haproxy -c` on the bundle (POST /v1/check of the " +
    "agent), null without HAPROXY_AGENT_URL. Null fields are kept.",
  ...reading,
  responses: {
    200: json(HaproxyPreview, "the preview"),
    ...pick(401),
    ...adminErrors,
    422: errorResponse("the data cannot make a configuration (gensynchaprx would refuse it): the payload says why"),
  },
});

const haproxyStatusRoute = createRoute({
  method: "get",
  path: "/admin/haproxy/status",
  operationId: "getLoadBalancerStatus",
  tags: ["operations"],
  summary: "Each load balancer (the master's agent, then each slave's): does it run the version in force?",
  description:
    "Asks each agent GET /v1/status (HAPROXY_AGENT_QUERY_TIMEOUT, 10 s by default, at most each); the agent " +
    "recomputes the digest of the files on its disk, so a file edited by hand shows as `modified`. First it settles " +
    "the versions whose outcome is `unknown` (a push whose answer was lost): the master's agent is asked what became " +
    "of each (POST /v1/pushes/{id}/abandon, which stops a push that has not reached its reload); applied, the version " +
    "becomes the one in force and the slaves' syncs are queued; dropped or refused, it is rejected. Each slave shows " +
    "its latest sync, with its failed attempts and next retry. Null fields are kept.",
  ...reading,
  responses: { 200: json(z.array(LoadBalancerStatus), "one entry per load balancer"), ...pick(401), ...adminErrors },
});

const haproxyActivateRoute = createRoute({
  method: "post",
  path: "/admin/haproxy/versions/{version}/activate",
  operationId: "activateHaproxyVersion",
  tags: ["operations"],
  summary: "Rolls back: ships a stored version again as a new version (restoredFrom), validated and synced as usual",
  description:
    "Synchronous, under gensynchaprx's lock and recorded as a gensynchaprx run. The new version has the stored " +
    "version's files and the certificates of the same names as they are now; the master's agent checks and applies " +
    "it, then one sync per slave is queued. A failure answers 500 as gensynchaprx does, and the version in force stays.",
  ...writing,
  request: { params: labelParams("version") },
  responses: {
    200: { ...json(IdResult, "payload `{key: version, value: <the new version>}` and the warnings"), ...jobStarted },
    ...pick(401, 404, 405, 423),
    ...adminErrors,
    500: errorResponse("`Unable to reload and sync of HAProxy: <cause>`; the version in force stays"),
  },
});

const sshPreviewRoute = createRoute({
  method: "get",
  path: "/admin/sshproxy/preview",
  operationId: "previewSshProxy",
  tags: ["operations"],
  summary: "What writesshprx would store now, with a diff against the version in force",
  description: "Nothing is stored. Null fields are kept.",
  ...reading,
  responses: { 200: json(SshProxyPreview, "the preview"), ...pick(401), ...adminErrors },
});

const sshActivateRoute = createRoute({
  method: "post",
  path: "/admin/sshproxy/versions/{version}/activate",
  operationId: "activateSshProxyVersion",
  tags: ["operations"],
  summary: "Rolls back: stores a stored SSH proxy version again as the newest one (restoredFrom)",
  description:
    "Under writesshprx's lock, recorded as a writesshprx run. Only what the installation still grants comes back: " +
    "accounts no longer granted or whose target moved, and users and keys taken away since, are left out with a WARN. " +
    "The file is generated again with the current upstream key and known_hosts files.",
  ...writing,
  request: { params: labelParams("version") },
  responses: {
    200: { ...json(IdResult, "payload `{key: version, value: <the new version>}` and the warnings"), ...jobStarted },
    ...pick(401, 404, 405, 423),
    ...adminErrors,
  },
});

const metricsRoute = createRoute({
  method: "get",
  path: "/admin/metrics",
  operationId: "getProxyMetrics",
  tags: ["operations"],
  summary: "Prometheus metrics: certificate ends, the version in force, job outcomes, drift, counts",
  description:
    "Prometheus text format 0.0.4, every family a gauge (docs/proxy.md lists them). For the administrator or the " +
    "PROXY_METRICS_TOKEN bearer. Each scrape asks every agent its status.",
  security: [{ user_auth: [] }, { [METRICS_SCHEME]: [] }],
  middleware: [requireMetricsReader],
  responses: {
    200: { description: "the metrics", content: { [PROMETHEUS_CONTENT_TYPE]: { schema: z.string() } } },
    ...pick(401),
    ...adminErrors,
  },
});

/** Records a rollback in the audit log and answers it as the job routes answer a run (its id in X-Job-Id). */
async function restoredAnswer(
  c: Context<ProxyEnv>,
  versionKey: "haproxyVersion" | "sshProxyVersion",
  restoredFrom: number,
  restored: { version: number; runId: number; warnings: string[] },
) {
  await recordJobStart(c, restored.runId, {
    [versionKey]: restored.version,
    restoredFrom,
    jobRunId: restored.runId,
  });
  return jsonResponse(c, serviceResult({ key: "version", value: restored.version }, restored.warnings));
}

export function registerOperationsRoutes(app: OpenAPIHono<ProxyEnv>): void {
  app.openAPIRegistry.registerComponent("securitySchemes", METRICS_SCHEME, {
    type: "http",
    scheme: "bearer",
    description: "PROXY_METRICS_TOKEN: reads GET /admin/metrics only",
  });

  register(app, haproxyPreviewRoute, async (c) => jsonWithNulls(c, await previewHaproxy(c.env, new Date())));
  register(app, haproxyStatusRoute, async (c) => {
    // Versions whose push's outcome was lost are settled first: the agent is asked again.
    const unknown = await settleUnknownVersionsNow(c.env);
    const inForce = activeVersionDigest(database(c.env.DB));
    return jsonWithNulls(c, await loadBalancerStatuses(c.env, new Date(), inForce, unknown));
  });
  register(app, haproxyActivateRoute, async (c) => {
    const version = versionParam(c);
    if (!(await versionExists(database(c.env.DB), version))) throw versionNotFound(version);
    const restored = await runHaproxyRestoreFromApi(c.env, { caller: c.get("caller"), now: new Date(), version });
    return restoredAnswer(c, "haproxyVersion", version, restored);
  });
  register(app, sshPreviewRoute, async (c) => {
    const preview = await previewSshProxy(database(c.env.DB), sshProxySettingsOf(proxySettings(c.env)));
    return jsonWithNulls(c, preview);
  });
  register(app, sshActivateRoute, async (c) => {
    const version = versionParam(c);
    if (!(await sshProxyVersionExists(database(c.env.DB), version))) throw versionNotFound(version);
    const restored = await runSshProxyRestoreFromApi(c.env, { caller: c.get("caller"), now: new Date(), version });
    return restoredAnswer(c, "sshProxyVersion", version, restored);
  });
  register(app, metricsRoute, async (c) => {
    const metrics = await collectMetrics(c.env, { now: new Date(), jobKinds: PROXY_JOB_KINDS });
    return c.body(renderMetrics(metrics), 200, { "Content-Type": PROMETHEUS_CONTENT_TYPE });
  });
}
