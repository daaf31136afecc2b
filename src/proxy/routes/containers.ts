// Routes of the "containers" tag: create or update a container of a project.
import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { database } from "../../shared/db";
import { register } from "../../shared/http/openapi";
import { upsertContainer } from "../installation/containers";
import { ContainerInput } from "../installation/inputs";
import { resolveProject } from "../installation/projects";
import { proxySettings } from "../settings";
import { requireBasicAuth, requireMaster, type ProxyEnv } from "./auth";
import { jsonResponse, serviceResult } from "./json";
import { containerExample } from "./examples";
import { basicAuth, json, jsonBody, labelParams, pick, withBodyLimit } from "./openapi";
import { IdResult } from "./schemas";
import { DryRunQuery, etagHeader, IfMatchHeader, ORIGINAL_WRITES, writeControl } from "./writes";

const upsertRoute = createRoute({
  method: "post",
  path: "/containers/{projectLabel}",
  operationId: "upsertContainer",
  tags: ["containers"],
  summary: "Creates a container or updates the one with the same label in the project",
  description:
    "The address must be no other container's and no registered host's (409). When a tenant changes the address of " +
    "a container the administrator granted SSH permissions on, the permissions are removed in the same write and " +
    "the answer's warnings say so; the administrator's own address changes keep them.",
  security: basicAuth,
  middleware: [requireBasicAuth, requireMaster],
  request: {
    params: labelParams("projectLabel"),
    query: DryRunQuery,
    headers: IfMatchHeader,
    body: jsonBody(ContainerInput, containerExample),
  },
  responses: {
    200: {
      ...json(
        IdResult,
        "payload {key: containerId, value: <id>}; warnings say when a tenant's address change removed SSH permissions",
      ),
      headers: etagHeader,
    },
    ...pick(400, 401, 403, 405, 409, 412, 413),
    500: ORIGINAL_WRITES.container.response,
  },
});

export function registerContainerRoutes(app: OpenAPIHono<ProxyEnv>): void {
  register(
    app,
    upsertRoute,
    (c) =>
      ORIGINAL_WRITES.container.run(async () => {
        const db = database(c.env.DB);
        const control = writeControl(c, { preconditions: true });
        const project = await resolveProject(db, c.get("caller"), c.req.param("projectLabel")!);
        const exceptions = proxySettings(c.env).PROXY_ADDRESS_EXCEPTIONS;
        const { id, etag, warnings } = await upsertContainer(db, project, c.req.valid("json"), exceptions, control);
        c.header("ETag", etag);
        return jsonResponse(c, serviceResult({ key: "containerId", value: id }, warnings));
      }),
    withBodyLimit,
  );
}
