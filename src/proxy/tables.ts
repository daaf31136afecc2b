// D1 tables of the proxy configuration API (drizzle schema; drizzle-kit generates migrations/ from it).
import { sql } from "drizzle-orm";
import { integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

/** Accounts that call the API with HTTP Basic; projectPatterns are regular expressions over project labels. */
export const apiUsers = sqliteTable("api_users", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  username: text("username").notNull().unique(),
  passwordHash: text("password_hash").notNull(),
  email: text("email"),
  /** JSON array of regular expressions, each matched against the whole project label. */
  projectPatterns: text("project_patterns", { mode: "json" }).$type<string[]>().notNull().default(sql`'[]'`),
  version: integer("version").notNull().default(0),
  createdAt: integer("created_at", { mode: "timestamp_ms" }).notNull().default(sql`(unixepoch() * 1000)`),
});
