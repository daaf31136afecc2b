// D1 tables of the rate limit service: the runtime configuration set that replaces the bundled YAML.
import { sql } from "drizzle-orm";
import { check, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

/** The files of the runtime configuration set (empty while the bundled files are in force). */
export const ratelimitConfigFiles = sqliteTable("ratelimit_config_files", {
  name: text("name").primaryKey(),
  content: text("content").notNull(),
});

/**
 * One row: which set is in force and its version. Isolates poll this row to pick up a change, so a
 * new set replaces the old one everywhere without reading the files on every check.
 */
export const ratelimitConfigState = sqliteTable(
  "ratelimit_config_state",
  {
    id: integer("id").primaryKey(),
    version: integer("version").notNull(),
    source: text("source", { enum: ["bundled", "runtime"] }).notNull(),
    updatedAt: integer("updated_at", { mode: "timestamp_ms" })
      .notNull()
      .default(sql`(unixepoch() * 1000)`),
  },
  (table) => [check("single_row", sql`${table.id} = 1`)],
);
