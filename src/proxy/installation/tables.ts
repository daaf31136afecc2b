// D1 tables of the installation the proxy configuration API manages (drizzle schema; drizzle-kit generates
// migrations/ from every tables.ts). The configuration jobs read them to generate HAProxy and SSH proxy configuration.
import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import type {
  AllTrue,
  BackendContainerRow,
  BackendRow,
  ContainerPermissionRow,
  ContainerRow,
  DomainRow,
  HostRow,
  ProjectRow,
  SameType,
  UserRow,
} from "./rows";

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
  /**
   * Bumped by every write that changes anything of the project (its row, backends, containers, domains or links), in
   * the write's own batch: the project's ETag, and what If-Match compares.
   */
  revision: integer("revision").notNull().default(0),
});

/** Machines that run containers; `hostname` prefixes HAProxy server names. */
export const hosts = sqliteTable(
  "hosts",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    hostname: text("hostname").notNull().unique(),
    ipv6: text("ipv6").notNull(),
    version: version(),
  },
  // A container may not take a host's address: every container write looks the address up here.
  (table) => [index("hosts_ipv6_idx").on(table.ipv6)],
);

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
    /**
     * The name's labels in reverse order (`example.beta-corp.login`), written with every insert: the names under a
     * domain are one range of this index (ownership.ts). Null only in rows written past the API.
     */
    reversedName: text("reversed_name"),
  },
  (table) => [
    index("domains_backend_idx").on(table.backendId),
    index("domains_reversed_name_idx").on(table.reversedName),
  ],
);

/**
 * DNS zones the administrator assigned to a project: a name equal to or under the zone may be held by that project
 * only (the innermost zone decides), whoever writes it.
 */
export const zones = sqliteTable("zones", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  name: text("name").notNull().unique(),
  /** As domains.reversed_name: the zones under a name are one range of this index. */
  reversedName: text("reversed_name").notNull().unique(),
  projectId: integer("project_id")
    .notNull()
    .references(() => projects.id, { onDelete: "cascade" }),
  version: version(),
});

/**
 * What each project holds, kept by triggers (migrations/0011) on every insert, update and delete of its rows, so
 * that a write checks its quota, and the installation's bound, by reading one row per project instead of counting.
 */
export const projectUsage = sqliteTable("project_usage", {
  projectId: integer("project_id")
    .primaryKey()
    .references(() => projects.id, { onDelete: "cascade" }),
  backends: integer("backends").notNull().default(0),
  containers: integer("containers").notNull().default(0),
  domains: integer("domains").notNull().default(0),
  /** Domains asking for a public CA certificate: each brings its ACME certificate into every generation. */
  publicCaDomains: integer("public_ca_domains").notNull().default(0),
  /** Container links (backend_containers): the servers of the generated backends. */
  servers: integer("servers").notNull().default(0),
  /** UTF-8 bytes of the backends' params and of their links' server params. */
  paramsBytes: integer("params_bytes").notNull().default(0),
});

/** Fails to compile when rows.ts (the shapes the pure generators use) drifts from the tables above. */
export type InstallationRowsMatch = AllTrue<
  [
    SameType<ProjectRow, typeof projects.$inferSelect>,
    SameType<HostRow, typeof hosts.$inferSelect>,
    SameType<UserRow, typeof users.$inferSelect>,
    SameType<ContainerRow, typeof containers.$inferSelect>,
    SameType<ContainerPermissionRow, typeof containerPermissions.$inferSelect>,
    SameType<BackendRow, typeof backends.$inferSelect>,
    SameType<BackendContainerRow, typeof backendContainers.$inferSelect>,
    // reversedName serves the writes' ownership checks only: the generators never read it.
    SameType<DomainRow, Omit<typeof domains.$inferSelect, "reversedName">>,
  ]
>;
