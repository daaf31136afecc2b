// The stored HAProxy versions: each generated bundle's text files and certificate list, numbered, with its status
// (pending, active, previous, rejected, unknown) and the version it restores, if any; the number kept is bounded.
import { and, asc, desc, eq, gt, inArray, lt, ne, notInArray, sql } from "drizzle-orm";
import { jobRuns } from "../../jobs/tables";
import { filePieces, inJsonList, joinPieces, type Database } from "../../shared/db";
import { NotFound, versionNotFound } from "../domain-errors";
import { combinedPem } from "../pki/selection";
import { certificates } from "../pki/tables";
import type { BundleNote, BundleProblem } from "./backend-sections";
import { haproxyVersionFiles, haproxyVersions } from "./tables";

type VersionRow = typeof haproxyVersions.$inferSelect;

/** The columns of a version's summary: the list reads no certificate list, problems or notes it does not show. */
const summaryColumns = {
  id: haproxyVersions.id,
  digest: haproxyVersions.digest,
  status: haproxyVersions.status,
  error: haproxyVersions.error,
  jobRunId: haproxyVersions.jobRunId,
  restoredFrom: haproxyVersions.restoredFrom,
  createdAt: haproxyVersions.createdAt,
};

const versionSummary = (row: Pick<VersionRow, keyof typeof summaryColumns>) => ({
  version: row.id,
  digest: row.digest,
  status: row.status,
  error: row.error,
  jobId: row.jobRunId,
  restoredFrom: row.restoredFrom,
  createdAt: row.createdAt.toISOString(),
});

/**
 * Deletes the versions older than the newest `kept` that are neither in force nor waiting to be settled (pending,
 * unknown), nor `spared` (the version a batch activates).
 */
function pruneSettled(db: Database, kept: number, spared?: number) {
  const keep = db
    .select({ id: haproxyVersions.id })
    .from(haproxyVersions)
    .orderBy(desc(haproxyVersions.id))
    .limit(kept);
  const settled = and(
    inArray(haproxyVersions.status, ["previous", "rejected"]),
    notInArray(haproxyVersions.id, keep),
    spared === undefined ? undefined : ne(haproxyVersions.id, spared),
  );
  const dropped = db.select({ id: haproxyVersions.id }).from(haproxyVersions).where(settled);
  return [
    db.delete(haproxyVersionFiles).where(inArray(haproxyVersionFiles.versionId, dropped)),
    db.delete(haproxyVersions).where(settled),
  ] as const;
}

/** Stores the bundle's text files and certificate list as a new pending version (one D1 batch); returns its number. */
export async function storeVersion(
  db: Database,
  input: {
    digest: string;
    jobRunId: number;
    files: Record<string, string>;
    certificateFiles: { file: string; name: string }[];
    now: Date;
    problems?: BundleProblem[];
    notes?: BundleNote[];
    /** The stored version this one re-ships (POST /admin/haproxy/versions/{version}/activate). */
    restoredFrom?: number;
    /**
     * The highest version an agent said it runs: the new one is numbered past it, so that numbers never go backwards
     * for an agent after a D1 reset (a slave refuses what is older than what it runs).
     */
    agentsRun?: number;
    /**
     * How many versions D1 keeps (HAPROXY_VERSIONS_KEPT): older ones that are settled and not in force go in the same
     * batch, so that refused versions do not pile up while no version is activated (an agent that is down).
     */
    kept?: number;
  },
): Promise<number> {
  // Inside the batch (one transaction, under the job lock) the newest id is the version just inserted.
  const newest = sql`(select max(${haproxyVersions.id}) from ${haproxyVersions})`;
  // NULL lets AUTOINCREMENT number it; a number past what the agents run when D1 is behind them (its sequence, since
  // the newest rows are never pruned, is its largest id).
  const floor = input.agentsRun ?? 0;
  const id = sql`(select case when coalesce(max(${haproxyVersions.id}), 0) < ${floor} then ${floor + 1} end
    from ${haproxyVersions})`;
  const results = await db.batch([
    db.insert(haproxyVersions).values({
      id,
      digest: input.digest,
      status: "pending",
      jobRunId: input.jobRunId,
      restoredFrom: input.restoredFrom ?? null,
      certificateFiles: input.certificateFiles,
      problems: input.problems ?? [],
      notes: input.notes ?? [],
      createdAt: input.now,
    }),
    // haproxy.cfg reaches 3 MB within the installation's bounds (4,000 backends with their params): in pieces.
    ...filePieces(input.files).map((piece) => db.insert(haproxyVersionFiles).values({ versionId: newest, ...piece })),
    ...(input.kept === undefined ? [] : pruneSettled(db, input.kept)),
    db.select({ id: sql<number>`max(${haproxyVersions.id})` }).from(haproxyVersions),
  ]);
  const last = results[results.length - 1] as { id: number }[];
  return last[0].id;
}

export async function rejectVersion(db: Database, version: number, error: string) {
  await db.update(haproxyVersions).set({ status: "rejected", error }).where(eq(haproxyVersions.id, version));
}

/** The push's answer was lost and the agent could not tell what became of it: `error` says so. */
export async function markVersionUnknown(db: Database, version: number, error: string) {
  await db.update(haproxyVersions).set({ status: "unknown", error }).where(eq(haproxyVersions.id, version));
}

/** The versions whose outcome is unknown, oldest first. */
export async function unknownVersions(db: Database) {
  return db
    .select({
      id: haproxyVersions.id,
      createdAt: haproxyVersions.createdAt,
      error: haproxyVersions.error,
      jobRunId: haproxyVersions.jobRunId,
    })
    .from(haproxyVersions)
    .where(eq(haproxyVersions.status, "unknown"))
    .orderBy(haproxyVersions.id);
}

/** The highest version number stored (0 when none is). */
export async function highestVersion(db: Database): Promise<number> {
  const [row] = await db.select({ id: sql<number | null>`max(${haproxyVersions.id})` }).from(haproxyVersions);
  return row?.id ?? 0;
}

/**
 * Makes the version the active one and drops the settled versions beyond the number kept, in one batch;
 * answers "superseded" when a newer version was already in force, which then stays so (this one becomes history).
 * Version numbers are the fence: numbered under the job lock and never reused, and every agent, the master's too, is
 * pushed with onlyIfNewer and refuses to go back to a lower one, so the highest version applied is the one in force.
 * A run that lost its lock and activates late can therefore never demote what a later run made active.
 */
export async function activateVersion(db: Database, version: number, kept: number): Promise<"active" | "superseded"> {
  const newerInForce = sql`exists (select 1 from haproxy_versions as newer
    where newer.id > ${version} and newer.status in ('active', 'previous'))`;
  const [, , , , [row]] = await db.batch([
    db
      .update(haproxyVersions)
      .set({ status: "previous" })
      .where(and(eq(haproxyVersions.status, "active"), lt(haproxyVersions.id, version))),
    db
      .update(haproxyVersions)
      .set({ status: sql`case when ${newerInForce} then 'previous' else 'active' end`, error: null })
      .where(eq(haproxyVersions.id, version)),
    ...pruneSettled(db, kept, version),
    db.select({ status: haproxyVersions.status }).from(haproxyVersions).where(eq(haproxyVersions.id, version)),
  ]);
  return row?.status === "active" ? "active" : "superseded";
}

export async function listVersions(db: Database) {
  const rows = await db.select(summaryColumns).from(haproxyVersions).orderBy(desc(haproxyVersions.id));
  return rows.map(versionSummary);
}

/** The active version (or a given one) with its text files; undefined when there is none. */
export async function findVersion(db: Database, version?: number) {
  const [row] = await db
    .select()
    .from(haproxyVersions)
    .where(version === undefined ? eq(haproxyVersions.status, "active") : eq(haproxyVersions.id, version))
    .orderBy(desc(haproxyVersions.id))
    .limit(1);
  if (!row) return undefined;
  const pieces = await db
    .select({ name: haproxyVersionFiles.name, content: haproxyVersionFiles.content })
    .from(haproxyVersionFiles)
    .where(eq(haproxyVersionFiles.versionId, row.id))
    .orderBy(asc(haproxyVersionFiles.name), asc(haproxyVersionFiles.part));
  return { row, files: joinPieces(pieces) };
}

/** The number and digest of the version in force. */
export interface VersionInForce {
  version: number;
  digest: string;
}

/** The newest active version's number, digest and run: the version in force. */
async function inForceRow(db: Database) {
  const [row] = await db
    .select({ version: haproxyVersions.id, digest: haproxyVersions.digest, runId: haproxyVersions.jobRunId })
    .from(haproxyVersions)
    .where(eq(haproxyVersions.status, "active"))
    .orderBy(desc(haproxyVersions.id))
    .limit(1);
  return row;
}

/** The version in force without its files (what the load balancers' status compares with), null when none is. */
export async function activeVersionDigest(db: Database): Promise<VersionInForce | null> {
  const row = await inForceRow(db);
  return row ? { version: row.version, digest: row.digest } : null;
}

/** The version in force and the run that shipped it (null when that run is unknown); undefined when none is. */
export async function versionInForceRun(db: Database) {
  const row = await inForceRow(db);
  return row && { version: row.version, runId: row.runId };
}

/** The notes of the version a gensynchaprx run shipped (applied: in force or history); undefined when it shipped none. */
export async function notesOfRun(db: Database, runId: number) {
  const [row] = await db
    .select({ notes: haproxyVersions.notes })
    .from(haproxyVersions)
    .where(and(eq(haproxyVersions.jobRunId, runId), inArray(haproxyVersions.status, ["active", "previous"])))
    .limit(1);
  return row?.notes;
}

/** The last version a run stored, whatever became of it; undefined when it stored none. */
export async function latestVersionOfRun(db: Database, runId: number) {
  const [row] = await db
    .select({
      id: haproxyVersions.id,
      status: haproxyVersions.status,
      notes: haproxyVersions.notes,
      createdAt: haproxyVersions.createdAt,
      error: haproxyVersions.error,
      jobRunId: haproxyVersions.jobRunId,
    })
    .from(haproxyVersions)
    .where(eq(haproxyVersions.jobRunId, runId))
    .orderBy(desc(haproxyVersions.id))
    .limit(1);
  return row;
}

/** The version in force and what it wrote without, or left out, of one project's backends. */
export async function deploymentOf(db: Database, projectLabel: string) {
  const [row] = await db
    .select({ version: haproxyVersions.id, problems: haproxyVersions.problems })
    .from(haproxyVersions)
    .where(eq(haproxyVersions.status, "active"))
    .orderBy(desc(haproxyVersions.id))
    .limit(1);
  return {
    version: row?.version ?? null,
    problems: (row?.problems ?? []).filter((problem) => problem.project === projectLabel),
  };
}

/** Whether a stored version has this number (its row only, not its files). */
export async function versionExists(db: Database, version: number): Promise<boolean> {
  const [row] = await db
    .select({ id: haproxyVersions.id })
    .from(haproxyVersions)
    .where(eq(haproxyVersions.id, version))
    .limit(1);
  return row !== undefined;
}

/** A version with its text files and the certificates it ships (names and files, never keys). */
export async function getVersion(db: Database, version?: number) {
  const found = await findVersion(db, version);
  if (!found) {
    throw version === undefined ? new NotFound("No HAProxy configuration is active yet") : versionNotFound(version);
  }
  return { ...versionSummary(found.row), files: found.files, certificates: found.row.certificateFiles };
}

/**
 * Every file of a stored version as an agent gets it: its text files and its certificates as they are stored now
 * (a renewed certificate ships renewed). `missing` names the certificates that no longer exist.
 */
export async function bundleOfVersion(db: Database, row: VersionRow, textFiles: Record<string, string>) {
  const names = row.certificateFiles.map((file) => file.name);
  // One JSON parameter: a version may ship thousands of certificates, and D1 binds at most 100 parameters.
  const rows =
    names.length === 0 ? [] : await db.select().from(certificates).where(inJsonList(certificates.name, names));
  const byName = new Map(rows.map((certificate) => [certificate.name, certificate]));
  const files: Record<string, string> = { ...textFiles };
  const missing: string[] = [];
  for (const { file, name } of row.certificateFiles) {
    const certificate = byName.get(name);
    if (certificate) files[file] = combinedPem(certificate);
    else missing.push(name);
  }
  return { files, missing };
}

/**
 * The pending versions no running run owns (their run failed, finished or is gone: its worker died between the push
 * and the answer), oldest first: what the sweep settles by asking the master agent about their pushes.
 */
export async function orphanedPendingVersions(db: Database) {
  return db
    .select({
      version: haproxyVersions.id,
      digest: haproxyVersions.digest,
      createdAt: haproxyVersions.createdAt,
      jobRunId: haproxyVersions.jobRunId,
    })
    .from(haproxyVersions)
    .leftJoin(jobRuns, eq(jobRuns.id, haproxyVersions.jobRunId))
    .where(and(eq(haproxyVersions.status, "pending"), sql`coalesce(${jobRuns.state}, 'gone') <> 'running'`))
    .orderBy(haproxyVersions.id);
}

/**
 * Whether an earlier run changed ACME certificates and its gensynchaprx never shipped them (the run died before
 * queueing it, or that gensynchaprx failed for good): the version in force is older than an ACME certificate, or
 * names one that is gone. False while a gensynchaprx is queued or running, which ships them.
 */
export async function acmeChangesUndeployed(db: Database): Promise<boolean> {
  const [row] = await db.all<{ undeployed: number }>(sql`select exists(
    select 1 from ${haproxyVersions} v where v.status = 'active'
      and not exists (select 1 from ${jobRuns} r where r.kind = 'gensynchaprx' and r.state in ('queued', 'running'))
      and (exists (select 1 from ${certificates} c where c.source = 'acme' and c.updated_at > v.created_at)
        or exists (select 1 from json_each(v.certificate_files) f
          where substr(json_extract(f.value, '$.name'), 1, 5) = 'acme_'
            and json_extract(f.value, '$.name') not in (select name from ${certificates})))
  ) as undeployed`);
  return row?.undeployed === 1;
}
