// D1 tables of the proxy configuration API (drizzle schema; drizzle-kit generates migrations/ from it).
// The configuration jobs (issue 7) read the same tables to generate HAProxy and SSH proxy configuration.
import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

/** Every row carries `version`: 0 on insert, +1 on each update of that row. */
const version = () => integer("version").notNull().default(0);

/** Accounts that call the API with HTTP Basic; projectPatterns are regular expressions over project labels. */
export const apiUsers = sqliteTable("api_users", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  username: text("username").notNull().unique(),
  passwordHash: text("password_hash").notNull(),
  email: text("email"),
  /** JSON array of regular expressions, each matched against the whole project label. */
  projectPatterns: text("project_patterns", { mode: "json" })
    .$type<string[]>()
    .notNull()
    .default(sql`'[]'`),
  version: version(),
  createdAt: integer("created_at", { mode: "timestamp_ms" })
    .notNull()
    .default(sql`(unixepoch() * 1000)`),
});

export const projects = sqliteTable("projects", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  label: text("label").notNull().unique(),
  fullname: text("fullname"),
  version: version(),
});

/** Machines that run containers; `hostname` prefixes HAProxy server names. */
export const hosts = sqliteTable("hosts", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  hostname: text("hostname").notNull().unique(),
  ipv6: text("ipv6").notNull(),
  version: version(),
});

/** Console and SSH users (not API users): they receive SSH access to containers through permissions. */
export const users = sqliteTable("users", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  email: text("email").notNull().unique(),
  fullname: text("fullname"),
  /** One OpenSSH public key line; written to authorized_keys by the SSH proxy job. */
  sshPublicKey: text("ssh_public_key"),
  /** ADMIN, USER or CONTACT (as in the original console; CONTACT has SSH access only). */
  role: text("role", { enum: ["ADMIN", "USER", "CONTACT"] })
    .notNull()
    .default("CONTACT"),
  /** Technical user names granted by default on new containers, e.g. ["www-data"]. */
  defaultPermission: text("default_permission", { mode: "json" })
    .$type<string[]>()
    .notNull()
    .default(sql`'[]'`),
  /** Project patterns of a console USER (regular expressions over project labels). */
  proxyPermission: text("proxy_permission", { mode: "json" })
    .$type<string[]>()
    .notNull()
    .default(sql`'[]'`),
  version: version(),
});

export const containers = sqliteTable(
  "containers",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    projectId: integer("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    label: text("label").notNull(),
    fullname: text("fullname"),
    hostId: integer("host_id")
      .notNull()
      .references(() => hosts.id),
    ipv6: text("ipv6").notNull(),
    version: version(),
  },
  (table) => [
    uniqueIndex("containers_project_label_unique").on(table.projectId, table.label),
    // One address, one container, across all projects: a tenant must not take over another's (or a shared) address.
    uniqueIndex("containers_ipv6_unique").on(table.ipv6),
    index("containers_host_idx").on(table.hostId),
  ],
);

/** SSH access: the user may log in to the container as the technical user `permission` (e.g. www-data). */
export const containerPermissions = sqliteTable(
  "container_permissions",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    containerId: integer("container_id")
      .notNull()
      .references(() => containers.id, { onDelete: "cascade" }),
    userId: integer("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    permission: text("permission").notNull(),
    version: version(),
  },
  (table) => [
    uniqueIndex("container_permissions_unique").on(table.containerId, table.userId, table.permission),
    index("container_permissions_user_idx").on(table.userId),
  ],
);

export const backends = sqliteTable(
  "backends",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    projectId: integer("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    label: text("label").notNull(),
    fullname: text("fullname"),
    port: integer("port").notNull().default(80),
    /** HAProxy lines for the backend section; `_maintenance` and `_userauth <list>` are keywords. */
    params: text("params"),
    version: version(),
  },
  (table) => [uniqueIndex("backends_project_label_unique").on(table.projectId, table.label)],
);

/** A container serving a backend; params are appended to the HAProxy server line. */
export const backendContainers = sqliteTable(
  "backend_containers",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    backendId: integer("backend_id")
      .notNull()
      .references(() => backends.id, { onDelete: "cascade" }),
    containerId: integer("container_id")
      .notNull()
      .references(() => containers.id, { onDelete: "cascade" }),
    params: text("params"),
    version: version(),
  },
  (table) => [
    uniqueIndex("backend_containers_unique").on(table.backendId, table.containerId),
    index("backend_containers_container_idx").on(table.containerId),
  ],
);

/** Host names routed to a backend; unique across all projects. */
export const domains = sqliteTable(
  "domains",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    domainName: text("domain_name").notNull().unique(),
    backendId: integer("backend_id")
      .notNull()
      .references(() => backends.id, { onDelete: "cascade" }),
    /** The certificate is (to be) obtained from the public CA by the certificate jobs. */
    publicCaCertificate: integer("public_ca_certificate", { mode: "boolean" }).notNull().default(false),
    /** A provided (non public CA) certificate covers the domain. */
    certProvided: integer("cert_provided", { mode: "boolean" }).notNull().default(false),
    /** Redirect target for the permredirect/tempredirect backends; a trailing `*` keeps the request path. */
    redirectToUrl: text("redirect_to_url"),
    version: version(),
  },
  (table) => [index("domains_backend_idx").on(table.backendId)],
);

// ---- configuration jobs (issue 7): generated versions, certificates, ACME state ----

/** One generated HAProxy bundle (haproxy.cfg and the four maps); its id is the version number. */
export const haproxyVersions = sqliteTable("haproxy_versions", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  /** sha256 over every file of the bundle, certificates included: equal digests mean equal bundles. */
  digest: text("digest").notNull(),
  /**
   * pending while the master's agent checks it; active once applied (or stored without an agent); previous after a
   * newer version became active; rejected when validation or the agent refused it.
   */
  status: text("status", { enum: ["pending", "active", "previous", "rejected"] })
    .notNull()
    .default("pending"),
  /** Why it was rejected. */
  error: text("error"),
  /** The job run that generated it. */
  jobRunId: integer("job_run_id"),
  /** Certificate files of the bundle: [{file, name}] (the PEMs stay in `certificates`). */
  certificateFiles: text("certificate_files", { mode: "json" })
    .$type<{ file: string; name: string }[]>()
    .notNull()
    .default(sql`'[]'`),
  createdAt: integer("created_at", { mode: "timestamp_ms" })
    .notNull()
    .default(sql`(unixepoch() * 1000)`),
});

/** The text files of a version, one row each (a row stays under D1's 2 MB value limit per file). */
export const haproxyVersionFiles = sqliteTable(
  "haproxy_version_files",
  {
    versionId: integer("version_id")
      .notNull()
      .references(() => haproxyVersions.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    content: text("content").notNull(),
  },
  (table) => [uniqueIndex("haproxy_version_files_unique").on(table.versionId, table.name)],
);

/**
 * Certificates with their private keys, shipped to the load balancers as `certs/<name>.pem`. ACME certificates are
 * named after their domain; provided ones are uploaded by the administrator; the fallback is the self-signed
 * default certificate HAProxy needs when nothing else matches.
 */
export const certificates = sqliteTable(
  "certificates",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    name: text("name").notNull().unique(),
    source: text("source", { enum: ["acme", "provided", "fallback"] }).notNull(),
    /** DNS names of the subjectAltName extension, lower-cased (wildcards as `*.example.com`). */
    domainNames: text("domain_names", { mode: "json" }).$type<string[]>().notNull(),
    issuer: text("issuer").notNull(),
    serialNumber: text("serial_number").notNull(),
    notBefore: integer("not_before", { mode: "timestamp_ms" }).notNull(),
    notAfter: integer("not_after", { mode: "timestamp_ms" }).notNull(),
    /** The leaf first, then the chain (PEM). */
    certificatePem: text("certificate_pem").notNull(),
    /** PKCS#8 PEM. */
    privateKeyPem: text("private_key_pem").notNull(),
    updatedAt: integer("updated_at", { mode: "timestamp_ms" })
      .notNull()
      .default(sql`(unixepoch() * 1000)`),
  },
  (table) => [index("certificates_not_after_idx").on(table.notAfter)],
);

/** The last ACME attempt per domain: keeps failing domains to one attempt a day (and less after repeated failures). */
export const certificateAttempts = sqliteTable("certificate_attempts", {
  domainName: text("domain_name").primaryKey(),
  lastAttemptAt: integer("last_attempt_at", { mode: "timestamp_ms" }).notNull(),
  /** pending while an order runs (a run that died counts as a failure), then succeeded or failed. */
  outcome: text("outcome", { enum: ["pending", "succeeded", "failed"] }).notNull(),
  consecutiveFailures: integer("consecutive_failures").notNull().default(0),
  lastError: text("last_error"),
});

/** The ACME account per directory URL: its private key (JWK) and the account URL the CA gave it. */
export const acmeAccounts = sqliteTable("acme_accounts", {
  directoryUrl: text("directory_url").primaryKey(),
  email: text("email"),
  privateJwk: text("private_jwk", { mode: "json" }).$type<JsonWebKey>().notNull(),
  accountUrl: text("account_url").notNull(),
  createdAt: integer("created_at", { mode: "timestamp_ms" })
    .notNull()
    .default(sql`(unixepoch() * 1000)`),
});

/** HTTP-01 challenges of pending orders, answered at GET /.well-known/acme-challenge/{token}. */
export const acmeChallenges = sqliteTable("acme_challenges", {
  token: text("token").primaryKey(),
  keyAuthorization: text("key_authorization").notNull(),
  domainName: text("domain_name").notNull(),
  createdAt: integer("created_at", { mode: "timestamp_ms" }).notNull(),
});

/** One generated SSH proxy configuration: the accounts as JSON and the same as an sshpiperd YAML file. */
export const sshProxyVersions = sqliteTable("ssh_proxy_versions", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  digest: text("digest").notNull(),
  jobRunId: integer("job_run_id"),
  accounts: text("accounts").notNull(),
  yaml: text("yaml").notNull(),
  warnings: text("warnings", { mode: "json" })
    .$type<string[]>()
    .notNull()
    .default(sql`'[]'`),
  createdAt: integer("created_at", { mode: "timestamp_ms" })
    .notNull()
    .default(sql`(unixepoch() * 1000)`),
});
