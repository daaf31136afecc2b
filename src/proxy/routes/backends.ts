// Routes of the "backends" tag: create or update a backend, and the blue/green switch of its containers.
import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import { database } from "../../shared/db";
import { register } from "../../shared/http/openapi";
import { resolveBackend, setContainersOf, upsertBackend } from "../installation/backends";
import { BackendInput } from "../installation/inputs";
import { resolveProject } from "../installation/projects";
import { haproxyParamsCheck } from "../haproxy/params-check";
import { proxySettings } from "../settings";
import { requireBasicAuth, requireMaster, type ProxyEnv } from "./auth";
import { jsonResponse, serviceResult } from "./json";
import { backendExample } from "./examples";
import { basicAuth, json, jsonBody, labelParams, pick, withBodyLimit } from "./openapi";
import { IdResult, MessageResult } from "./schemas";
import { DryRunQuery, etagHeader, IfMatchHeader, ORIGINAL_WRITES, writeControl } from "./writes";

const upsertRoute = createRoute({
  method: "post",
  path: "/backends/{projectLabel}",
  operationId: "upsertBackend",
  tags: ["backends"],
  summary: "Creates a backend or updates the one with the same label in the project",
  description:
    "Backend and server params are vetted against an allow-list (400 naming the line and the reason). Where an " +
    "agent is configured (HAPROXY_AGENT_URL), params that differ from what is stored are then checked by the master " +
    "load balancer's `haproxy -c` on a minimal configuration holding this backend: a refusal answers 400 " +
    "`<field>: HAProxy refused it: <HAProxy's reason>` and stores nothing; an agent that cannot answer lets the write " +
    "through on the vetting alone, with a warning. " +
    "A new domain forwarding must not be equal to, under or above a name another project holds, nor in a zone " +
    "assigned to another project (409; the administrator passes the first rule, not the second).",
  security: basicAuth,
  middleware: [requireBasicAuth, requireMaster],
  request: {
    params: labelParams("projectLabel"),
    query: DryRunQuery,
    headers: IfMatchHeader,
    body: jsonBody(BackendInput, backendExample),
  },
  responses: {
    200: { ...json(IdResult, "payload {key: backendId, value: <id>}"), headers: etagHeader },
    ...pick(400, 413, 401, 403, 405, 409, 412),
    500: ORIGINAL_WRITES.backend.response,
  },
});

const setContainersRoute = createRoute({
  method: "patch",
  path: "/backends/{projectLabel}/{backendLabel}/setContainersOf/{targetBackendLabel}",
  operationId: "setContainersOf",
  tags: ["backends"],
  summary: "Replaces the containers of the backend with those (and their params) of the target backend",
  security: basicAuth,
  middleware: [requireBasicAuth, requireMaster],
  request: {
    params: labelParams("projectLabel", "backendLabel", "targetBackendLabel"),
    query: DryRunQuery,
    headers: IfMatchHeader,
  },
  responses: {
    200: { ...json(MessageResult, "payload `Switched containers to backend <target>`"), headers: etagHeader },
    ...pick(400, 401, 403, 405, 412),
    500: ORIGINAL_WRITES.backendContainers.response,
  },
});

/** How a backend's params are vetted and checked: the settings' extra directives and the agent's `haproxy -c`. */
function paramsOptions(c: Context<ProxyEnv>) {
  const settings = proxySettings(c.env);
  return { extraDirectives: settings.HAPROXY_PARAMS_EXTRA_DIRECTIVES, checkParams: haproxyParamsCheck(settings) };
}

export function registerBackendRoutes(app: OpenAPIHono<ProxyEnv>): void {
  register(
    app,
    upsertRoute,
    (c) =>
      ORIGINAL_WRITES.backend.run(async () => {
        const db = database(c.env.DB);
        const control = writeControl(c, { preconditions: true });
        const project = await resolveProject(db, c.get("caller"), c.req.param("projectLabel")!);
        const { id, etag, warnings } = await upsertBackend(db, project, c.req.valid("json"), paramsOptions(c), control);
        c.header("ETag", etag);
        return jsonResponse(c, serviceResult({ key: "backendId", value: id }, warnings));
      }),
    withBodyLimit,
  );
  register(app, setContainersRoute, (c) =>
    ORIGINAL_WRITES.backendContainers.run(async () => {
      const db = database(c.env.DB);
      const control = writeControl(c, { preconditions: true });
      const project = await resolveProject(db, c.get("caller"), c.req.param("projectLabel")!);
      const backend = await resolveBackend(db, project, c.req.param("backendLabel")!);
      const target = await resolveBackend(db, project, c.req.param("targetBackendLabel")!);
      const { etag, warnings } = await setContainersOf(db, { project, backend, target }, paramsOptions(c), control);
      c.header("ETag", etag);
      return jsonResponse(c, serviceResult(`Switched containers to backend ${target.label}`, warnings));
    }),
  );
}
