// Routes of the proxy configuration API (spec 1) and its management endpoints. Each route is documented next
// to its handler from the same zod schemas; the OpenAPI 3.1 document is served at /openapi.json, rendered at /docs.
import { OpenAPIHono, z, type RouteConfig } from "@hono/zod-openapi";
import { swaggerUI } from "@hono/swagger-ui";
import { database } from "../shared/db";
import { HttpError } from "../shared/http/errors";
import { validate } from "../shared/http/validate";
import { deleteApiUser, listApiUsers, upsertApiUser } from "./api-users";
import { requireAdmin, requireBasicAuth, requireMaster, type ProxyEnv } from "./auth";
import { resolveBackend, setContainersOf, upsertBackend } from "./backends";
import { findChallenge } from "./certificate-job";
import {
  certificateSummary,
  deleteProvidedCertificate,
  listCertificates,
  PROVIDED_NAME_PATTERN,
  putProvidedCertificate,
} from "./certificates";
import { setContainerPermissions, upsertContainer } from "./containers";
import { listDomains, massUpdateDomains } from "./domains";
import { NotFound, proxyErrorResponse } from "./errors";
import { getVersion, listVersions, runGenSyncFromApi } from "./haproxy-job";
import { CONFIG_LOCK, MAINTENANCE_LOCK } from "./job-locks";
import { getProxyJob, listProxyJobs, startDetachedJob } from "./job-runs";
import { listHosts, upsertHost } from "./hosts";
import { jsonResponse, serviceResult } from "./json";
import {
  deleteProject,
  listProjectLabels,
  listProjects,
  loadProjectTree,
  resolveProject,
  upsertProject,
} from "./projects";
import {
  ApiUser,
  ApiUserInput,
  BackendInput,
  CertificateInput,
  CertificateSummary,
  HaproxyVersion,
  HaproxyVersionSummary,
  JobListQuery,
  JobRun,
  SshProxyVersion,
  ContainerInput,
  Container,
  HostCreate,
  HostListItem,
  IdResult,
  ListOfProjects,
  ListOfWarnings,
  MapOfDomains,
  MassDomainUpdate,
  MessageResult,
  PermissionGrants,
  Project,
  ProjectInput,
  ProjectSummary,
  User,
  UserInput,
} from "./schemas";
import { proxySettings } from "./settings";
import { getSshProxyVersion } from "./ssh-proxy";
import { upsertUser, listUsers } from "./users";

export const proxyApp = new OpenAPIHono<ProxyEnv>();

/** Validates a JSON body no larger than PROXY_MAX_BODY_BYTES. */
const jsonBodyOf = <S extends z.ZodType>(schema: S) =>
  validate("json", schema, (env) => ({
    maxBytes: proxySettings(env).PROXY_MAX_BODY_BYTES,
    setting: "PROXY_MAX_BODY_BYTES",
  }));
proxyApp.onError(proxyErrorResponse);

// ---- documentation helpers ----

proxyApp.openAPIRegistry.registerComponent("securitySchemes", "user_auth", { type: "http", scheme: "basic" });

const json = (schema: z.ZodType, description: string) => ({ description, content: { "application/json": { schema } } });
const errorResponse = (description: string) => json(MessageResult, description);
const errors = {
  400: errorResponse("the body is not JSON or fails the schema (the payload names the field)"),
  401: errorResponse("credentials missing or invalid"),
  404: errorResponse("project or backend not existing or access denied"),
  405: errorResponse("writes are refused on a slave instance"),
  409: errorResponse("the address is already used by another container"),
  413: errorResponse("the body is larger than PROXY_MAX_BODY_BYTES"),
  423: errorResponse("the job (or the job sharing its lock) is already running"),
  500: errorResponse("the change could not be processed; nothing was written"),
};
const pick = <K extends keyof typeof errors>(...codes: K[]) =>
  Object.fromEntries(codes.map((code) => [code, errors[code]]));
const adminErrors = { 403: errorResponse("not the administrator") };
const labelParams = (...names: string[]) => z.object(Object.fromEntries(names.map((name) => [name, z.string()])));
const jsonBody = (schema: z.ZodType) => ({ required: true, content: { "application/json": { schema } } });
const text = (description: string) => ({ description, content: { "text/plain": { schema: z.string() } } });

function doc(route: Omit<RouteConfig, "security"> & { public?: boolean }) {
  const { public: isPublic, ...config } = route;
  proxyApp.openAPIRegistry.registerPath({ ...config, ...(isPublic ? {} : { security: [{ user_auth: [] }] }) });
}

// ---- availability ----

doc({
  method: "get",
  path: "/test/ping",
  public: true,
  tags: ["test"],
  summary: "Availability check",
  responses: { 200: text("`pong from master instance` or `pong from slave instance`") },
});
proxyApp.get("/test/ping", (c) => c.text(`pong from ${proxySettings(c.env).INSTANCE_ROLE} instance`));

doc({
  method: "get",
  path: "/test/authping",
  tags: ["test"],
  summary: "Availability and authentication check",
  responses: { 200: text("`authpong <username> from master instance`"), ...pick(401) },
});
proxyApp.get("/test/authping", requireBasicAuth, (c) =>
  c.text(`authpong ${c.get("caller").username} from ${proxySettings(c.env).INSTANCE_ROLE} instance`),
);

// ---- projects ----

doc({
  method: "get",
  path: "/projects",
  tags: ["projects"],
  summary: "Labels of the projects the caller may access, sorted",
  responses: { 200: json(ListOfProjects, "project labels"), ...pick(401) },
});
proxyApp.get("/projects", requireBasicAuth, async (c) =>
  jsonResponse(c, await listProjectLabels(database(c.env.DB), c.get("caller"))),
);

doc({
  method: "get",
  path: "/projects/{projectLabel}",
  tags: ["projects"],
  summary: "A project with its backends (domains, container references) and containers (host, permissions)",
  request: { params: labelParams("projectLabel") },
  responses: { 200: json(Project, "the project"), ...pick(401, 404) },
});
proxyApp.get("/projects/:projectLabel", requireBasicAuth, async (c) => {
  const db = database(c.env.DB);
  const project = await resolveProject(db, c.get("caller"), c.req.param("projectLabel"));
  return jsonResponse(c, await loadProjectTree(db, project));
});

// ---- domains ----

doc({
  method: "get",
  path: "/domains/{projectLabel}",
  tags: ["domains"],
  summary: "The domains of a project, keyed and sorted by domain name",
  request: { params: labelParams("projectLabel") },
  responses: { 200: json(MapOfDomains, "domains by name"), ...pick(401, 404) },
});
proxyApp.get("/domains/:projectLabel", requireBasicAuth, async (c) => {
  const db = database(c.env.DB);
  const project = await resolveProject(db, c.get("caller"), c.req.param("projectLabel"));
  return jsonResponse(c, await listDomains(db, project));
});

doc({
  method: "get",
  path: "/domains/{projectLabel}/{backendLabel}",
  tags: ["domains"],
  summary: "The domains of one backend, keyed and sorted by domain name",
  request: { params: labelParams("projectLabel", "backendLabel") },
  responses: { 200: json(MapOfDomains, "domains by name"), ...pick(401, 404) },
});
proxyApp.get("/domains/:projectLabel/:backendLabel", requireBasicAuth, async (c) => {
  const db = database(c.env.DB);
  const project = await resolveProject(db, c.get("caller"), c.req.param("projectLabel"));
  const backend = await resolveBackend(db, project, c.req.param("backendLabel"));
  return jsonResponse(c, await listDomains(db, project, backend.id));
});

doc({
  method: "post",
  path: "/domains/massupdate",
  tags: ["domains"],
  summary: "Creates, updates and deletes domains in one all-or-nothing request",
  description:
    "CREATE, UPDATE and REPLACE upsert by domain name across all projects (never moving a domain out of a project " +
    "the caller cannot access); DELETE removes a domain only from the named backend. With fullSync, only create " +
    "and update operations of one project are allowed and every other domain of that project is removed.",
  request: { body: jsonBody(MassDomainUpdate) },
  responses: { 200: json(ListOfWarnings, "warnings"), ...pick(400, 413, 401, 404, 405, 500) },
});
proxyApp.post("/domains/massupdate", requireBasicAuth, requireMaster, jsonBodyOf(MassDomainUpdate), async (c) => {
  const input = c.req.valid("json");
  const limit = proxySettings(c.env).PROXY_MASS_UPDATE_MAX_OPERATIONS;
  if (input.domainOperations.length > limit) {
    throw new HttpError(400, `domainOperations: at most ${limit} operations per request`);
  }
  return jsonResponse(c, await massUpdateDomains(database(c.env.DB), c.get("caller"), input));
});

// ---- containers and backends ----

doc({
  method: "post",
  path: "/containers/{projectLabel}",
  tags: ["containers"],
  summary: "Creates a container or updates the one with the same label in the project",
  request: { params: labelParams("projectLabel"), body: jsonBody(ContainerInput) },
  responses: {
    200: json(IdResult, "payload {key: containerId, value: <id>}"),
    ...pick(400, 401, 404, 405, 409, 413, 500),
  },
});
proxyApp.post("/containers/:projectLabel", requireBasicAuth, requireMaster, jsonBodyOf(ContainerInput), async (c) => {
  const db = database(c.env.DB);
  const project = await resolveProject(db, c.get("caller"), c.req.param("projectLabel"));
  const id = await upsertContainer(db, project, c.req.valid("json"), proxySettings(c.env).PROXY_ADDRESS_EXCEPTIONS);
  return jsonResponse(c, serviceResult({ key: "containerId", value: id }));
});

doc({
  method: "post",
  path: "/backends/{projectLabel}",
  tags: ["backends"],
  summary: "Creates a backend or updates the one with the same label in the project",
  request: { params: labelParams("projectLabel"), body: jsonBody(BackendInput) },
  responses: { 200: json(IdResult, "payload {key: backendId, value: <id>}"), ...pick(400, 413, 401, 404, 405, 500) },
});
proxyApp.post("/backends/:projectLabel", requireBasicAuth, requireMaster, jsonBodyOf(BackendInput), async (c) => {
  const db = database(c.env.DB);
  const project = await resolveProject(db, c.get("caller"), c.req.param("projectLabel"));
  const extraDirectives = proxySettings(c.env).HAPROXY_PARAMS_EXTRA_DIRECTIVES;
  const id = await upsertBackend(db, project, c.req.valid("json"), { extraDirectives });
  return jsonResponse(c, serviceResult({ key: "backendId", value: id }));
});

doc({
  method: "patch",
  path: "/backends/{projectLabel}/{backendLabel}/setContainersOf/{targetBackendLabel}",
  tags: ["backends"],
  summary: "Replaces the containers of the backend with those (and their params) of the target backend",
  request: { params: labelParams("projectLabel", "backendLabel", "targetBackendLabel") },
  responses: {
    200: json(MessageResult, "payload `Switched containers to backend <target>`"),
    ...pick(401, 404, 405, 500),
  },
});
const setContainersPath = "/backends/:projectLabel/:backendLabel/setContainersOf/:targetBackendLabel";
proxyApp.patch(setContainersPath, requireBasicAuth, requireMaster, async (c) => {
  const db = database(c.env.DB);
  const project = await resolveProject(db, c.get("caller"), c.req.param("projectLabel"));
  const backend = await resolveBackend(db, project, c.req.param("backendLabel"));
  const target = await resolveBackend(db, project, c.req.param("targetBackendLabel"));
  await setContainersOf(db, backend, target);
  return jsonResponse(c, serviceResult(`Switched containers to backend ${target.label}`));
});

// ---- management (administrator only) ----

const deleted = (what: string) => serviceResult(`Deleted ${what}`);

doc({
  method: "post",
  path: "/admin/projects",
  tags: ["admin"],
  summary: "Creates a project, or updates the fullname of the project with that label",
  request: { body: jsonBody(ProjectInput) },
  responses: { 200: json(ProjectSummary, "the project"), ...pick(400, 413, 401, 405), ...adminErrors },
});
proxyApp.post("/admin/projects", requireBasicAuth, requireAdmin, requireMaster, jsonBodyOf(ProjectInput), async (c) =>
  jsonResponse(c, await upsertProject(database(c.env.DB), c.req.valid("json"))),
);

doc({
  method: "get",
  path: "/admin/projects",
  tags: ["admin"],
  summary: "All projects, sorted by label",
  responses: { 200: json(z.array(ProjectSummary), "projects"), ...pick(401), ...adminErrors },
});
proxyApp.get("/admin/projects", requireBasicAuth, requireAdmin, async (c) =>
  jsonResponse(c, await listProjects(database(c.env.DB))),
);

doc({
  method: "delete",
  path: "/admin/projects/{label}",
  tags: ["admin"],
  summary: "Deletes a project with its backends, containers, domains and permissions",
  request: { params: labelParams("label") },
  responses: { 200: json(MessageResult, "payload `Deleted project <label>`"), ...pick(401, 404, 405), ...adminErrors },
});
proxyApp.delete("/admin/projects/:label", requireBasicAuth, requireAdmin, requireMaster, async (c) => {
  await deleteProject(database(c.env.DB), c.req.param("label"));
  return jsonResponse(c, deleted(`project ${c.req.param("label")}`));
});

doc({
  method: "post",
  path: "/admin/hosts",
  tags: ["admin"],
  summary: "Registers a host, or updates the ipv6 of the host with that name",
  request: { body: jsonBody(HostCreate) },
  responses: { 200: json(HostListItem, "the host"), ...pick(400, 413, 401, 405), ...adminErrors },
});
proxyApp.post("/admin/hosts", requireBasicAuth, requireAdmin, requireMaster, jsonBodyOf(HostCreate), async (c) =>
  jsonResponse(
    c,
    await upsertHost(database(c.env.DB), c.req.valid("json"), proxySettings(c.env).PROXY_ADDRESS_EXCEPTIONS),
  ),
);

doc({
  method: "get",
  path: "/admin/hosts",
  tags: ["admin"],
  summary: "All hosts, sorted by name",
  responses: { 200: json(z.array(HostListItem), "hosts"), ...pick(401), ...adminErrors },
});
proxyApp.get("/admin/hosts", requireBasicAuth, requireAdmin, async (c) =>
  jsonResponse(c, await listHosts(database(c.env.DB))),
);

doc({
  method: "post",
  path: "/admin/apiusers",
  tags: ["admin"],
  summary: "Creates an API user, or replaces password, email and patterns of the user with that name",
  request: { body: jsonBody(ApiUserInput) },
  responses: { 200: json(ApiUser, "the API user (never the password)"), ...pick(400, 413, 401, 405), ...adminErrors },
});
proxyApp.post("/admin/apiusers", requireBasicAuth, requireAdmin, requireMaster, jsonBodyOf(ApiUserInput), async (c) => {
  const input = c.req.valid("json");
  // Such a user could never log in: that name is always checked against the administrator's password.
  if (input.username === proxySettings(c.env).PROXY_ADMIN_USERNAME) {
    throw new HttpError(400, "username: reserved for the administrator");
  }
  return jsonResponse(c, await upsertApiUser(database(c.env.DB), input));
});

doc({
  method: "get",
  path: "/admin/apiusers",
  tags: ["admin"],
  summary: "All API users, sorted by name",
  responses: { 200: json(z.array(ApiUser), "API users"), ...pick(401), ...adminErrors },
});
proxyApp.get("/admin/apiusers", requireBasicAuth, requireAdmin, async (c) =>
  jsonResponse(c, await listApiUsers(database(c.env.DB))),
);

doc({
  method: "delete",
  path: "/admin/apiusers/{username}",
  tags: ["admin"],
  summary: "Deletes an API user",
  request: { params: labelParams("username") },
  responses: {
    200: json(MessageResult, "payload `Deleted API user <username>`"),
    ...pick(401, 404, 405),
    ...adminErrors,
  },
});
proxyApp.delete("/admin/apiusers/:username", requireBasicAuth, requireAdmin, requireMaster, async (c) => {
  await deleteApiUser(database(c.env.DB), c.req.param("username"));
  return jsonResponse(c, deleted(`API user ${c.req.param("username")}`));
});

doc({
  method: "post",
  path: "/admin/users",
  tags: ["admin"],
  summary: "Creates a console/SSH user, or updates the given fields of the user with that email",
  request: { body: jsonBody(UserInput) },
  responses: { 200: json(User, "the user"), ...pick(400, 413, 401, 405), ...adminErrors },
});
proxyApp.post("/admin/users", requireBasicAuth, requireAdmin, requireMaster, jsonBodyOf(UserInput), async (c) =>
  jsonResponse(c, await upsertUser(database(c.env.DB), c.req.valid("json"))),
);

doc({
  method: "get",
  path: "/admin/users",
  tags: ["admin"],
  summary: "All console/SSH users, sorted by email",
  responses: { 200: json(z.array(User), "users"), ...pick(401), ...adminErrors },
});
proxyApp.get("/admin/users", requireBasicAuth, requireAdmin, async (c) =>
  jsonResponse(c, await listUsers(database(c.env.DB))),
);

doc({
  method: "put",
  path: "/admin/containers/{projectLabel}/{containerLabel}/permissions",
  tags: ["admin"],
  summary: "Sets the complete list of SSH permissions of a container",
  request: {
    params: labelParams("projectLabel", "containerLabel"),
    body: jsonBody(PermissionGrants),
  },
  responses: {
    200: json(Container, "the container with its permissions"),
    ...pick(400, 413, 401, 404, 405, 500),
    ...adminErrors,
  },
});
proxyApp.put(
  "/admin/containers/:projectLabel/:containerLabel/permissions",
  requireBasicAuth,
  requireAdmin,
  requireMaster,
  jsonBodyOf(PermissionGrants),
  async (c) => {
    const db = database(c.env.DB);
    const project = await resolveProject(db, c.get("caller"), c.req.param("projectLabel"));
    return jsonResponse(
      c,
      await setContainerPermissions(db, project, c.req.param("containerLabel"), c.req.valid("json")),
    );
  },
);

// ---- configuration jobs (any authenticated caller may start them, as in the original; master only) ----

const jobId = (c: { header(name: string, value: string): void }, id: number) => c.header("X-Job-Id", String(id));
const jobStarted = {
  headers: { "X-Job-Id": { description: "the job run (GET /admin/jobs/{id})", schema: { type: "string" as const } } },
};

doc({
  method: "get",
  path: "/admin/gensynchaprx",
  tags: ["jobs"],
  summary:
    "Generates the HAProxy configuration, has the master load balancer validate and reload it, queues the slave syncs",
  description:
    "Synchronous. The bundle (haproxy.cfg and four maps, with the certificates) is checked, stored as a numbered version and " +
    "pushed to HAPROXY_AGENT_URL, whose agent runs `haproxy -c`, swaps it in and reloads; then one queued sync per slave " +
    "agent. Without an agent the version is stored and a warning says so. Shares its lock with /admin/writesshprx.",
  responses: {
    200: { ...json(ListOfWarnings, "warnings"), ...jobStarted },
    ...pick(401, 405, 423),
    500: errorResponse("`Unable to reload and sync of HAProxy: <cause>`; the previous configuration stays active"),
  },
});
proxyApp.get("/admin/gensynchaprx", requireBasicAuth, requireMaster, async (c) => {
  const { runId, warnings } = await runGenSyncFromApi(c.env, { caller: c.get("caller"), now: new Date() });
  jobId(c, runId);
  return jsonResponse(c, warnings);
});

doc({
  method: "get",
  path: "/admin/writesshprx",
  tags: ["jobs"],
  summary: "Starts the SSH proxy configuration job (detached: answers [] at once)",
  responses: {
    200: { ...json(ListOfWarnings, "always []: the job runs from the queue"), ...jobStarted },
    ...pick(401, 405, 423),
  },
});
proxyApp.get("/admin/writesshprx", requireBasicAuth, requireMaster, async (c) => {
  jobId(c, await startDetachedJob(c.env, { kind: "writesshprx", lock: CONFIG_LOCK, caller: c.get("caller").username }));
  return jsonResponse(c, []);
});

doc({
  method: "get",
  path: "/maintenance/start",
  tags: ["jobs"],
  summary: "Starts the certificate job (detached: answers 200 with an empty body at once); also run daily by cron",
  responses: { 200: { description: "the job is queued", ...jobStarted }, ...pick(401, 405, 423) },
});
proxyApp.get("/maintenance/start", requireBasicAuth, requireMaster, async (c) => {
  jobId(
    c,
    await startDetachedJob(c.env, { kind: "certificates", lock: MAINTENANCE_LOCK, caller: c.get("caller").username }),
  );
  return c.body(null, 200);
});

doc({
  method: "get",
  path: "/.well-known/acme-challenge/{token}",
  public: true,
  tags: ["jobs"],
  summary: "HTTP-01 challenge answers of pending ACME orders (HAProxy forwards this path here)",
  request: { params: labelParams("token") },
  responses: { 200: text("the key authorization"), 404: errorResponse("no pending challenge has this token") },
});
proxyApp.get("/.well-known/acme-challenge/:token", async (c) => {
  const keyAuthorization = await findChallenge(database(c.env.DB), c.req.param("token"));
  if (keyAuthorization === undefined) throw new NotFound("Unknown ACME challenge token");
  return c.text(keyAuthorization);
});

// ---- job history, generated versions and certificates (administrator only) ----

doc({
  method: "get",
  path: "/admin/jobs",
  tags: ["jobs"],
  summary: "Runs of the proxy's jobs, newest first",
  request: { query: JobListQuery },
  responses: { 200: json(z.array(JobRun), "job runs"), ...pick(400, 401), ...adminErrors },
});
proxyApp.get("/admin/jobs", requireBasicAuth, requireAdmin, validate("query", JobListQuery), async (c) =>
  jsonResponse(c, await listProxyJobs(database(c.env.DB), c.req.valid("query"))),
);

doc({
  method: "get",
  path: "/admin/jobs/{id}",
  tags: ["jobs"],
  summary: "One run: kind, state, start and end times, warnings",
  request: { params: labelParams("id") },
  responses: { 200: json(JobRun, "the run"), ...pick(401, 404), ...adminErrors },
});
proxyApp.get("/admin/jobs/:id", requireBasicAuth, requireAdmin, async (c) =>
  jsonResponse(c, await getProxyJob(database(c.env.DB), Number(c.req.param("id")))),
);

doc({
  method: "get",
  path: "/admin/haproxy",
  tags: ["jobs"],
  summary: "The active HAProxy version with its files",
  responses: { 200: json(HaproxyVersion, "the active version"), ...pick(401, 404), ...adminErrors },
});
proxyApp.get("/admin/haproxy", requireBasicAuth, requireAdmin, async (c) =>
  jsonResponse(c, await getVersion(database(c.env.DB))),
);

doc({
  method: "get",
  path: "/admin/haproxy/versions",
  tags: ["jobs"],
  summary: "The stored HAProxy versions, newest first (HAPROXY_VERSIONS_KEPT of them, and the active one)",
  responses: { 200: json(z.array(HaproxyVersionSummary), "versions"), ...pick(401), ...adminErrors },
});
proxyApp.get("/admin/haproxy/versions", requireBasicAuth, requireAdmin, async (c) =>
  jsonResponse(c, await listVersions(database(c.env.DB))),
);

doc({
  method: "get",
  path: "/admin/haproxy/versions/{version}",
  tags: ["jobs"],
  summary: "One stored HAProxy version with its files",
  request: { params: labelParams("version") },
  responses: { 200: json(HaproxyVersion, "the version"), ...pick(401, 404), ...adminErrors },
});
proxyApp.get("/admin/haproxy/versions/:version", requireBasicAuth, requireAdmin, async (c) => {
  const version = Number(c.req.param("version"));
  if (!Number.isSafeInteger(version) || version < 1)
    throw new NotFound(`Invalid version: ${c.req.param("version")} not existing`);
  return jsonResponse(c, await getVersion(database(c.env.DB), version));
});

doc({
  method: "get",
  path: "/admin/sshproxy",
  tags: ["jobs"],
  summary: "The latest SSH proxy configuration: accounts as JSON and as an sshpiperd YAML file",
  responses: { 200: json(SshProxyVersion, "the latest version"), ...pick(401, 404), ...adminErrors },
});
proxyApp.get("/admin/sshproxy", requireBasicAuth, requireAdmin, async (c) =>
  jsonResponse(c, await getSshProxyVersion(database(c.env.DB))),
);

doc({
  method: "get",
  path: "/admin/certificates",
  tags: ["jobs"],
  summary: "The certificates (ACME, provided, fallback), without their keys",
  responses: { 200: json(z.array(CertificateSummary), "certificates"), ...pick(401), ...adminErrors },
});
proxyApp.get("/admin/certificates", requireBasicAuth, requireAdmin, async (c) =>
  jsonResponse(c, (await listCertificates(database(c.env.DB))).map(certificateSummary)),
);

const certificateName = (name: string) => {
  if (!PROVIDED_NAME_PATTERN.test(name))
    throw new HttpError(400, "name: must be 1 to 100 lowercase letters, digits, dots or hyphens");
  return name;
};

doc({
  method: "put",
  path: "/admin/certificates/{name}",
  tags: ["jobs"],
  summary: "Stores a provided certificate (chain and PKCS#8 key) under a name; the next gensynchaprx ships it",
  request: { params: labelParams("name"), body: jsonBody(CertificateInput) },
  responses: { 200: json(CertificateSummary, "the certificate"), ...pick(400, 413, 401, 405), ...adminErrors },
});
proxyApp.put(
  "/admin/certificates/:name",
  requireBasicAuth,
  requireAdmin,
  requireMaster,
  jsonBodyOf(CertificateInput),
  async (c) => {
    const name = certificateName(c.req.param("name"));
    const row = await putProvidedCertificate(database(c.env.DB), { name, ...c.req.valid("json"), now: new Date() });
    return jsonResponse(c, certificateSummary(row));
  },
);

doc({
  method: "delete",
  path: "/admin/certificates/{name}",
  tags: ["jobs"],
  summary: "Deletes a provided certificate",
  request: { params: labelParams("name") },
  responses: {
    200: json(MessageResult, "payload `Deleted certificate <name>`"),
    ...pick(401, 404, 405),
    ...adminErrors,
  },
});
proxyApp.delete("/admin/certificates/:name", requireBasicAuth, requireAdmin, requireMaster, async (c) => {
  await deleteProvidedCertificate(database(c.env.DB), c.req.param("name"));
  return jsonResponse(c, deleted(`certificate ${c.req.param("name")}`));
});

// ---- the reference ----

proxyApp.doc31("/openapi.json", {
  openapi: "3.1.0",
  info: {
    title: "Proxy configuration API",
    version: "1.0.0",
    description: "Projects, backends, containers and domains of the HAProxy and SSH proxy installation (HTTP Basic).",
  },
});
proxyApp.get("/docs", swaggerUI({ url: "/openapi.json", title: "Proxy configuration API" }));
