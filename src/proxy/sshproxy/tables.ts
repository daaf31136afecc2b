// D1 table of the generated SSH proxy versions (drizzle schema; drizzle-kit generates migrations/ from every
// tables.ts).
import { sql } from "drizzle-orm";
import { integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

/** One generated SSH proxy configuration: the accounts as JSON and the same as an sshpiperd YAML file. */
export const sshProxyVersions = sqliteTable("ssh_proxy_versions", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  digest: text("digest").notNull(),
  jobRunId: integer("job_run_id"),
  /** Set when the version re-ships an older one (POST /admin/sshproxy/versions/{version}/activate): that version. */
  restoredFrom: integer("restored_from"),
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
