// Zod schemas of the resources the proxy API answers with (documentation only), beside the request bodies of
// installation/inputs.ts. The OpenAPI 3.1 document at /openapi.json is generated from these same schemas.
import { z } from "../../shared/zod";
import { integerParam } from "../../shared/zod-params";
import { id, ipv6, label, optional, permission, version } from "../installation/inputs";
import { PROXY_JOB_KINDS } from "../jobs";

// ---- resources (responses) ----

export const ListOfWarnings = z.array(z.string()).openapi("ListOfWarnings");
export const ListOfProjects = z.array(z.string()).openapi("ListOfProjects");

export const Host = z.object({ hostname: z.string(), ipv6: z.string(), version }).openapi("Host");
export const HostListItem = Host.extend({ hostId: id }).openapi("HostListItem");

export const Domain = z
  .object({
    domainName: z.string(),
    backendLabel: z.string(),
    publicCaCertificate: z.boolean(),
    certProvided: z.boolean(),
    redirectToUrl: z.string().optional(),
    version,
  })
  .openapi("Domain");
export const MapOfDomains = z.record(z.string(), Domain).openapi("MapOfDomains");

export const BackendContainer = z
  .object({ containerId: id, backendId: id, params: z.string().optional(), version })
  .openapi("BackendContainer");

export const Backend = z
  .object({
    label: z.string(),
    FQLabel: z.string(),
    fullname: z.string().optional(),
    projectId: id,
    port: z.number().int(),
    params: z.string().optional(),
    globalBackend: z.boolean(),
    domainForwardings: z.array(Domain),
    backendContainers: z.array(BackendContainer),
    version,
  })
  .openapi("Backend");

export const User = z
  .object({
    email: z.string(),
    fullname: z.string().optional(),
    sshPublicKey: z.string().optional(),
    role: z.string(),
    defaultPermission: z.array(z.string()),
    proxyPermission: z
      .array(z.string())
      .optional()
      .openapi({
        description:
          "the patterns of the projects the user may manage; in a project's tree only the administrator reads them " +
          "(they name other projects)",
      }),
    version,
  })
  .openapi("User");

export const ContainerPermission = z
  .object({
    permission: z.string(),
    containerId: id,
    userId: id,
    user: User,
    sshProxyUsername: z.string(),
    version,
  })
  .openapi("ContainerPermission");

export const Container = z
  .object({
    label: z.string(),
    FQLabel: z.string(),
    fullname: z.string().optional(),
    projectId: id,
    hostId: id,
    host: Host,
    ipv6: z.string(),
    containerPermissions: z.array(ContainerPermission),
    version,
  })
  .openapi("Container");

export const Project = z
  .object({
    label: z.string(),
    fullname: z.string().optional(),
    backends: z.array(Backend),
    containers: z.array(Container),
    version,
  })
  .openapi("Project");

export const Zone = z
  .object({
    name: z.string(),
    projectLabel: z.string().openapi({ description: "the project that alone may hold names equal to or under it" }),
    version,
  })
  .openapi("Zone");

export const ProjectSummary = z
  .object({ label: z.string(), fullname: z.string().optional(), version })
  .openapi("ProjectSummary");

export const ApiUser = z
  .object({ username: z.string(), email: z.string().optional(), projectPatterns: z.array(z.string()), version })
  .openapi("ApiUser");

export const IdResult = z
  .object({
    success: z.literal(true),
    payload: z.object({ key: z.string(), value: id }),
    warnings: ListOfWarnings,
  })
  .openapi("IdResult");

export const MessageResult = z
  .object({ success: z.boolean(), payload: z.string(), warnings: ListOfWarnings })
  .openapi("MessageResult", { description: "success false with the reason on errors" });

// ---- configuration jobs ----

const isoTime = z.string().openapi({ description: "ISO 8601 time (UTC)" });

export const JobRun = z
  .object({
    id,
    kind: z.enum(PROXY_JOB_KINDS),
    state: z.enum(["queued", "running", "succeeded", "failed"]),
    trigger: z.string().openapi({ description: "api (<user>), a cron expression, or the run that queued it" }),
    attempts: z.number().int(),
    createdAt: isoTime,
    startedAt: isoTime.optional(),
    endedAt: isoTime.optional(),
    warnings: ListOfWarnings,
    error: z.string().optional(),
  })
  .openapi("JobRun");

export const JobListQuery = z.object({
  kind: z.enum(PROXY_JOB_KINDS).optional(),
  limit: integerParam(1, 500).default(50),
});

// ---- audit log ----

export const AuditQuery = z.object({
  actor: z.string().min(1).max(200).optional().openapi({ description: "only this user name's writes" }),
  project: z.string().min(1).max(100).optional().openapi({ description: "only writes that changed this project" }),
  since: z.iso
    .datetime({ offset: true })
    .optional()
    .openapi({ description: "ISO 8601 date-time (`2025-01-31T00:00:00Z`): only entries recorded then or later" }),
  // An id is a D1 integer read into a JavaScript number, so the safe-integer limit is the largest an id can be.
  before: integerParam(1, Number.MAX_SAFE_INTEGER)
    .optional()
    .openapi({ description: "only entries older than this id: the `nextBefore` of the previous page" }),
  limit: integerParam(1, 500).default(100),
});

export const AuditEntry = z
  .object({
    id,
    at: isoTime,
    actor: z.string().openapi({ description: "the Basic-auth user name" }),
    role: z.enum(["admin", "tenant"]),
    method: z.string(),
    path: z.string(),
    status: z.number().int(),
    projectLabel: z.string().optional().openapi({ description: "the project the write changed, when one" }),
    summary: z
      .record(z.string(), z.unknown())
      .openapi({ description: "what changed: ids and labels, never secrets, password hashes or keys" }),
  })
  .openapi("AuditEntry");

export const AuditPage = z
  .object({
    entries: z.array(AuditEntry),
    nextBefore: id.optional().openapi({ description: "pass as `before` for the next page; absent on the last one" }),
  })
  .openapi("AuditPage");

export const HaproxyVersionSummary = z
  .object({
    version: id,
    digest: z.string().openapi({ description: "sha256 over every file of the bundle, certificates included" }),
    status: z.enum(["pending", "active", "previous", "rejected", "unknown"]).openapi({
      description:
        "unknown: the push's answer was lost and the agent could not tell what became of it; GET " +
        "/admin/haproxy/status settles it",
    }),
    error: z.string().optional(),
    jobId: id.optional(),
    restoredFrom: id.optional().openapi({ description: "the version this one re-ships (POST .../activate)" }),
    createdAt: isoTime,
  })
  .openapi("HaproxyVersionSummary");

export const HaproxyVersion = HaproxyVersionSummary.extend({
  files: z.record(z.string(), z.string()).openapi({ description: "haproxy.cfg, the four maps and crt-list.txt" }),
  certificates: z
    .array(z.object({ file: z.string(), name: z.string() }))
    .openapi({ description: "certificate files shipped (keys stay in D1)" }),
}).openapi("HaproxyVersion");

export const SshAccount = z
  .object({
    name: z.string(),
    project: z.string(),
    container: z.string(),
    permission: z.string(),
    target: z.object({ user: z.string(), host: z.string(), port: z.number().int() }),
    users: z.array(z.string()),
    authorizedKeys: z.array(z.string()),
  })
  .openapi("SshAccount");

export const SshProxyVersionSummary = z
  .object({
    version: id,
    digest: z.string(),
    jobId: id.optional(),
    restoredFrom: id.optional().openapi({ description: "the version this one stores again (POST .../activate)" }),
    createdAt: isoTime,
  })
  .openapi("SshProxyVersionSummary");

export const SshProxyVersion = SshProxyVersionSummary.extend({
  warnings: ListOfWarnings,
  accounts: z.array(SshAccount),
  yaml: z.string().openapi({ description: "the same accounts as an sshpiperd yaml plugin file" }),
}).openapi("SshProxyVersion");

export const CertificateSummary = z
  .object({
    name: z.string(),
    source: z.enum(["acme", "provided", "fallback"]),
    file: z.string(),
    domainNames: z.array(z.string()),
    projects: z
      .array(z.string())
      .optional()
      .openapi({ description: "a provided certificate's projects, by label: it serves only their domains" }),
    issuer: z.string(),
    serialNumber: z.string(),
    notBefore: isoTime,
    notAfter: isoTime,
  })
  .openapi("CertificateSummary");

export const CertificateInput = z
  .object({
    certificatePem: z.string().min(1).max(100_000).openapi({ description: "the certificate, then its chain (PEM)" }),
    privateKeyPem: z.string().min(1).max(20_000).openapi({ description: "its key as PKCS#8 PEM (BEGIN PRIVATE KEY)" }),
    projects: optional(z.array(label).max(1000)).openapi({
      description: "labels of the projects whose domains it may serve; absent or null: every project",
    }),
  })
  .openapi("CertificateInput");

// ---- operations: previews, load balancer status ----

const previewFields = {
  version: id.nullable().openapi({ description: "the version in force the diff is against; null when none is" }),
  digest: z.string().openapi({ description: "the previewed configuration's digest, as its version would have it" }),
  changed: z.boolean().openapi({ description: "whether storing it would change the digest of the version in force" }),
  diff: z.string().openapi({ description: "unified diff (as `diff -u`) from the version in force to the preview" }),
  validation: z.string().nullable().openapi({ description: "why valid is false (haproxy's output) or null" }),
};

export const HaproxyProblem = z
  .object({
    project: z.string(),
    backend: z.string().openapi({ description: "the backend's label" }),
    kind: z.enum(["params", "server-params", "server-address", "certificate", "excluded"]).openapi({
      description:
        "params: the backend's params were left out; server-params: a server's params were; server-address: a " +
        "server was left out for its address; certificate: a domain is served over http only, no certificate " +
        "covering it; excluded: the load balancer's `haproxy -c` refused the backend's section, so the backend was " +
        "left out and its domains answer 503 (the message quotes HAProxy's reason)",
    }),
    message: z.string(),
  })
  .openapi("HaproxyProblem");

export const ProjectDeployment = z
  .object({
    version: z.number().int().nullable().openapi({ description: "the HAProxy version in force; null when none is" }),
    problems: z.array(HaproxyProblem).openapi({
      description: "what that version wrote without, or left out, of this project's backends",
    }),
  })
  .openapi("ProjectDeployment");

export const HaproxyPreview = z
  .object({
    ...previewFields,
    files: z.record(z.string(), z.string()).openapi({ description: "haproxy.cfg, the four maps and crt-list.txt" }),
    certificates: z
      .array(z.object({ file: z.string(), name: z.string() }))
      .openapi({ description: "certificate files it would ship (keys stay in D1)" }),
    valid: z.boolean().nullable().openapi({
      description:
        "the master agent's `haproxy -c` verdict (nothing applied); null when no agent is configured or it could not answer",
    }),
    problems: z.array(HaproxyProblem).openapi({
      description:
        "backends left out (refused by the load balancer or for stored params the vetting refuses), servers left out (their address or params), and domains without a certificate",
    }),
    warnings: ListOfWarnings,
  })
  .openapi("HaproxyPreview");

export const SshProxyPreview = z
  .object({
    ...previewFields,
    files: z
      .record(z.string(), z.string())
      .openapi({ description: "accounts.json (the accounts, indented) and sshpiperd.yaml" }),
    valid: z.null().openapi({ description: "always null: no agent checks an SSH proxy configuration" }),
    problems: ListOfWarnings.openapi({ description: "users without a key, accounts left out" }),
  })
  .openapi("SshProxyPreview");

export const LoadBalancerStatus = z
  .object({
    role: z.enum(["master", "slave"]),
    agentUrl: z.string().nullable(),
    state: z.enum(["in-sync", "modified", "outdated", "unreachable", "not-configured"]).openapi({
      description:
        "modified: the files on disk differ from what the agent applied (edited by hand); outdated: it runs another version",
    }),
    inSync: z.boolean().openapi({ description: "the files on its disk are the version in force" }),
    version: id.nullable().openapi({ description: "the version the agent last applied" }),
    digest: z.string().nullable().openapi({ description: "digest of the files on its disk, recomputed when asked" }),
    expectedVersion: id.nullable().openapi({ description: "the version in force" }),
    expectedDigest: z.string().nullable(),
    lastAppliedAt: isoTime.nullable(),
    lastError: z.string().nullable().openapi({
      description: "the agent's last failed apply since its last success, or why it could not be asked",
    }),
    lastErrorAt: isoTime.nullable(),
    unknownVersions: z.array(id).openapi({
      description:
        "master only (empty for slaves): versions whose push's answer was lost and that the agent could not settle yet",
    }),
    sync: z
      .object({
        version: id,
        state: z.enum(["retrying", "failed", "synced", "superseded"]).openapi({
          description:
            "retrying: an attempt failed and the queue retries at nextRetryAt (attempts 0: the queue refused the " +
            "sync, and the first sweep from nextRetryAt queues it again); failed: the last attempt failed (attempts " +
            "0: the queue refused the last send); superseded: not pushed (no longer active, or the slave runs a " +
            "newer version)",
        }),
        attempts: z
          .number()
          .int()
          .openapi({ description: "the attempt this state comes from (0: none was made, the queue refused the sync)" }),
        error: z.string().nullable(),
        nextRetryAt: isoTime.nullable(),
        at: isoTime,
      })
      .nullable()
      .openapi({
        description: "slaves only: the latest sync the queue ran or refused (null for the master, or before any)",
      }),
  })
  .openapi("LoadBalancerStatus");
