// Zod schemas of the proxy API: request bodies (validated by the routes) and resources (documentation only).
// The OpenAPI 3.1 document at /openapi.json is generated from these same schemas.
import { z } from "@hono/zod-openapi";
import { canonicalIpv6 } from "./addresses";
import { LABEL_PATTERN, MAX_PATTERNS, patternProblem } from "./project-patterns";

/** Labels appear in HAProxy backend names and Linux account names `<project>-<container>_<permission>`. */
export { LABEL_PATTERN };
const HOSTNAME_PATTERN =
  /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/;
/** Technical user names on containers (Linux user names such as www-data or root). */
const PERMISSION_PATTERN = /^[a-z0-9_][a-z0-9_-]{1,31}$/;
const SSH_KEY_TYPE =
  "(?:ssh-(?:rsa|ed25519|dss)|ecdsa-sha2-nistp(?:256|384|521)|sk-(?:ssh-ed25519|ecdsa-sha2-nistp256)@openssh\\.com)";
/** One key line: type, base64 body, optional comment; no line breaks, which would add authorized_keys lines. */
const SSH_PUBLIC_KEY_PATTERN = new RegExp(`^${SSH_KEY_TYPE} [A-Za-z0-9+/]+={0,3}(?: [^\\r\\n]{0,200})?$`);

const label = z.string().regex(LABEL_PATTERN, "must be 2 to 32 lowercase letters or digits");
/** Host names are stored lower-cased: HAProxy lower-cases the Host header before looking it up. */
const hostName = z
  .string()
  .trim()
  .toLowerCase()
  .regex(HOSTNAME_PATTERN, "must be a host name (letters, digits, hyphens, dots)");
/** A container or host address in RFC 5952 form; what it may point at is checked where it is stored (addresses.ts). */
const ipv6 = z
  .string()
  .openapi({ format: "ipv6", description: "not loopback, link-local, multicast, metadata or unspecified" })
  .transform((text, ctx) => {
    const checked = canonicalIpv6(text);
    if (checked.ok) return checked.value;
    ctx.addIssue({ code: "custom", message: checked.error });
    return z.NEVER;
  });
const permission = z.string().regex(PERMISSION_PATTERN, "must be a technical user name such as www-data");
const regexList = z
  .array(
    z.string().superRefine((pattern, ctx) => {
      const problem = patternProblem(pattern);
      if (problem) ctx.addIssue({ code: "custom", message: problem });
    }),
  )
  .max(MAX_PATTERNS);
const version = z.number().int().openapi({ description: "0 after create, +1 at each update; ignored on input" });
const id = z.number().int().positive();
/** Optional input fields: JSON null means "not given", as in the original. */
const optional = <T extends z.ZodType>(schema: T) => schema.nullish();

// ---- request bodies ----

export const HostInput = z
  .object({ hostname: optional(hostName), ipv6: optional(ipv6), version: optional(version) })
  .openapi("HostReference");

export const ContainerInput = z
  .object({
    label,
    fullname: optional(z.string().max(200)),
    hostId: optional(id),
    hostname: optional(hostName),
    host: optional(HostInput),
    ipv6: optional(ipv6),
    containerPermissions: optional(z.array(z.unknown())).openapi({
      description: "[] changes nothing; a non-empty list is refused (changing permissions is disabled)",
    }),
    version: optional(version),
  })
  .openapi("ContainerInput");
export type ContainerInput = z.output<typeof ContainerInput>;

export const DomainInput = z
  .object({
    domainName: hostName,
    publicCaCertificate: optional(z.boolean()),
    certProvided: optional(z.boolean()),
    redirectToUrl: optional(z.string().max(2000)),
    backendLabel: optional(z.string()).openapi({ description: "ignored: the domain belongs to the posted backend" }),
    version: optional(version),
  })
  .openapi("DomainInput");
export type DomainInput = z.output<typeof DomainInput>;

export const BackendContainerInput = z
  .object({
    containerId: id,
    backendId: optional(id).openapi({ description: "ignored" }),
    params: optional(z.string().max(2000)).openapi({
      description: "one line of allow-listed HAProxy server options, none naming a file (see docs/security.md)",
    }),
    version: optional(version),
  })
  .openapi("BackendContainerInput");

export const BackendInput = z
  .object({
    label,
    fullname: optional(z.string().max(200)),
    port: optional(z.number().int().min(1).max(65535)).openapi({ description: "defaults to 80 on create" }),
    params: optional(z.string().max(10_000)).openapi({
      description: "HAProxy backend directives from an allow-list, every argument vetted (see docs/security.md)",
    }),
    domainForwardings: optional(z.array(DomainInput)).openapi({ description: "when present, replaces the list" }),
    backendContainers: optional(z.array(BackendContainerInput)).openapi({
      description: "when present, replaces the list",
    }),
    version: optional(version),
  })
  .openapi("BackendInput");
export type BackendInput = z.output<typeof BackendInput>;

export const DomainOperation = z
  .object({
    operation: z.enum(["CREATE", "UPDATE", "REPLACE", "DELETE"]).openapi({
      description: "CREATE, UPDATE and REPLACE are one upsert by domain name",
    }),
    domainName: hostName,
    projectLabel: z.string().min(1),
    backendLabel: z.string().min(1),
    enableSSL: optional(z.boolean()).openapi({ description: "missing means false" }),
    redirectToUrl: optional(z.string().max(2000)).openapi({
      description: "http or https URL; a trailing * (or /*) keeps the request path",
    }),
  })
  .openapi("DomainOperation");
export type DomainOperation = z.output<typeof DomainOperation>;

export const MassDomainUpdate = z
  .object({
    fullSync: optional(z.boolean()).openapi({
      description: "when true, every other domain of the one project is removed",
    }),
    domainOperations: z.array(DomainOperation),
  })
  .openapi("MassDomainUpdate");
export type MassDomainUpdate = z.output<typeof MassDomainUpdate>;

export const ProjectInput = z.object({ label, fullname: optional(z.string().max(200)) }).openapi("ProjectInput");
export type ProjectInput = z.output<typeof ProjectInput>;

export const HostCreate = z.object({ hostname: hostName, ipv6 }).openapi("HostInput");
export type HostCreate = z.output<typeof HostCreate>;

export const ApiUserInput = z
  .object({
    username: z.string().regex(/^[A-Za-z0-9._@-]{1,64}$/, "must be 1 to 64 letters, digits or . _ @ -"),
    password: z.string().min(8).max(1024),
    email: optional(z.email()),
    projectPatterns: regexList.openapi({
      description:
        "RE2 regular expressions (at most 64 of 256 characters), each matched against the whole project label",
    }),
  })
  .openapi("ApiUserInput");
export type ApiUserInput = z.output<typeof ApiUserInput>;

export const UserInput = z
  .object({
    email: z.email(),
    fullname: optional(z.string().max(200)),
    sshPublicKey: optional(z.string().trim().regex(SSH_PUBLIC_KEY_PATTERN, "must be one OpenSSH public key line")),
    role: optional(z.enum(["ADMIN", "USER", "CONTACT"])).openapi({
      description: "defaults to CONTACT (SSH access only)",
    }),
    defaultPermission: optional(z.array(permission)),
    proxyPermission: optional(regexList),
  })
  .openapi("UserInput");
export type UserInput = z.output<typeof UserInput>;

export const PermissionGrants = z
  .array(z.object({ permission, userEmail: z.email() }))
  .openapi("PermissionGrants", { description: "the complete set of SSH permissions of the container" });
export type PermissionGrants = z.output<typeof PermissionGrants>;

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
    kind: z.enum(["gensynchaprx", "haproxy-slave-sync", "writesshprx", "certificates"]),
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
  kind: z.enum(["gensynchaprx", "haproxy-slave-sync", "writesshprx", "certificates"]).optional(),
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
