// Routes of the "admin" tag (administrator only): projects, hosts, zones, API users, console/SSH users, SSH permissions
// and the audit log.
import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { z } from "../../shared/zod";
import { database } from "../../shared/db";
import { listAudit } from "../audit/log";
import { HttpError } from "../../shared/http/errors";
import { register } from "../../shared/http/openapi";
import { deleteApiUser, listApiUsers, upsertApiUser } from "../installation/api-users";
import { setContainerPermissions } from "../installation/containers";
import { listHosts, upsertHost } from "../installation/hosts";
import {
  ApiUserInput,
  HostCreate,
  hostName,
  PermissionGrants,
  ProjectInput,
  UserInput,
  ZoneInput,
} from "../installation/inputs";
import { deleteProject, listProjects, resolveProject, upsertProject } from "../installation/projects";
import { listUsers, upsertUser } from "../installation/users";
import { assignZone, listZones, removeZone } from "../installation/zones";
import { parseOrThrow } from "../../shared/http/validate";
import { proxySettings } from "../settings";
import type { ProxyEnv } from "./auth";
import { jsonResponse, serviceResult } from "./json";
import {
  apiUserExample,
  hostExample,
  permissionsExample,
  projectExample,
  userExample,
  ZONE_NAME,
  zoneExample,
} from "./examples";
import { adminErrors, json, jsonBody, labelParams, namedParam, pick, reading, withBodyLimit, writing } from "./openapi";
import {
  ApiUser,
  AuditPage,
  AuditQuery,
  Container,
  HostListItem,
  MessageResult,
  ProjectSummary,
  User,
  Zone,
} from "./schemas";
import { DryRunQuery, etagHeader, IfMatchHeader, writeControl } from "./writes";

export const deleted = (what: string) => serviceResult(`Deleted ${what}`);

const upsertProjectRoute = createRoute({
  method: "post",
  path: "/admin/projects",
  operationId: "adminUpsertProject",
  tags: ["admin"],
  summary: "Creates a project, or updates the fullname of the project with that label",
  ...writing,
  request: { query: DryRunQuery, headers: IfMatchHeader, body: jsonBody(ProjectInput, projectExample) },
  responses: {
    200: { ...json(ProjectSummary, "the project"), headers: etagHeader },
    ...pick(400, 413, 401, 405, 412),
    ...adminErrors,
  },
});

const listProjectsRoute = createRoute({
  method: "get",
  path: "/admin/projects",
  operationId: "adminListProjects",
  tags: ["admin"],
  summary: "All projects, sorted by label",
  ...reading,
  responses: { 200: json(z.array(ProjectSummary), "projects"), ...pick(401), ...adminErrors },
});

const deleteProjectRoute = createRoute({
  method: "delete",
  path: "/admin/projects/{label}",
  operationId: "adminDeleteProject",
  tags: ["admin"],
  summary: "Deletes a project with its backends, containers, domains and permissions",
  ...writing,
  request: { params: labelParams("label"), query: DryRunQuery, headers: IfMatchHeader },
  responses: {
    200: json(MessageResult, "payload `Deleted project <label>`"),
    ...pick(400, 401, 404, 405, 412),
    ...adminErrors,
  },
});

const upsertHostRoute = createRoute({
  method: "post",
  path: "/admin/hosts",
  operationId: "adminUpsertHost",
  tags: ["admin"],
  summary: "Registers a host, or updates the ipv6 of the host with that name",
  ...writing,
  request: { query: DryRunQuery, body: jsonBody(HostCreate, hostExample) },
  responses: { 200: json(HostListItem, "the host"), ...pick(400, 413, 401, 405, 409), ...adminErrors },
});

const listHostsRoute = createRoute({
  method: "get",
  path: "/admin/hosts",
  operationId: "adminListHosts",
  tags: ["admin"],
  summary: "All hosts, sorted by name",
  ...reading,
  responses: { 200: json(z.array(HostListItem), "hosts"), ...pick(401), ...adminErrors },
});

const zoneDescription =
  "A domain equal to or under a zone may be held only by the zone's project, whoever writes it (the innermost zone " +
  "decides), and the rule on other projects' neighbouring names does not apply inside it. Assigning a zone that holds " +
  "domains of another project (outside deeper zones) answers 409 naming them.";

const assignZoneRoute = createRoute({
  method: "put",
  path: "/admin/zones/{name}",
  operationId: "adminAssignZone",
  tags: ["admin"],
  summary: "Assigns a DNS zone to a project, which alone may then hold the names in it",
  description: zoneDescription,
  ...writing,
  request: { params: namedParam("name", ZONE_NAME), query: DryRunQuery, body: jsonBody(ZoneInput, zoneExample) },
  responses: { 200: json(Zone, "the zone"), ...pick(400, 413, 401, 404, 405, 409), ...adminErrors },
});

const listZonesRoute = createRoute({
  method: "get",
  path: "/admin/zones",
  operationId: "adminListZones",
  tags: ["admin"],
  summary: "All zones, sorted by name",
  ...reading,
  responses: { 200: json(z.array(Zone), "zones"), ...pick(401), ...adminErrors },
});

const removeZoneRoute = createRoute({
  method: "delete",
  path: "/admin/zones/{name}",
  operationId: "adminRemoveZone",
  tags: ["admin"],
  summary: "Removes a zone: its names follow the rule on neighbouring names again",
  ...writing,
  request: { params: namedParam("name", ZONE_NAME), query: DryRunQuery },
  responses: {
    200: json(MessageResult, "payload `Deleted zone <name>`"),
    ...pick(400, 401, 404, 405),
    ...adminErrors,
  },
});

/** The zone name in the path, as a domain name is stored (400 when it is none). */
const zoneName = (name: string | undefined) => parseOrThrow(z.object({ name: hostName }), { name }).name;

const upsertApiUserRoute = createRoute({
  method: "post",
  path: "/admin/apiusers",
  operationId: "adminUpsertApiUser",
  tags: ["admin"],
  summary: "Creates an API user, or replaces password, email and patterns of the user with that name",
  ...writing,
  request: { query: DryRunQuery, body: jsonBody(ApiUserInput, apiUserExample) },
  responses: { 200: json(ApiUser, "the API user (never the password)"), ...pick(400, 413, 401, 405), ...adminErrors },
});

const listApiUsersRoute = createRoute({
  method: "get",
  path: "/admin/apiusers",
  operationId: "adminListApiUsers",
  tags: ["admin"],
  summary: "All API users, sorted by name",
  ...reading,
  responses: { 200: json(z.array(ApiUser), "API users"), ...pick(401), ...adminErrors },
});

const deleteApiUserRoute = createRoute({
  method: "delete",
  path: "/admin/apiusers/{username}",
  operationId: "adminDeleteApiUser",
  tags: ["admin"],
  summary: "Deletes an API user",
  ...writing,
  request: { params: labelParams("username"), query: DryRunQuery },
  responses: {
    200: json(MessageResult, "payload `Deleted API user <username>`"),
    ...pick(400, 401, 404, 405),
    ...adminErrors,
  },
});

const upsertUserRoute = createRoute({
  method: "post",
  path: "/admin/users",
  operationId: "adminUpsertUser",
  tags: ["admin"],
  summary: "Creates a console/SSH user, or updates the given fields of the user with that email",
  ...writing,
  request: { query: DryRunQuery, body: jsonBody(UserInput, userExample) },
  responses: { 200: json(User, "the user"), ...pick(400, 413, 401, 405), ...adminErrors },
});

const listUsersRoute = createRoute({
  method: "get",
  path: "/admin/users",
  operationId: "adminListUsers",
  tags: ["admin"],
  summary: "All console/SSH users, sorted by email",
  ...reading,
  responses: { 200: json(z.array(User), "users"), ...pick(401), ...adminErrors },
});

const permissionsRoute = createRoute({
  method: "put",
  path: "/admin/containers/{projectLabel}/{containerLabel}/permissions",
  operationId: "adminSetContainerPermissions",
  tags: ["admin"],
  summary: "Sets the complete list of SSH permissions of a container",
  ...writing,
  request: {
    params: labelParams("projectLabel", "containerLabel"),
    query: DryRunQuery,
    headers: IfMatchHeader,
    body: jsonBody(PermissionGrants, permissionsExample),
  },
  responses: {
    200: { ...json(Container, "the container with its permissions"), headers: etagHeader },
    ...pick(400, 413, 401, 404, 405, 412, 500),
    ...adminErrors,
  },
});

const auditRoute = createRoute({
  method: "get",
  path: "/admin/audit",
  operationId: "listAuditEntries",
  tags: ["admin"],
  summary: "The audit log: every accepted write (tenants' and administrators'), newest first",
  description:
    "Filters combine; a page holds `limit` entries (1 to 500, default 100) and, when more may follow, `nextBefore` " +
    "to pass as `before`. Entries older than PROXY_AUDIT_RETENTION_DAYS are removed by a daily job. Refused writes " +
    "and dry runs are never recorded.",
  ...reading,
  request: { query: AuditQuery },
  responses: { 200: json(AuditPage, "entries, newest first"), ...pick(400, 401), ...adminErrors },
});

/** Projects, hosts and zones, then the access routes, in the order the OpenAPI document lists them. */
export function registerAdminRoutes(app: OpenAPIHono<ProxyEnv>): void {
  register(
    app,
    upsertProjectRoute,
    async (c) => {
      const control = writeControl(c, { preconditions: true });
      const { project, etag } = await upsertProject(database(c.env.DB), c.req.valid("json"), control);
      c.header("ETag", etag);
      return jsonResponse(c, project);
    },
    withBodyLimit,
  );
  register(app, listProjectsRoute, async (c) => jsonResponse(c, await listProjects(database(c.env.DB))));
  register(app, deleteProjectRoute, async (c) => {
    await deleteProject(database(c.env.DB), c.req.param("label")!, writeControl(c, { preconditions: true }));
    return jsonResponse(c, deleted(`project ${c.req.param("label")}`));
  });
  register(
    app,
    upsertHostRoute,
    async (c) => {
      const control = writeControl(c, { preconditions: false });
      const exceptions = proxySettings(c.env).PROXY_ADDRESS_EXCEPTIONS;
      return jsonResponse(c, await upsertHost(database(c.env.DB), c.req.valid("json"), exceptions, control));
    },
    withBodyLimit,
  );
  register(app, listHostsRoute, async (c) => jsonResponse(c, await listHosts(database(c.env.DB))));
  register(
    app,
    assignZoneRoute,
    async (c) => {
      const control = writeControl(c, { preconditions: false });
      const input = { name: zoneName(c.req.param("name")), ...c.req.valid("json") };
      return jsonResponse(c, await assignZone(database(c.env.DB), input, control));
    },
    withBodyLimit,
  );
  register(app, listZonesRoute, async (c) => jsonResponse(c, await listZones(database(c.env.DB))));
  register(app, removeZoneRoute, async (c) => {
    const name = zoneName(c.req.param("name"));
    await removeZone(database(c.env.DB), name, writeControl(c, { preconditions: false }));
    return jsonResponse(c, deleted(`zone ${name}`));
  });
  registerAccessRoutes(app);
}

/** Who may call the API and log in, what a project's containers allow, and the audit log of every write. */
function registerAccessRoutes(app: OpenAPIHono<ProxyEnv>): void {
  register(
    app,
    upsertApiUserRoute,
    async (c) => {
      const input = c.req.valid("json");
      const control = writeControl(c, { preconditions: false });
      // Such a user could never log in: that name is always checked against the administrator's password.
      if (input.username === proxySettings(c.env).PROXY_ADMIN_USERNAME) {
        throw new HttpError(400, "username: reserved for the administrator");
      }
      return jsonResponse(c, await upsertApiUser(database(c.env.DB), input, control));
    },
    withBodyLimit,
  );
  register(app, listApiUsersRoute, async (c) => jsonResponse(c, await listApiUsers(database(c.env.DB))));
  register(app, deleteApiUserRoute, async (c) => {
    await deleteApiUser(database(c.env.DB), c.req.param("username")!, writeControl(c, { preconditions: false }));
    return jsonResponse(c, deleted(`API user ${c.req.param("username")}`));
  });
  register(
    app,
    upsertUserRoute,
    async (c) => {
      const control = writeControl(c, { preconditions: false });
      return jsonResponse(c, await upsertUser(database(c.env.DB), c.req.valid("json"), control));
    },
    withBodyLimit,
  );
  register(app, listUsersRoute, async (c) => jsonResponse(c, await listUsers(database(c.env.DB))));
  register(
    app,
    permissionsRoute,
    async (c) => {
      const db = database(c.env.DB);
      const control = writeControl(c, { preconditions: true });
      const project = await resolveProject(db, c.get("caller"), c.req.param("projectLabel")!);
      const containerLabel = c.req.param("containerLabel")!;
      const { container, etag } = await setContainerPermissions(
        db,
        project,
        containerLabel,
        c.req.valid("json"),
        control,
      );
      c.header("ETag", etag);
      return jsonResponse(c, container);
    },
    withBodyLimit,
  );
  register(app, auditRoute, async (c) => {
    const { since, ...query } = c.req.valid("query");
    return jsonResponse(
      c,
      await listAudit(database(c.env.DB), { ...query, since: since === undefined ? undefined : new Date(since) }),
    );
  });
}
