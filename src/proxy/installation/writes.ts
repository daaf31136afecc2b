// How every write of the proxy API is committed: one D1 batch holding the revision bumps of the projects it changes
// (guarded by If-Match: 412 when stale), the write's own statements, its guards (quotas, names) and its audit entries. A dry run sends the same
// batch ended by a statement that always fails, so that D1 checks every constraint and guard, then rolls it all back.
import { getTableColumns, sql, type SQL, type Table } from "drizzle-orm";
import {
  commitBatch,
  inJsonList,
  isConstraintFailure,
  isNotNullFailure,
  type Database,
  type Statement,
} from "../../shared/db";
import type { DomainError } from "../../shared/domain-errors";
import { CannotProcess, PreconditionFailed } from "../domain-errors";
import { guardAnswer, guardStatement, isLostRace, type Guard } from "./guards";
import type { Limits } from "./quotas";
import {
  preconditionHolds,
  projectETag,
  revisionBump,
  isStaleRevision,
  type IfMatch,
  type Revisioned,
} from "./revisions";
import { projects } from "./tables";

/**
 * What one accepted write changed, for the audit log: the project, when one, and ids and labels (never secrets). A
 * value may be SQL evaluated inside the batch, such as the id of a row the batch inserts.
 */
export interface AuditChange {
  projectLabel: string | null;
  summary: Record<string, unknown>;
  /** Recorded only when this holds in the batch, right after the plan's statements (see DELETED_A_ROW). */
  onlyIf?: SQL;
}

/**
 * For a delete whose plan is that one statement: recorded only when it removed a row (SQLite's changes() counts the
 * rows of the statement just before), so that a row a concurrent request removed first records nothing.
 */
export const DELETED_A_ROW = sql`changes() > 0`;

/** How the caller wants a write done; empty is a plain write. */
export interface WriteControl {
  ifMatch?: IfMatch;
  dryRun?: boolean;
  /**
   * The administrator writes: a container's SSH grants survive its address change, and domain names pass the rule on
   * other projects' neighbours (zones bind everybody). Absent: a tenant's write.
   */
  byAdministrator?: boolean;
  /** The quotas and the installation's bounds (./quotas.ts), for everybody's writes; absent: none. */
  limits?: Limits;
  /** The audit entry of one change, as a statement of the write's batch. */
  record?: (change: AuditChange) => Statement;
}

export interface ProjectRef extends Revisioned {
  label: string;
}

export interface WritePlan {
  /** Names the write in the 500 that a conflicting concurrent change causes; absent when its route names it. */
  what?: string;
  /** Projects whose revision the batch bumps before anything else, each checked against If-Match. */
  projects: readonly ProjectRef[];
  /** What If-Match is checked against when that is not `projects` (a project that does not exist yet, say). */
  preconditions?: readonly { label: string; project: Revisioned | undefined }[];
  statements: Statement[];
  /** Rules checked in the batch once the statements ran (./guards.ts): a refusal rolls the write back. */
  guards?: readonly Guard[];
  changes: readonly AuditChange[];
  /** The answer to a constraint failure that is the caller's to explain (an address in use, say). */
  conflict?: (error: unknown) => DomainError | undefined;
}

export interface WriteResult {
  /** The rows each statement of the plan returned; undefined after a dry run, which keeps none. */
  rows: Record<string, unknown>[][] | undefined;
  /** The ETag of each bumped project after the write (after a dry run: the one it would have), by project id. */
  etags: Map<number, string>;
}

/** Always fails (projects.label is NOT NULL), and last in a dry run's batch: reaching it means all else passed. */
const DRY_RUN_END = sql`insert into projects (label) values (null)`;
const isDryRunEnd = (error: unknown) => isNotNullFailure(error, "projects.label");

/** The 412 for the first project whose precondition fails (missing, or its current tag not listed), if any. */
function failedPrecondition(
  ifMatch: IfMatch | undefined,
  checked: readonly { label: string; project: Revisioned | undefined }[],
): PreconditionFailed | undefined {
  const failed = checked.find(({ project }) => !preconditionHolds(ifMatch, project));
  if (!failed) return undefined;
  if (!failed.project) return new PreconditionFailed(`Precondition failed: project ${failed.label} does not exist`);
  const etag = projectETag(failed.project);
  return new PreconditionFailed(
    `Precondition failed: If-Match names no current ETag of project ${failed.label} (it is ${etag}), nothing was changed`,
    etag,
  );
}

/**
 * The 412 after the batch's guard refused, with the tags as they are now. Revisions only grow, so a project whose
 * guard failed fails the check again; should a client have listed a tag ahead of time, the first project is named.
 */
async function stalePrecondition(db: Database, ifMatch: IfMatch | undefined, touched: readonly ProjectRef[]) {
  const ids = touched.map((project) => project.id);
  const rows = await db
    .select({ id: projects.id, revision: projects.revision })
    .from(projects)
    .where(inJsonList(projects.id, ids));
  const byId = new Map(rows.map((row) => [row.id, row]));
  const checked = touched.map((project) => ({ label: project.label, project: byId.get(project.id) }));
  const first = checked[0].project;
  return (
    failedPrecondition(ifMatch, checked) ??
    new PreconditionFailed(
      `Precondition failed: project ${touched[0].label} changed during the request, nothing was changed`,
      first && projectETag(first),
    )
  );
}

/**
 * Commits the plan as one all-or-nothing D1 batch (or checks it and rolls it back: a dry run). If-Match is checked
 * here, after the request's own validation: a request that fails anyway answers that failure, not 412.
 */
export async function commitWrite(db: Database, control: WriteControl, plan: WritePlan): Promise<WriteResult> {
  // Checked first against what the request read (a clear 412 before any write), then by the batch's guard.
  const failed = failedPrecondition(
    control.ifMatch,
    plan.preconditions ?? plan.projects.map((project) => ({ label: project.label, project })),
  );
  if (failed) throw failed;
  const bumps = plan.projects.map((project) => revisionBump(project.id, control.ifMatch));
  const audits = control.record ? plan.changes.map(control.record) : [];
  const guards = (plan.guards ?? []).map(guardStatement);
  const batch = [...bumps, ...plan.statements, ...guards, ...audits, ...(control.dryRun ? [DRY_RUN_END] : [])];
  try {
    const results = await commitBatch(db, batch);
    const bumped = results.slice(0, bumps.length).flat() as unknown as Revisioned[];
    return {
      rows: results.slice(bumps.length, bumps.length + plan.statements.length),
      etags: new Map(bumped.map((row) => [row.id, projectETag(row)])),
    };
  } catch (error) {
    if (control.dryRun && isDryRunEnd(error)) {
      const next = plan.projects.map((project) => ({ id: project.id, revision: project.revision + 1 }));
      return { rows: undefined, etags: new Map(next.map((project) => [project.id, projectETag(project)])) };
    }
    if (isStaleRevision(error)) throw await stalePrecondition(db, control.ifMatch, plan.projects);
    const refused = guardAnswer(error, plan.guards ?? []);
    if (refused) throw refused;
    const explained = plan.conflict?.(error);
    if (explained) throw explained;
    if (isConstraintFailure(error) || isLostRace(error)) {
      const reason = "a concurrent change conflicted with this request, nothing was changed";
      throw new CannotProcess(plan.what === undefined ? reason : `${plan.what}: ${reason}`);
    }
    throw error;
  }
}

/**
 * A row a statement of the batch returned, as drizzle would have read it (JSON, dates, booleans): the batch runs on
 * D1 directly, whose rows carry column names and stored values.
 */
export function tableRow<T extends Table>(table: T, raw: Record<string, unknown>): T["$inferSelect"] {
  const row: Record<string, unknown> = {};
  for (const [key, column] of Object.entries(getTableColumns(table))) {
    const value = raw[column.name];
    row[key] = value === null || value === undefined ? null : column.mapFromDriverValue(value);
  }
  return row as T["$inferSelect"];
}

/** The id the next row of an AUTOINCREMENT table gets: what a dry run answers for a create. */
export async function nextId(db: Database, table: "projects" | "backends" | "containers" | "hosts"): Promise<number> {
  const row = await db.$client
    .prepare("select coalesce((select seq from sqlite_sequence where name = ?), 0) + 1 as id")
    .bind(table)
    .first<{ id: number }>();
  return row!.id;
}

/** At most this many ids or names of one kind go into an audit summary; the rest are counted. */
const AUDIT_LIST_LIMIT = 50;

/** A list for an audit summary, cut at AUDIT_LIST_LIMIT with a last entry counting what was left out. */
export function listed<T extends string | number | object>(items: readonly T[]): (T | string)[] {
  if (items.length <= AUDIT_LIST_LIMIT) return [...items];
  return [...items.slice(0, AUDIT_LIST_LIMIT), `... and ${items.length - AUDIT_LIST_LIMIT} more`];
}
