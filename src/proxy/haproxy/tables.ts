// D1 tables of the generated HAProxy versions (drizzle schema; drizzle-kit generates migrations/ from every tables.ts).
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
   * newer version became active; rejected when validation or the agent refused it.
   */
  status: text("status", { enum: ["pending", "active", "previous", "rejected"] })
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
