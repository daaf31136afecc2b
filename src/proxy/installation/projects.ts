// Projects: access checks, the full project tree (also what the configuration jobs read), and administration.
import { asc, eq, inArray, sql } from "drizzle-orm";
import type { Database } from "../../shared/db";
import { mayAccessProject, type Caller } from "./api-users";
import { invalidProject, NotFound } from "../domain-errors";
import type { ProjectInput } from "./inputs";
import {
  backendContainers,
  backends,
  containerPermissions,
  containers,
  domains,
  hosts,
  projects,
  users,
} from "./tables";
import { projectETag } from "./revisions";
import type { ProjectRow } from "./rows";
import { backendView, byText, containerView, projectViewOf, type ProjectView } from "./views";
import { commitWrite, DELETED_A_ROW, nextId, tableRow, type WriteControl } from "./writes";

/** Labels of the projects the caller may see, sorted. */
export async function listProjectLabels(db: Database, caller: Caller): Promise<string[]> {
  const rows = await db.select({ label: projects.label }).from(projects);
  return rows
    .map((row) => row.label)
    .filter((label) => mayAccessProject(caller, label))
    .sort(byText);
}

/**
 * The project with this label if the caller may see it. A missing project and a forbidden one get the same
 * 404, so the answer does not reveal which projects exist.
 */
export async function resolveProject(db: Database, caller: Caller, label: string): Promise<ProjectRow> {
  if (!mayAccessProject(caller, label)) throw invalidProject(label);
  const [row] = await db.select().from(projects).where(eq(projects.label, label)).limit(1);
  if (!row) throw invalidProject(label);
  return row;
}

/**
 * Loads whole project trees (backends with domains and container references, containers with host and
 * permissions with users) in one D1 round trip, sorted by label. Without an id it loads every project: the
 * configuration jobs read the installation this way.
 */
export async function loadProjectTrees(db: Database, projectId?: number): Promise<ProjectView[]> {
  return (await loadTrees(db, projectId)).views;
}

/** The trees with the project rows they were read with (same round trip: the revision matches the tree). */
async function loadTrees(db: Database, projectId?: number): Promise<{ rows: ProjectRow[]; views: ProjectView[] }> {
  const [projectRows, backendRows, domainRows, referenceRows, containerRows, hostRows, permissionRows, userRows] =
    await readTreeRows(db, projectId);

  const hostById = new Map(hostRows.map((row) => [row.id, row]));
  const userById = new Map(userRows.map((row) => [row.id, row]));
  const domainsOf = groupBy(
    domainRows.sort((a, b) => byText(a.domainName, b.domainName)),
    (domain) => domain.backendId,
  );
  const referencesOf = groupBy(
    referenceRows.sort((a, b) => a.containerId - b.containerId),
    (reference) => reference.backendId,
  );
  const permissionsOf = groupBy(
    permissionRows
      .map((permission) => ({ permission, user: userById.get(permission.userId)! }))
      .sort((a, b) => byText(a.user.email, b.user.email) || byText(a.permission.permission, b.permission.permission)),
    (row) => row.permission.containerId,
  );
  const backendsOf = groupBy(
    backendRows.sort((a, b) => byText(a.label, b.label)),
    (backend) => backend.projectId,
  );
  const containersOf = groupBy(
    containerRows.sort((a, b) => byText(a.label, b.label)),
    (container) => container.projectId,
  );

  const views = projectRows.map((project) =>
    projectViewOf(
      project.label,
      project.fullname,
      project.version,
      (backendsOf.get(project.id) ?? []).map((backend) =>
        backendView(project.label, backend, domainsOf.get(backend.id) ?? [], referencesOf.get(backend.id) ?? []),
      ),
      (containersOf.get(project.id) ?? []).map((container) =>
        containerView(project.label, container, hostById.get(container.hostId)!, permissionsOf.get(container.id) ?? []),
      ),
    ),
  );
  return { rows: projectRows, views };
}

/** Every table of the trees, of one project or of all, in one round trip. */
function readTreeRows(db: Database, projectId?: number) {
  // Single-table selects only: in a D1 batch, rows come back as objects, so joined columns of the same name
  // (id, version, ipv6) would overwrite each other. The tree is assembled here instead.
  const all = projectId === undefined;
  const backendIds = sql`(select ${backends.id} from ${backends} where ${backends.projectId} = ${projectId})`;
  const containerIds = sql`(select ${containers.id} from ${containers} where ${containers.projectId} = ${projectId})`;
  const hostIds = sql`(select ${containers.hostId} from ${containers} where ${containers.projectId} = ${projectId})`;
  const userIds = sql`(select ${containerPermissions.userId} from ${containerPermissions}
    where ${containerPermissions.containerId} in ${containerIds})`;
  return db.batch([
    db
      .select()
      .from(projects)
      .where(all ? undefined : eq(projects.id, projectId))
      .orderBy(asc(projects.label)),
    db
      .select()
      .from(backends)
      .where(all ? undefined : eq(backends.projectId, projectId)),
    db
      .select()
      .from(domains)
      .where(all ? undefined : inArray(domains.backendId, backendIds)),
    db
      .select()
      .from(backendContainers)
      .where(all ? undefined : inArray(backendContainers.backendId, backendIds)),
    db
      .select()
      .from(containers)
      .where(all ? undefined : eq(containers.projectId, projectId)),
    db
      .select()
      .from(hosts)
      .where(all ? undefined : inArray(hosts.id, hostIds)),
    db
      .select()
      .from(containerPermissions)
      .where(all ? undefined : inArray(containerPermissions.containerId, containerIds)),
    db
      .select()
      .from(users)
      .where(all ? undefined : inArray(users.id, userIds)),
  ]);
}

function groupBy<T, K>(items: T[], keyOf: (item: T) => K): Map<K, T[]> {
  const groups = new Map<K, T[]>();
  for (const item of items) {
    const key = keyOf(item);
    const group = groups.get(key);
    if (group) group.push(item);
    else groups.set(key, [item]);
  }
  return groups;
}

export async function loadProjectTree(db: Database, project: ProjectRow): Promise<ProjectView> {
  return (await loadProjectState(db, project)).tree;
}

/** The project's tree and its ETag, read together. */
export async function loadProjectState(
  db: Database,
  project: ProjectRow,
): Promise<{ tree: ProjectView; etag: string }> {
  const { rows, views } = await loadTrees(db, project.id);
  if (!views[0]) throw invalidProject(project.label);
  return { tree: views[0], etag: projectETag(rows[0]) };
}

// ---- administration ----

const projectSummary = (row: ProjectRow) => ({ label: row.label, fullname: row.fullname, version: row.version });

/**
 * Creates the project, or updates its fullname (when given) if the label exists. Returns the project (after a dry run:
 * as the write would leave it) and its new ETag.
 */
export async function upsertProject(db: Database, input: ProjectInput, control: WriteControl = {}) {
  const [existing] = await db.select().from(projects).where(eq(projects.label, input.label)).limit(1);
  const summary = {
    action: existing ? "update" : "create",
    projectId: existing ? existing.id : sql`(select id from ${projects} where ${projects.label} = ${input.label})`,
    fields: input.fullname == null ? [] : ["fullname"],
  };
  const { rows } = await commitWrite(db, control, {
    what: "Unable to process project update",
    // An update bumps the revision before (checked against If-Match); a project created meanwhile has it bumped here.
    projects: existing ? [existing] : [],
    preconditions: [{ label: input.label, project: existing }],
    statements: [
      db
        .insert(projects)
        .values({ label: input.label, fullname: input.fullname ?? null })
        .onConflictDoUpdate({
          target: projects.label,
          set: {
            fullname: sql`coalesce(excluded.fullname, ${projects.fullname})`,
            version: sql`${projects.version} + 1`,
            ...(existing ? {} : { revision: sql`${projects.revision} + 1` }),
          },
        })
        .returning(),
    ],
    changes: [{ projectLabel: input.label, summary }],
  });
  const row: ProjectRow = rows
    ? tableRow(projects, rows[0][0])
    : existing
      ? {
          ...existing,
          fullname: input.fullname ?? existing.fullname,
          version: existing.version + 1,
          revision: existing.revision + 1,
        }
      : {
          id: await nextId(db, "projects"),
          label: input.label,
          fullname: input.fullname ?? null,
          version: 0,
          revision: 0,
        };
  return { project: projectSummary(row), etag: projectETag(row) };
}

export async function listProjects(db: Database) {
  const rows = await db.select().from(projects).orderBy(asc(projects.label));
  return rows.map(projectSummary);
}

/** Deletes the project with its backends, containers, domains and permissions (foreign keys cascade). */
export async function deleteProject(db: Database, label: string, control: WriteControl = {}): Promise<void> {
  const [existing] = await db.select().from(projects).where(eq(projects.label, label)).limit(1);
  const missing = () => new NotFound(`Invalid project: label ${label} not existing`);
  if (!existing) throw missing();
  const { rows } = await commitWrite(db, control, {
    what: "Unable to process project delete",
    projects: [existing],
    statements: [db.delete(projects).where(eq(projects.id, existing.id)).returning({ id: projects.id })],
    changes: [{ projectLabel: label, summary: { projectId: existing.id }, onlyIf: DELETED_A_ROW }],
  });
  if (rows && rows[0].length === 0) throw missing();
}
