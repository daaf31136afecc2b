// Routes of the "domains" tag: the domains of a project or backend, and the all-or-nothing mass update.
import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { database } from "../../shared/db";
import { HttpError } from "../../shared/http/errors";
import { register } from "../../shared/http/openapi";
import { resolveBackend } from "../installation/backends";
import { listDomains, massUpdateDomains } from "../installation/domains";
import { MassDomainUpdate } from "../installation/inputs";
import { resolveProject } from "../installation/projects";
import { domainsWithProvidedCertificate } from "../pki/certificates";
import { proxySettings } from "../settings";
import { requireBasicAuth, requireMaster, type ProxyEnv } from "./auth";
import { jsonResponse } from "./json";
import { massUpdateExample } from "./examples";
import { basicAuth, json, jsonBody, labelParams, pick, withBodyLimit } from "./openapi";
import { ListOfWarnings, MapOfDomains } from "./schemas";
import { DryRunQuery, etagHeader, IfMatchHeader, ORIGINAL_WRITES, writeControl } from "./writes";

const ofProject = createRoute({
  method: "get",
  path: "/domains/{projectLabel}",
  operationId: "listProjectDomains",
  tags: ["domains"],
  summary: "The domains of a project, keyed and sorted by domain name",
  security: basicAuth,
  middleware: [requireBasicAuth],
  request: { params: labelParams("projectLabel") },
  responses: { 200: json(MapOfDomains, "domains by name"), ...pick(401, 404) },
});

const ofBackend = createRoute({
  method: "get",
  path: "/domains/{projectLabel}/{backendLabel}",
  operationId: "listBackendDomains",
  tags: ["domains"],
  summary: "The domains of one backend, keyed and sorted by domain name",
  security: basicAuth,
  middleware: [requireBasicAuth],
  request: { params: labelParams("projectLabel", "backendLabel") },
  responses: { 200: json(MapOfDomains, "domains by name"), ...pick(401, 404) },
});

const massUpdate = createRoute({
  method: "post",
  path: "/domains/massupdate",
  operationId: "massUpdateDomains",
  tags: ["domains"],
  summary: "Creates, updates and deletes domains in one all-or-nothing request",
  description:
    "CREATE, UPDATE and REPLACE upsert by domain name across all projects (never moving a domain out of a project " +
    "the caller cannot access); DELETE removes a domain only from the named backend. With fullSync, only create " +
    "and update operations of one project are allowed and every other domain of that project is removed. Every " +
    "project an operation names, and every project a domain moves out of, changes: with If-Match, each one's " +
    "current ETag must be listed (or `*`). A domain a request creates or moves to another project must not be under " +
    "or above a name another project holds, nor in a zone assigned to another project (409; the administrator " +
    "passes the first rule, not the second).",
  security: basicAuth,
  middleware: [requireBasicAuth, requireMaster],
  request: { query: DryRunQuery, headers: IfMatchHeader, body: jsonBody(MassDomainUpdate, massUpdateExample) },
  responses: {
    200: {
      ...json(ListOfWarnings, "warnings"),
      headers: {
        ETag: { ...etagHeader.ETag, description: "the project's ETag, when the request changed one project" },
      },
    },
    ...pick(400, 413, 401, 403, 405, 409, 412),
    500: ORIGINAL_WRITES.massUpdate.response,
  },
});

export function registerDomainRoutes(app: OpenAPIHono<ProxyEnv>): void {
  register(app, ofProject, async (c) => {
    const db = database(c.env.DB);
    const project = await resolveProject(db, c.get("caller"), c.req.param("projectLabel")!);
    return jsonResponse(c, await listDomains(db, project));
  });
  register(app, ofBackend, async (c) => {
    const db = database(c.env.DB);
    const project = await resolveProject(db, c.get("caller"), c.req.param("projectLabel")!);
    const backend = await resolveBackend(db, project, c.req.param("backendLabel")!);
    return jsonResponse(c, await listDomains(db, project, backend.id));
  });
  register(
    app,
    massUpdate,
    (c) =>
      ORIGINAL_WRITES.massUpdate.run(async () => {
        const input = c.req.valid("json");
        const limit = proxySettings(c.env).PROXY_MASS_UPDATE_MAX_OPERATIONS;
        if (input.domainOperations.length > limit) {
          throw new HttpError(400, `domainOperations: at most ${limit} operations per request`);
        }
        const control = writeControl(c, { preconditions: true });
        const db = database(c.env.DB);
        const caller = c.get("caller");
        const { warnings, etag } = await massUpdateDomains(db, caller, input, domainsWithProvidedCertificate, control);
        if (etag !== undefined) c.header("ETag", etag);
        return jsonResponse(c, warnings);
      }),
    withBodyLimit,
  );
}
