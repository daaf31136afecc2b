// Project revisions: the entity tag (ETag) of a project, the If-Match preconditions its writes take, and the SQL that
// bumps a revision inside a write's own batch, refusing the whole batch when the revision moved since the tag was read.
import { sql, type SQL } from "drizzle-orm";
import { isNotNullFailure } from "../../shared/db";

/**
 * An If-Match header (RFC 9110): `*`, which holds when the project exists, or a list of entity tags, one of which must
 * be the project's current one. Weak tags are kept but never match: If-Match compares strongly.
 */
export type IfMatch = { any: true } | { tags: readonly string[] };

export interface Revisioned {
  id: number;
  revision: number;
}

/** The id is in the tag, so that a tag of one project never matches another at the same revision. */
export const projectETag = (project: Revisioned) => `"p${project.id}.r${project.revision}"`;

/** True when the write may go ahead on this project (undefined: it does not exist). */
export function preconditionHolds(ifMatch: IfMatch | undefined, project: Revisioned | undefined): boolean {
  if (ifMatch === undefined) return true;
  if (project === undefined) return false;
  return "any" in ifMatch || ifMatch.tags.includes(projectETag(project));
}

/**
 * The revision column's next value, for the SET clause of an update (or upsert) of `projects`: one more, or NULL when
 * If-Match lists none of the row's current tags. The column is NOT NULL, so that NULL fails the statement and D1
 * rolls the batch back: the check and the write are one transaction.
 */
export function nextRevision(ifMatch: IfMatch | undefined): SQL {
  if (ifMatch === undefined || "any" in ifMatch) return sql`revision + 1`;
  return sql`case when ('"p' || id || '.r' || revision || '"') in (select value from json_each(${JSON.stringify(ifMatch.tags)}))
    then revision + 1 else null end`;
}

/** True when the D1 error is the failure nextRevision() causes: If-Match named none of the row's current tags. */
export const isStaleRevision = (error: unknown): boolean => isNotNullFailure(error, "projects.revision");

/** Bumps the project's revision (guarded by If-Match) and returns the new one. */
export const revisionBump = (projectId: number, ifMatch: IfMatch | undefined) =>
  sql`update projects set revision = ${nextRevision(ifMatch)} where id = ${projectId} returning id, revision`;

/** Bumps the revision of every project `projectIds` (a subquery) selects: admin writes that show in many projects. */
export const revisionBumpWhere = (projectIds: SQL) =>
  sql`update projects set revision = revision + 1 where id in (${projectIds})`;
