// The stored HAProxy versions: each generated bundle's text files and certificate list, numbered, with its status
// (pending, active, previous, rejected); the number kept is bounded.
import { and, desc, eq, inArray, ne, notInArray, sql } from "drizzle-orm";
import type { Database } from "../../shared/db";
import { NotFound } from "../errors";
import { haproxyVersionFiles, haproxyVersions } from "./tables";

type VersionRow = typeof haproxyVersions.$inferSelect;

const versionSummary = (row: VersionRow) => ({
  version: row.id,
  digest: row.digest,
  status: row.status,
  error: row.error,
  jobId: row.jobRunId,
  createdAt: row.createdAt.toISOString(),
});

/** Stores the bundle's text files and certificate list as a new pending version (one D1 batch); returns its number. */
export async function storeVersion(
  db: Database,
  input: {
    digest: string;
    jobRunId: number;
    files: Record<string, string>;
    certificateFiles: { file: string; name: string }[];
    now: Date;
  },
): Promise<number> {
  // Inside the batch (one transaction, under the job lock) the newest id is the version just inserted.
  const newest = sql`(select max(${haproxyVersions.id}) from ${haproxyVersions})`;
  const results = await db.batch([
    db.insert(haproxyVersions).values({
      digest: input.digest,
      status: "pending",
      jobRunId: input.jobRunId,
      certificateFiles: input.certificateFiles,
      createdAt: input.now,
    }),
    ...Object.entries(input.files).map(([name, content]) =>
      db.insert(haproxyVersionFiles).values({ versionId: newest, name, content }),
    ),
    db.select({ id: sql<number>`max(${haproxyVersions.id})` }).from(haproxyVersions),
  ]);
  const last = results[results.length - 1] as { id: number }[];
  return last[0].id;
}

export async function rejectVersion(db: Database, version: number, error: string) {
  await db.update(haproxyVersions).set({ status: "rejected", error }).where(eq(haproxyVersions.id, version));
}

/** Makes the version the active one and drops versions beyond the number kept (never the active one). */
export async function activateVersion(db: Database, version: number, kept: number) {
  const keep = db
    .select({ id: haproxyVersions.id })
    .from(haproxyVersions)
    .orderBy(desc(haproxyVersions.id))
    .limit(kept);
  const dropped = sql`(select ${haproxyVersions.id} from ${haproxyVersions}
    where ${haproxyVersions.id} <> ${version} and ${haproxyVersions.id} not in ${keep})`;
  await db.batch([
    db
      .update(haproxyVersions)
      .set({ status: "previous" })
      .where(and(eq(haproxyVersions.status, "active"), ne(haproxyVersions.id, version))),
    db.update(haproxyVersions).set({ status: "active", error: null }).where(eq(haproxyVersions.id, version)),
    db.delete(haproxyVersionFiles).where(inArray(haproxyVersionFiles.versionId, dropped)),
    db.delete(haproxyVersions).where(and(ne(haproxyVersions.id, version), notInArray(haproxyVersions.id, keep))),
  ]);
}

export async function listVersions(db: Database) {
  const rows = await db.select().from(haproxyVersions).orderBy(desc(haproxyVersions.id));
  return rows.map(versionSummary);
}

/** A version with its text files and the certificates it ships (names and files, never keys). */
export async function getVersion(db: Database, version?: number) {
  const [row] = await db
    .select()
    .from(haproxyVersions)
    .where(version === undefined ? eq(haproxyVersions.status, "active") : eq(haproxyVersions.id, version))
    .orderBy(desc(haproxyVersions.id))
    .limit(1);
  if (!row) {
    throw new NotFound(
      version === undefined ? "No HAProxy configuration is active yet" : `Invalid version: ${version} not existing`,
    );
  }
  const files = await db.select().from(haproxyVersionFiles).where(eq(haproxyVersionFiles.versionId, row.id));
  return {
    ...versionSummary(row),
    files: Object.fromEntries(files.map((file) => [file.name, file.content])),
    certificates: row.certificateFiles,
  };
}
