// Routes of the "jobs" tag: starting the configuration and certificate jobs (any authenticated caller, master only),
// the ACME challenge answers, and (administrator only) the job history, the generated versions and the certificates.
import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { z } from "../../shared/zod";
import type { Context } from "hono";
import { database } from "../../shared/db";
import { HttpError } from "../../shared/http/errors";
import { register } from "../../shared/http/openapi";
import { NotFound, versionNotFound } from "../domain-errors";
import { getVersion, listVersions } from "../haproxy/versions";
import {
  certificatesJob,
  CONFIG_LOCK,
  genSyncJob,
  getProxyJob,
  listProxyJobs,
  MAINTENANCE_LOCK,
  runGenSyncForCaller,
  sshProxyJob,
  warningsFor,
  startDetachedJob,
} from "../jobs";
import {
  deleteProvidedCertificate,
  listCertificateSummaries,
  projectLabels,
  putProvidedCertificate,
} from "../pki/certificates";
import { certificateSummary, PROVIDED_NAME_PATTERN } from "../pki/selection";
import { findChallenge } from "../pki/acme-issuer";
import { getSshProxyInForce, getSshProxyVersion, listSshProxyVersions, sshProxySettingsOf } from "../sshproxy/versions";
import { proxySettings } from "../settings";
import { auditRemovalStatement, auditStatementReturningId, recordAudit } from "../audit/log";
import type { RecordedWithRun } from "../../jobs/enqueue";
import { deleted } from "./admin";
import { requireBasicAuth, requireMasterForJob, type ProxyEnv } from "./auth";
import { certificateExample, CERTIFICATE_NAME } from "./examples";
import { jsonResponse } from "./json";
import {
  adminErrors,
  basicAuth,
  errorResponse,
  json,
  jsonBody,
  labelParams,
  namedParam,
  pick,
  reading,
  text,
  withBodyLimit,
  writing,
} from "./openapi";
import {
  CertificateInput,
  CertificateSummary,
  HaproxyVersion,
  HaproxyVersionSummary,
  JobListQuery,
  JobRun,
  ListOfWarnings,
  MessageResult,
  SshProxyVersion,
  SshProxyVersionSummary,
} from "./schemas";
import { auditEntry, DryRunQuery, writeControl } from "./writes";

/** Starting a job: any authenticated caller, on the master instance. */
const starting = { security: basicAuth, middleware: [requireBasicAuth, requireMasterForJob] };

/**
 * A job the API ran is an accepted write: the audit log records `summary` (its kind and run, or the version it
 * restored) once the run is done, and the answer names the run in X-Job-Id.
 */
export async function recordJobStart(
  c: Context<ProxyEnv>,
  runId: number,
  summary: Record<string, unknown>,
): Promise<void> {
  await recordAudit(database(c.env.DB), auditEntry(c, { projectLabel: null, summary }));
  c.header("X-Job-Id", String(runId));
}

/**
 * A detached job the API starts: its audit entry (its kind and run) is written in the batch that records the run, so
 * that a failed entry queues nothing (and frees the lock), and is taken back if the run's message cannot be sent.
 */
async function startAuditedJob(
  c: Context<ProxyEnv>,
  input: { kind: typeof sshProxyJob.kind | typeof certificatesJob.kind; lock: string },
): Promise<void> {
  const recorded: RecordedWithRun = {
    write: (runId) =>
      auditStatementReturningId(auditEntry(c, { projectLabel: null, summary: { kind: input.kind, runId } })),
    undo: (entries) => auditRemovalStatement(entries.map((entry) => Number(entry.id))),
  };
  const runId = await startDetachedJob(c.env, { ...input, caller: c.get("caller").username, recorded });
  c.header("X-Job-Id", String(runId));
}

/** The version number in the path; anything else ("0", "1e3", "0x10", " 7") is a version that does not exist. */
export function versionParam(c: Context): number {
  const text = c.req.param("version")!;
  const version = Number(text);
  if (!/^[1-9][0-9]{0,15}$/.test(text) || !Number.isSafeInteger(version)) throw versionNotFound(text);
  return version;
}
/** The X-Job-Id header of an answer that started (or ran) a job. */
export const jobStarted = {
  headers: { "X-Job-Id": { description: "the job run (GET /admin/jobs/{id})", schema: { type: "string" as const } } },
};

const genSyncRoute = createRoute({
  method: "get",
  path: "/admin/gensynchaprx",
  operationId: "generateAndSyncHaproxy",
  tags: ["jobs"],
  summary:
    "Generates the HAProxy configuration, has the master load balancer validate and reload it, queues the slave syncs",
  description:
    "Synchronous. The bundle (haproxy.cfg, four maps and crt-list.txt, with the certificates) is checked, stored as a numbered version and " +
    "pushed to HAPROXY_AGENT_URL, whose agent runs `haproxy -c`, swaps it in and reloads; then one queued sync per slave " +
    "agent. Without an agent the version is stored and a warning says so. Shares its lock with /admin/writesshprx.",
  ...starting,
  responses: {
    200: { ...json(ListOfWarnings, "warnings"), ...jobStarted },
    ...pick(401, 405, 423),
    500: errorResponse("`Unable to reload and sync of HAProxy: <cause>`; the previous configuration stays active"),
  },
});

const writeSshProxyRoute = createRoute({
  method: "get",
  path: "/admin/writesshprx",
  operationId: "writeSshProxy",
  tags: ["jobs"],
  summary: "Starts the SSH proxy configuration job (detached: answers [] at once)",
  ...starting,
  responses: {
    200: { ...json(ListOfWarnings, "always []: the job runs from the queue"), ...jobStarted },
    ...pick(401, 405, 423),
  },
});

const maintenanceRoute = createRoute({
  method: "get",
  path: "/maintenance/start",
  operationId: "startMaintenance",
  tags: ["jobs"],
  summary: "Starts the certificate job (detached: answers 200 with an empty body at once); also run daily by cron",
  ...starting,
  responses: { 200: { description: "the job is queued", ...jobStarted }, ...pick(401, 405, 423) },
});

const challengeRoute = createRoute({
  method: "get",
  path: "/.well-known/acme-challenge/{token}",
  operationId: "answerAcmeChallenge",
  security: [],
  tags: ["jobs"],
  summary: "HTTP-01 challenge answers of pending ACME orders (HAProxy forwards this path here)",
  request: {
    params: z.object({
      token: z.string().openapi({
        param: { description: "the token of an HTTP-01 challenge the CA is checking, known only during an order" },
      }),
    }),
  },
  responses: { 200: text("the key authorization"), 404: errorResponse("no pending challenge has this token") },
});

const listJobsRoute = createRoute({
  method: "get",
  path: "/admin/jobs",
  operationId: "listJobs",
  tags: ["jobs"],
  summary: "Runs of the proxy's jobs, newest first",
  ...reading,
  request: { query: JobListQuery },
  responses: { 200: json(z.array(JobRun), "job runs"), ...pick(400, 401), ...adminErrors },
});

const getJobRoute = createRoute({
  method: "get",
  path: "/admin/jobs/{id}",
  operationId: "getJob",
  tags: ["jobs"],
  summary: "One run: kind, state, start and end times, warnings",
  ...reading,
  request: { params: labelParams("id") },
  responses: { 200: json(JobRun, "the run"), ...pick(401, 404), ...adminErrors },
});

const activeHaproxyRoute = createRoute({
  method: "get",
  path: "/admin/haproxy",
  operationId: "getActiveHaproxyVersion",
  tags: ["jobs"],
  summary: "The active HAProxy version with its files",
  ...reading,
  responses: { 200: json(HaproxyVersion, "the active version"), ...pick(401, 404), ...adminErrors },
});

const haproxyVersionsRoute = createRoute({
  method: "get",
  path: "/admin/haproxy/versions",
  operationId: "listHaproxyVersions",
  tags: ["jobs"],
  summary: "The stored HAProxy versions, newest first (HAPROXY_VERSIONS_KEPT of them, and the active one)",
  ...reading,
  responses: { 200: json(z.array(HaproxyVersionSummary), "versions"), ...pick(401), ...adminErrors },
});

const haproxyVersionRoute = createRoute({
  method: "get",
  path: "/admin/haproxy/versions/{version}",
  operationId: "getHaproxyVersion",
  tags: ["jobs"],
  summary: "One stored HAProxy version with its files",
  ...reading,
  request: { params: labelParams("version") },
  responses: { 200: json(HaproxyVersion, "the version"), ...pick(401, 404), ...adminErrors },
});

const sshProxyRoute = createRoute({
  method: "get",
  path: "/admin/sshproxy",
  operationId: "getSshProxyVersion",
  tags: ["jobs"],
  summary: "The SSH proxy configuration in force: accounts as JSON and as an sshpiperd YAML file",
  description:
    "The newest version, as far as the installation still grants it: an account whose grant was removed or whose " +
    "container moved since is left out (a user or key taken away too), with a `WARN:` each; the file is then " +
    "generated again and `digest` is that of the answer.",
  ...reading,
  responses: { 200: json(SshProxyVersion, "the latest version"), ...pick(401, 404), ...adminErrors },
});

const sshProxyVersionsRoute = createRoute({
  method: "get",
  path: "/admin/sshproxy/versions",
  operationId: "listSshProxyVersions",
  tags: ["jobs"],
  summary: "The stored SSH proxy versions, newest (the one in force) first (SSH_PROXY_VERSIONS_KEPT of them)",
  ...reading,
  responses: { 200: json(z.array(SshProxyVersionSummary), "versions"), ...pick(401), ...adminErrors },
});

const sshProxyVersionRoute = createRoute({
  method: "get",
  path: "/admin/sshproxy/versions/{version}",
  operationId: "getSshProxyVersionByNumber",
  tags: ["jobs"],
  summary: "One stored SSH proxy version: accounts as JSON and as an sshpiperd YAML file",
  ...reading,
  request: { params: labelParams("version") },
  responses: { 200: json(SshProxyVersion, "the version"), ...pick(401, 404), ...adminErrors },
});

const certificatesRoute = createRoute({
  method: "get",
  path: "/admin/certificates",
  operationId: "listCertificates",
  tags: ["jobs"],
  summary: "The certificates (ACME, provided, fallback), without their keys",
  ...reading,
  responses: { 200: json(z.array(CertificateSummary), "certificates"), ...pick(401), ...adminErrors },
});

const putCertificateRoute = createRoute({
  method: "put",
  path: "/admin/certificates/{name}",
  operationId: "putCertificate",
  tags: ["jobs"],
  summary: "Stores a provided certificate (chain and PKCS#8 key) under a name; the next gensynchaprx ships it",
  description:
    "With `projects`, the certificate serves only the domains of those projects (and is shipped only while it " +
    "serves one); without, every project's, as before. A label no project has answers 400.",
  ...writing,
  request: {
    params: namedParam("name", CERTIFICATE_NAME),
    query: DryRunQuery,
    body: jsonBody(CertificateInput, certificateExample),
  },
  responses: { 200: json(CertificateSummary, "the certificate"), ...pick(400, 413, 401, 405), ...adminErrors },
});

const deleteCertificateRoute = createRoute({
  method: "delete",
  path: "/admin/certificates/{name}",
  operationId: "deleteCertificate",
  tags: ["jobs"],
  summary: "Deletes a provided certificate",
  ...writing,
  request: { params: namedParam("name", CERTIFICATE_NAME), query: DryRunQuery },
  responses: {
    200: json(MessageResult, "payload `Deleted certificate <name>`"),
    ...pick(400, 401, 404, 405),
    ...adminErrors,
  },
});

const certificateName = (name: string) => {
  if (!PROVIDED_NAME_PATTERN.test(name))
    throw new HttpError(400, "name: must be 1 to 100 lowercase letters, digits, dots or hyphens");
  return name;
};

/** The job starts, the ACME challenge and the job runs, then the version routes, in the order the document lists. */
export function registerJobRoutes(app: OpenAPIHono<ProxyEnv>): void {
  register(app, genSyncRoute, async (c) => {
    const caller = c.get("caller");
    const { runId, notes, joined } = await runGenSyncForCaller(c.env, { caller, now: new Date() });
    await recordJobStart(c, runId, { kind: genSyncJob.kind, runId, ...(joined && { joined }) });
    return jsonResponse(c, warningsFor(caller, notes));
  });
  register(app, writeSshProxyRoute, async (c) => {
    await startAuditedJob(c, { kind: sshProxyJob.kind, lock: CONFIG_LOCK });
    return jsonResponse(c, []);
  });
  register(app, maintenanceRoute, async (c) => {
    await startAuditedJob(c, { kind: certificatesJob.kind, lock: MAINTENANCE_LOCK });
    return c.body(null, 200);
  });
  register(app, challengeRoute, async (c) => {
    const keyAuthorization = await findChallenge(database(c.env.DB), c.req.param("token")!);
    if (keyAuthorization === undefined) throw new NotFound("Unknown ACME challenge token");
    return c.text(keyAuthorization);
  });
  register(app, listJobsRoute, async (c) =>
    jsonResponse(c, await listProxyJobs(database(c.env.DB), c.req.valid("query"))),
  );
  register(app, getJobRoute, async (c) => {
    // Read as versions are: Number() would take "0x1", "1e0" or " 1" for job 1, and round a long one to another id.
    const text = c.req.param("id")!;
    if (!/^[1-9][0-9]{0,15}$/.test(text)) throw new NotFound(`Invalid job: id ${text} not existing`);
    return jsonResponse(c, await getProxyJob(database(c.env.DB), Number(text)));
  });
  registerVersionRoutes(app);
}

/** The stored HAProxy and SSH proxy versions, then the certificate inventory. */
function registerVersionRoutes(app: OpenAPIHono<ProxyEnv>): void {
  register(app, activeHaproxyRoute, async (c) => jsonResponse(c, await getVersion(database(c.env.DB))));
  register(app, haproxyVersionsRoute, async (c) => jsonResponse(c, await listVersions(database(c.env.DB))));
  register(app, haproxyVersionRoute, async (c) =>
    jsonResponse(c, await getVersion(database(c.env.DB), versionParam(c))),
  );
  register(app, sshProxyRoute, async (c) =>
    jsonResponse(c, await getSshProxyInForce(database(c.env.DB), sshProxySettingsOf(proxySettings(c.env)))),
  );
  register(app, sshProxyVersionsRoute, async (c) => jsonResponse(c, await listSshProxyVersions(database(c.env.DB))));
  register(app, sshProxyVersionRoute, async (c) =>
    jsonResponse(c, await getSshProxyVersion(database(c.env.DB), versionParam(c))),
  );
  register(app, certificatesRoute, async (c) => {
    const db = database(c.env.DB);
    const [rows, labels] = await Promise.all([listCertificateSummaries(db), projectLabels(db)]);
    return jsonResponse(
      c,
      rows.map((row) => certificateSummary(row, labels)),
    );
  });
  register(
    app,
    putCertificateRoute,
    async (c) => {
      const name = certificateName(c.req.param("name")!);
      const input = { name, ...c.req.valid("json"), now: new Date() };
      const control = writeControl(c, { preconditions: false });
      const db = database(c.env.DB);
      const row = await putProvidedCertificate(db, input, control);
      return jsonResponse(c, certificateSummary(row, await projectLabels(db)));
    },
    withBodyLimit,
  );
  register(app, deleteCertificateRoute, async (c) => {
    const control = writeControl(c, { preconditions: false });
    await deleteProvidedCertificate(database(c.env.DB), c.req.param("name")!, control);
    return jsonResponse(c, deleted(`certificate ${c.req.param("name")}`));
  });
}
