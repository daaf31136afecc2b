// Zod schemas of the resources the proxy API answers with (documentation only), beside the request bodies of
// installation/inputs.ts. The OpenAPI 3.1 document at /openapi.json is generated from these same schemas.
import { z } from "@hono/zod-openapi";
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
    proxyPermission: z.array(z.string()),
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
  limit: z.coerce.number().int().min(1).max(500).default(50),
});

export const HaproxyVersionSummary = z
  .object({
    version: id,
    digest: z.string().openapi({ description: "sha256 over every file of the bundle, certificates included" }),
    status: z.enum(["pending", "active", "previous", "rejected"]),
    error: z.string().optional(),
    jobId: id.optional(),
    createdAt: isoTime,
  })
  .openapi("HaproxyVersionSummary");

export const HaproxyVersion = HaproxyVersionSummary.extend({
  files: z.record(z.string(), z.string()).openapi({ description: "haproxy.cfg and the four maps" }),
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

export const SshProxyVersion = z
  .object({
    version: id,
    digest: z.string(),
    jobId: id.optional(),
    createdAt: isoTime,
    warnings: ListOfWarnings,
    accounts: z.array(SshAccount),
    yaml: z.string().openapi({ description: "the same accounts as an sshpiperd yaml plugin file" }),
  })
  .openapi("SshProxyVersion");

export const CertificateSummary = z
  .object({
    name: z.string(),
    source: z.enum(["acme", "provided", "fallback"]),
    file: z.string(),
    domainNames: z.array(z.string()),
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
  })
  .openapi("CertificateInput");
