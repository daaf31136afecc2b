// The uploaded configuration files in D1: read their state and files, replace them, change one file or drop them all.
// Every write is one D1 batch, so isolates never see half a set.
import { and, eq, ne, sql } from "drizzle-orm";
import { isCheckFailure, type Database } from "../../shared/db";
import { ConfigSetChanged } from "../errors";
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

/** The state and the files as one snapshot (one batch), for a change to one file that must check the whole set. */
export async function readConfigSnapshot(
  db: Database,
): Promise<{ state: ConfigSetState; files: { name: string; text: string }[] }> {
  const [states, rows] = await db.batch([
    db.select({ version: ratelimitConfigState.version, source: ratelimitConfigState.source }).from(ratelimitConfigState),
    db.select().from(ratelimitConfigFiles).orderBy(ratelimitConfigFiles.name),
  ]);
  return {
    state: states[0] ?? { version: 0, source: "bundled" },
    files: rows.map((row) => ({ name: row.name, text: row.content })),
  };
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

/**
 * Fails the batch it is part of unless the set is still at `version`: it then moves the state row to id 2, which
 * the row's CHECK refuses. A change to one file was validated with the other files as they were at that version; a
 * change another request made meanwhile would leave a combination nobody validated.
 */
const unchangedSince = (db: Database, version: number) =>
  db
    .update(ratelimitConfigState)
    .set({ id: 2 })
    .where(and(eq(ratelimitConfigState.id, 1), ne(ratelimitConfigState.version, version)));

/** Runs a change to one file, answering ConfigSetChanged when the set moved past `version` meanwhile. */
async function guarded<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (isCheckFailure(error)) throw new ConfigSetChanged();
    throw error;
  }
}

/** Adds or replaces one uploaded file, if the set is still at `version`; returns the new version. */
export function putConfigFile(db: Database, file: { name: string; text: string }, version: number): Promise<number> {
  return guarded(async () => {
    const [, , state] = await db.batch([
      unchangedSince(db, version),
      db
        .insert(ratelimitConfigFiles)
        .values({ name: file.name, content: file.text })
        .onConflictDoUpdate({ target: ratelimitConfigFiles.name, set: { content: file.text } }),
      bumpState(db, "runtime"),
    ]);
    return state[0].version;
  });
}

/** Removes one uploaded file, if the set is still at `version`; returns the new version. */
export function deleteConfigFile(db: Database, name: string, version: number): Promise<number> {
  return guarded(async () => {
    const [, , state] = await db.batch([
      unchangedSince(db, version),
      db.delete(ratelimitConfigFiles).where(eq(ratelimitConfigFiles.name, name)),
      bumpState(db, "runtime"),
    ]);
    return state[0].version;
  });
}
