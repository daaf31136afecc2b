// D1 table of the proxy API's audit log (drizzle schema; drizzle-kit generates migrations/ from every tables.ts).
import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

/** One accepted write: who, when, what was called and answered, and a summary of what changed (never secrets). */
export const auditLog = sqliteTable(
  "audit_log",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    at: integer("at", { mode: "timestamp_ms" })
      .notNull()
      .default(sql`(unixepoch() * 1000)`),
    /** The Basic-auth username. */
    actor: text("actor").notNull(),
    /** Whether the actor wrote as an administrator or as a tenant. */
    role: text("role", { enum: ["admin", "tenant"] }).notNull(),
    method: text("method").notNull(),
    path: text("path").notNull(),
    status: integer("status").notNull(),
    /** The project the write changed, when it changed one (filters GET /admin/audit?project=). */
    projectLabel: text("project_label"),
    /** What changed: ids and labels, as JSON. */
    summary: text("summary", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
  },
  // GET /admin/audit lists newest first by id, so a filter's index ends with id: a page (and the `before` cursor)
  // reads only its own entries. The pruning and `since` read `at`.
  (table) => [
    index("audit_log_at_idx").on(table.at),
    index("audit_log_actor_id_idx").on(table.actor, table.id),
    index("audit_log_project_id_idx").on(table.projectLabel, table.id),
  ],
);
