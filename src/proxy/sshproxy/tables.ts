// D1 table of the generated SSH proxy versions (drizzle schema; drizzle-kit generates migrations/ from every
// tables.ts).
import { sql } from "drizzle-orm";
import { integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

/** One generated SSH proxy configuration; its accounts (JSON) and sshpiperd YAML file are its files, below. */
export const sshProxyVersions = sqliteTable("ssh_proxy_versions", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  digest: text("digest").notNull(),
  jobRunId: integer("job_run_id"),
  /** Set when the version re-ships an older one (POST /admin/sshproxy/versions/{version}/activate): that version. */
  restoredFrom: integer("restored_from"),
  warnings: text("warnings", { mode: "json" })
    .$type<string[]>()
    .notNull()
    .default(sql`'[]'`),
  createdAt: integer("created_at", { mode: "timestamp_ms" })
    .notNull()
    .default(sql`(unixepoch() * 1000)`),
});

/**
 * The files of a version (accounts.json, sshpiperd.yaml), each in one row or, past what one D1 value holds
 * (2,000,000 bytes, and a row no more), in several: its pieces in `part` order make the file.
 */
export const sshProxyVersionFiles = sqliteTable(
  "ssh_proxy_version_files",
  {
    versionId: integer("version_id")
      .notNull()
      .references(() => sshProxyVersions.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    part: integer("part").notNull().default(0),
    content: text("content").notNull(),
  },
  (table) => [uniqueIndex("ssh_proxy_version_files_part_unique").on(table.versionId, table.name, table.part)],
);
