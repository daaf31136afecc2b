// The audit log's repository: the statement that records an accepted write inside that write's own batch (or on its
// own, for writes without a batch of ours), the filtered and paged list of GET /admin/audit, and the bounded pruning.
import { and, desc, eq, gte, lt, SQL, sql } from "drizzle-orm";
import { commitBatch, inJsonList, type Database, type Statement } from "../../shared/db";
import { auditLog } from "./tables";

export type AuditRole = (typeof auditLog.$inferSelect)["role"];

/** One accepted write. The summary holds ids and labels only (never secrets, password hashes or keys). */
export interface AuditEntry {
  actor: string;
  role: AuditRole;
  method: string;
  path: string;
  status: number;
  projectLabel?: string | null;
  /** JSON values, or SQL evaluated in the write's batch (the id of a row it inserts, say). */
  summary: Record<string, unknown>;
  /** Defaults to now. */
  at?: Date;
  /** Records only when this SQL condition holds in the batch: a delete records nothing if the row is already gone. */
  onlyIf?: SQL;
}

/** The summary as one SQL JSON object, so that SQL values (ids the batch creates) are read inside the batch. */
function summaryObject(summary: Record<string, unknown>): SQL {
  const fields = Object.entries(summary).map(([key, value]) =>
    value instanceof SQL ? sql`${key}, (${value})` : sql`${key}, json(${JSON.stringify(value ?? null)})`,
  );
  return fields.length === 0 ? sql`json_object()` : sql`json_object(${sql.join(fields, sql`, `)})`;
}

/** The insert recording `entry`: put it in the write's batch, so that a write and its record stand or fall together. */
export function auditStatement(entry: AuditEntry): Statement {
  const at = (entry.at ?? new Date()).getTime();
  return sql`insert into audit_log (at, actor, role, method, path, status, project_label, summary)
    select ${at}, ${entry.actor}, ${entry.role}, ${entry.method}, ${entry.path}, ${entry.status},
           ${entry.projectLabel ?? null}, ${summaryObject(entry.summary)}
    where ${entry.onlyIf ?? sql`1`}`;
}

/** The insert recording `entry` that returns the entry's id, for a batch that may have to take it back. */
export const auditStatementReturningId = (entry: AuditEntry): Statement => sql`${auditStatement(entry)} returning id`;

/** Takes back the entries of those ids: a job whose start was recorded, and whose run could then not be queued. */
export const auditRemovalStatement = (ids: readonly number[]): Statement =>
  sql`delete from ${auditLog} where ${inJsonList(auditLog.id, ids)}`;

/** Records an accepted write that has no batch of ours to join (a job the API ran at once). */
export async function recordAudit(db: Database, entry: AuditEntry): Promise<void> {
  await commitBatch(db, [auditStatement(entry)]);
}

export interface AuditQuery {
  actor?: string;
  project?: string;
  since?: Date;
  /** Only entries older than this id: the cursor of the next page. */
  before?: number;
  limit: number;
}

const auditView = (row: typeof auditLog.$inferSelect) => ({
  id: row.id,
  at: row.at.toISOString(),
  actor: row.actor,
  role: row.role,
  method: row.method,
  path: row.path,
  status: row.status,
  projectLabel: row.projectLabel,
  summary: row.summary,
});

/**
 * The entries at or after `since`, as a bound on the id as well: the list walks ids downwards (newest first) and
 * without a lower bound it would read the whole log when fewer than a page match. The smallest id of those entries
 * comes from audit_log_at_idx; `+` keeps SQLite from taking min(id) by walking the rowid from the oldest entry up.
 * Times need not grow with ids (a write's time is taken before its insert), so the condition on `at` stays. The bound
 * costs a read of the index entries since `since`: what the filter asks for, not the whole log.
 */
function sinceCondition(since: Date): SQL {
  const first = sql`(SELECT min(+${auditLog.id}) FROM ${auditLog} WHERE ${gte(auditLog.at, since)})`;
  return sql`${gte(auditLog.at, since)} AND ${auditLog.id} >= ${first}`;
}

/** The statement of a page (one entry more than asked, to tell whether another page follows); exposed for tests. */
export function listAuditQuery(db: Database, query: AuditQuery) {
  // Each filter reads an index in id order: (actor, id), (project_label, id), or the table for since and no filter.
  return db
    .select()
    .from(auditLog)
    .where(
      and(
        query.actor === undefined ? undefined : eq(auditLog.actor, query.actor),
        query.project === undefined ? undefined : eq(auditLog.projectLabel, query.project),
        query.since === undefined ? undefined : sinceCondition(query.since),
        query.before === undefined ? undefined : lt(auditLog.id, query.before),
      ),
    )
    .orderBy(desc(auditLog.id))
    .limit(query.limit + 1);
}

/** Entries newest first, and the cursor of the next page when there may be one. */
export async function listAudit(db: Database, query: AuditQuery) {
  const rows = await listAuditQuery(db, query);
  const page = rows.slice(0, query.limit);
  return {
    entries: page.map(auditView),
    nextBefore: rows.length > query.limit ? page[page.length - 1].id : null,
  };
}

/**
 * Removes entries recorded before `before`, `batchSize` rows per statement and at most `maxBatches` statements, so
 * that one run never holds the database long; what is left goes the next day. Returns how many were removed.
 */
export async function pruneAudit(
  db: Database,
  input: { before: Date; batchSize: number; maxBatches: number },
): Promise<{ removed: number; more: boolean }> {
  let removed = 0;
  for (let batch = 0; batch < input.maxBatches; batch++) {
    const result = await db.$client
      .prepare(
        "delete from audit_log where id in (select id from audit_log where at < ? order by id limit ?) returning id",
      )
      .bind(input.before.getTime(), input.batchSize)
      .run();
    const count = result.results.length;
    removed += count;
    if (count < input.batchSize) return { removed, more: false };
  }
  return { removed, more: true };
}

const DAY_MS = 86_400_000;
/** Rows per delete, and deletes per run: at most 50,000 entries a day, in statements D1 runs quickly. */
const PRUNE_BATCH_SIZE = 1000;
const PRUNE_MAX_BATCHES = 50;

/** The daily pruning: entries older than `days` go; returns the run's warnings. */
export async function pruneAuditLog(db: Database, input: { now: Date; days: number }): Promise<string[]> {
  const before = new Date(input.now.getTime() - input.days * DAY_MS);
  const { removed, more } = await pruneAudit(db, {
    before,
    batchSize: PRUNE_BATCH_SIZE,
    maxBatches: PRUNE_MAX_BATCHES,
  });
  // A run that hits its cap means entries come in faster than a day's pruning removes: the log then grows for good,
  // so the run says so as a warning, for an operator to see, not as information.
  if (more) {
    return [
      `WARN: removed ${removed} audit entries older than ${input.days} days, the most a run removes; older ones remain, the next run goes on`,
    ];
  }
  return [`INFO: removed ${removed} audit entries older than ${input.days} days`];
}
