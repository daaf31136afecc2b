// Zod schemas of the proxy API: request bodies (validated by the routes) and resources (documentation only).
// The OpenAPI 3.1 document at /openapi.json is generated from these same schemas.
import { z } from "../../shared/zod";
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

export const label = z.string().regex(LABEL_PATTERN, "must be 2 to 32 lowercase letters or digits");
/** Host names are stored lower-cased: HAProxy lower-cases the Host header before looking it up. */
export const hostName = z
  .string()
  .trim()
  .toLowerCase()
  .regex(HOSTNAME_PATTERN, "must be a host name (letters, digits, hyphens, dots)");
/** A container or host address in RFC 5952 form; what it may point at is checked where it is stored (addresses.ts). */
export const ipv6 = z
  .string()
  .openapi({ format: "ipv6", description: "not loopback, link-local, multicast, metadata or unspecified" })
  .transform((text, ctx) => {
    const checked = canonicalIpv6(text);
    if (checked.ok) return checked.value;
    ctx.addIssue({ code: "custom", message: checked.error });
    return z.NEVER;
  });
export const permission = z.string().regex(PERMISSION_PATTERN, "must be a technical user name such as www-data");
const regexList = z
  .array(
    z.string().superRefine((pattern, ctx) => {
      const problem = patternProblem(pattern);
      if (problem) ctx.addIssue({ code: "custom", message: problem });
    }),
  )
  .max(MAX_PATTERNS);
export const version = z.number().int().openapi({ description: "0 after create, +1 at each update; ignored on input" });
export const id = z.number().int().positive();
/** Optional input fields: JSON null means "not given", as in the original. */
export const optional = <T extends z.ZodType>(schema: T) => schema.nullish();

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

/**
 * Most domain forwardings, and most container references, one backend write may carry. The quotas are counted only in
 * the write's batch, after checks that walk the lists: this bounds their work. It is the mass update's default bound
 * (PROXY_MASS_UPDATE_MAX_OPERATIONS) and above the default per-project quotas (2500 domains, 800 containers), so a
 * list those quotas admit is never refused by it.
 */
export const MAX_BACKEND_LIST_ITEMS = 5000;

export const BackendInput = z
  .object({
    label,
    fullname: optional(z.string().max(200)),
    port: optional(z.number().int().min(1).max(65535)).openapi({ description: "defaults to 80 on create" }),
    params: optional(z.string().max(10_000)).openapi({
      description: "HAProxy backend directives from an allow-list, every argument vetted (see docs/security.md)",
    }),
    domainForwardings: optional(z.array(DomainInput).max(MAX_BACKEND_LIST_ITEMS)).openapi({
      description: "when present, replaces the list",
    }),
    backendContainers: optional(z.array(BackendContainerInput).max(MAX_BACKEND_LIST_ITEMS)).openapi({
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

export const ZoneInput = z
  .object({ projectLabel: label.openapi({ description: "the project that alone may hold names in the zone" }) })
  .openapi("ZoneInput");

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

/**
 * Bounds of a user and of a container's SSH grants. Every grant's view carries its user's key, and writesshprx writes
 * each grant: without them one PUT of 20,000 grants made every later read of the project fail (a JSON text past the
 * runtime's largest string), and its preview ended the Worker's process.
 */
export const MAX_SSH_PUBLIC_KEY_CHARACTERS = 16_384;
export const MAX_DEFAULT_PERMISSIONS = 64;
export const MAX_PERMISSION_GRANTS = 1000;
const EMAIL_MAX = 254;

export const UserInput = z
  .object({
    email: z.email().max(EMAIL_MAX),
    fullname: optional(z.string().max(200)),
    sshPublicKey: optional(
      z
        .string()
        .trim()
        .max(MAX_SSH_PUBLIC_KEY_CHARACTERS)
        .regex(SSH_PUBLIC_KEY_PATTERN, "must be one OpenSSH public key line"),
    ),
    role: optional(z.enum(["ADMIN", "USER", "CONTACT"])).openapi({
      description: "defaults to CONTACT (SSH access only)",
    }),
    defaultPermission: optional(z.array(permission).max(MAX_DEFAULT_PERMISSIONS)),
    proxyPermission: optional(regexList),
  })
  .openapi("UserInput");
export type UserInput = z.output<typeof UserInput>;

export const PermissionGrants = z
  .array(z.object({ permission, userEmail: z.email().max(EMAIL_MAX) }))
  .max(MAX_PERMISSION_GRANTS)
  .openapi("PermissionGrants", { description: "the complete set of SSH permissions of the container" });
export type PermissionGrants = z.output<typeof PermissionGrants>;
