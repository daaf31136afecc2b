// D1 tables of the generated HAProxy versions and of the slaves' syncs (drizzle schema; drizzle-kit generates
// migrations/ from every tables.ts).
import { sql } from "drizzle-orm";
import { integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import type { BundleNote, BundleProblem } from "./backend-sections";

/** One generated HAProxy bundle (haproxy.cfg, the four maps and the crt-list); its id is the version number. */
export const haproxyVersions = sqliteTable("haproxy_versions", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  /** sha256 over every file of the bundle, certificates included: equal digests mean equal bundles. */
  digest: text("digest").notNull(),
  /**
   * pending while the master's agent checks it; active once applied (or stored without an agent); previous after a
   * newer version became active; rejected when validation or the agent refused it; unknown when the push's answer
   * was lost and the agent could not tell what became of it (GET /admin/haproxy/status settles it). The column has
   * no CHECK constraint: a new state needs no migration.
   */
  status: text("status", { enum: ["pending", "active", "previous", "rejected", "unknown"] })
    .notNull()
    .default("pending"),
  /** Why it was rejected. */
  error: text("error"),
  /** The job run that generated it. */
  jobRunId: integer("job_run_id"),
  /** Set when the version re-ships an older one (POST /admin/haproxy/versions/{version}/activate): that version. */
  restoredFrom: integer("restored_from"),
  /** Certificate files of the bundle: [{file, name}] (the PEMs stay in `certificates`). */
  certificateFiles: text("certificate_files", { mode: "json" })
    .$type<{ file: string; name: string }[]>()
    .notNull()
    .default(sql`'[]'`),
  /** What the generation wrote without, or left out (GET /projects/{label}/deployment shows a project its own). */
  problems: text("problems", { mode: "json" })
    .$type<BundleProblem[]>()
    .notNull()
    .default(sql`'[]'`),
  /** The generation's warnings with the project each is about: a tenant who joins the run is shown its own. */
  notes: text("notes", { mode: "json" })
    .$type<BundleNote[]>()
    .notNull()
    .default(sql`'[]'`),
  createdAt: integer("created_at", { mode: "timestamp_ms" })
    .notNull()
    .default(sql`(unixepoch() * 1000)`),
});

/**
 * The text files of a version, each in one row or, past what one D1 value holds (2,000,000 bytes), in several: its
 * pieces in `part` order (0, 1, ...) make the file.
 */
export const haproxyVersionFiles = sqliteTable(
  "haproxy_version_files",
  {
    versionId: integer("version_id")
      .notNull()
      .references(() => haproxyVersions.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    part: integer("part").notNull().default(0),
    content: text("content").notNull(),
  },
  (table) => [uniqueIndex("haproxy_version_files_part_unique").on(table.versionId, table.name, table.part)],
);

/**
 * Each slave agent's latest sync (GET /admin/haproxy/status shows it): the version, how it went, the attempts, the
 * error and the next retry while the queue retries, and the highest version the agent said it runs (numbering
 * adopts it after a D1 reset).
 */
export const haproxyAgentSyncs = sqliteTable("haproxy_agent_syncs", {
  agentUrl: text("agent_url").primaryKey(),
  version: integer("version").notNull(),
  /**
   * retrying: an attempt failed and the queue retries (attempts 0: the queue refused the sync, and the sweep queues it
   * again); failed: the last attempt failed (or the last send); synced; superseded.
   */
  state: text("state", { enum: ["retrying", "failed", "synced", "superseded"] }).notNull(),
  attempts: integer("attempts").notNull().default(0),
  error: text("error"),
  nextRetryAt: integer("next_retry_at", { mode: "timestamp_ms" }),
  /** The highest version the agent said it runs (a success, or a refusal of an older one). */
  agentVersion: integer("agent_version"),
  parentRunId: integer("parent_run_id"),
  updatedAt: integer("updated_at", { mode: "timestamp_ms" }).notNull(),
});
