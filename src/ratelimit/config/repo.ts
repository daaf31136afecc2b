// The runtime configuration set in D1: read its state and files, replace it or return to the bundled files.
// Every write is one D1 batch, so isolates never see half a set.
import { sql } from "drizzle-orm";
import type { Database } from "../../shared/db";
import { ratelimitConfigFiles, ratelimitConfigState } from "./tables";

export interface ConfigSetState {
  version: number;
  source: "bundled" | "runtime";
}

export async function readConfigState(db: Database): Promise<ConfigSetState> {
  const [row] = await db
    .select({ version: ratelimitConfigState.version, source: ratelimitConfigState.source })
    .from(ratelimitConfigState)
    .limit(1);
  return row ?? { version: 0, source: "bundled" };
}

export async function readConfigFiles(db: Database): Promise<{ name: string; text: string }[]> {
  const rows = await db.select().from(ratelimitConfigFiles).orderBy(ratelimitConfigFiles.name);
  return rows.map((row) => ({ name: row.name, text: row.content }));
}

const bumpState = (db: Database, source: ConfigSetState["source"]) =>
  db
    .insert(ratelimitConfigState)
    .values({ id: 1, version: 1, source })
    .onConflictDoUpdate({
      target: ratelimitConfigState.id,
      set: { version: sql`${ratelimitConfigState.version} + 1`, source, updatedAt: sql`(unixepoch() * 1000)` },
    })
    .returning({ version: ratelimitConfigState.version });

/** Replaces the whole runtime set atomically and returns its new version. */
export async function replaceConfigFiles(db: Database, files: { name: string; text: string }[]): Promise<number> {
  const inserts = files.map((file) => db.insert(ratelimitConfigFiles).values({ name: file.name, content: file.text }));
  const results = await db.batch([db.delete(ratelimitConfigFiles), ...inserts, bumpState(db, "runtime")]);
  return (results.at(-1) as { version: number }[])[0].version;
}

/** Drops the runtime set: the bundled files are in force again everywhere. */
export async function clearConfigFiles(db: Database): Promise<number> {
  const [, state] = await db.batch([db.delete(ratelimitConfigFiles), bumpState(db, "bundled")]);
  return state[0].version;
}
