// Containers: create-or-update by label within a project, and the administrator's SSH permission grants.
import { and, eq, notInArray, sql } from "drizzle-orm";
import { isUniqueFailure, type Database } from "../../shared/db";
import { canonicalIpv6, vetContainerAddress, type Ipv6Network } from "./addresses";
import { inJsonList, type Statement } from "./bulk";
import { CannotProcess, Conflict, Invalid, NotFound } from "../domain-errors";
import { loadProjectTree } from "./projects";
import { stillHolds, type Guard } from "./guards";
import { quotaGuards } from "./quotas";
import type { ContainerRow, ProjectRow } from "./rows";
import type { ContainerInput, PermissionGrants } from "./inputs";
import { containerPermissions, containers, hosts, users } from "./tables";
import { byText, containerView, sshProxyUsername } from "./views";
import { commitWrite, listed, nextId, type WriteControl } from "./writes";

/** Linux refuses longer user names, and every permission becomes an account on the SSH proxy. */
const MAX_ACCOUNT_NAME = 32;

async function resolveHost(db: Database, input: ContainerInput): Promise<number | undefined> {
  const hostname = input.host?.hostname ?? input.hostname;
  if (hostname != null) {
    const [row] = await db.select({ id: hosts.id }).from(hosts).where(eq(hosts.hostname, hostname)).limit(1);
    if (!row) throw new CannotProcess(`Invalid host: name ${hostname} not existing or access denied`);
    return row.id;
  }
  if (input.hostId != null) {
    const [row] = await db.select({ id: hosts.id }).from(hosts).where(eq(hosts.id, input.hostId)).limit(1);
    if (!row) throw new CannotProcess(`Invalid host: id ${input.hostId} not existing or access denied`);
    return row.id;
  }
  return undefined;
}

/** The address as stored, or a 400 naming why HAProxy and the SSH proxy may not connect to it. */
export function storableAddress(ipv6: string, exceptions: readonly Ipv6Network[]): string {
  const checked = vetContainerAddress(ipv6, exceptions);
  if (!checked.ok) throw new Invalid(`ipv6: ${checked.error}`);
  return checked.value;
}

/** The answer to a unique index refusing the write: the index is the check, with no race between check and write. */
function containerConflict(input: ContainerInput) {
  return (error: unknown) => {
    if (isUniqueFailure(error, "containers.ipv6")) {
      return new Conflict(`Invalid container: address ${input.ipv6} is already used by another container`);
    }
    if (isUniqueFailure(error, "containers.project_id, containers.label")) {
      return new CannotProcess(
        "Unable to process container create: a concurrent change conflicted with this request, nothing was changed",
      );
    }
    return undefined;
  };
}

/** Refuses (in the write's batch) an address a registered host has: traffic and SSH logins would reach the host. */
const notAHostsAddress = (ipv6: string): Guard => ({
  refusal: sql`(select 'host' from ${hosts} where ${hosts.ipv6} = ${ipv6} limit 1)`,
  answer: () => new Conflict(`Invalid container: address ${ipv6} is the address of a registered host`),
});

/** Whether the stored address (perhaps from before addresses were stored canonical) is another than `ipv6`. */
export function addressChanges(stored: string, ipv6: string | null | undefined): ipv6 is string {
  if (ipv6 == null) return false;
  const canonical = canonicalIpv6(stored);
  return (canonical.ok ? canonical.value : stored) !== ipv6;
}

/**
 * Creates the container, or updates the one with the same label in the project (only the fields given). Returns its
 * id, the project's new ETag and the warnings of the answer. A non-empty containerPermissions list and a refused
 * address are refused before anything is written, a host's address by the write's batch.
 */
export async function upsertContainer(
  db: Database,
  project: ProjectRow,
  input: ContainerInput,
  addressExceptions: readonly Ipv6Network[] = [],
  control: WriteControl = {},
): Promise<{ id: number; etag: string; warnings: string[] }> {
  if (input.containerPermissions && input.containerPermissions.length > 0) {
    throw new CannotProcess("Changing container permissions is currently disabled for security reasons");
  }
  if (input.ipv6 != null) storableAddress(input.ipv6, addressExceptions);
  const [existing] = await db
    .select()
    .from(containers)
    .where(and(eq(containers.projectId, project.id), eq(containers.label, input.label)))
    .limit(1);
  const hostId = await resolveHost(db, input);
  const fields = (["fullname", "ipv6"] as const).filter((field) => input[field] != null);
  const changed = {
    fields: hostId === undefined ? fields : [...fields, "host"],
    ...(hostId !== undefined && { hostId }),
    ...(input.ipv6 != null && { ipv6: input.ipv6 }),
  };

  if (!existing) {
    if (hostId === undefined) throw new CannotProcess("Invalid host: no hostname or host id available in input");
    if (input.ipv6 == null) throw new CannotProcess("Invalid container: no ipv6 address available in input");
    const newId = sql`(select id from containers where project_id = ${project.id} and label = ${input.label})`;
    const { rows, etags } = await commitWrite(db, control, {
      projects: [project],
      statements: [
        db
          .insert(containers)
          .values({
            projectId: project.id,
            label: input.label,
            fullname: input.fullname ?? null,
            hostId,
            ipv6: input.ipv6,
          })
          .returning({ id: containers.id }),
      ],
      guards: [notAHostsAddress(input.ipv6), ...quotaGuards(control.limits, [{ project, measures: ["containers"] }])],
      changes: [
        {
          projectLabel: project.label,
          summary: { action: "create", containerLabel: input.label, containerId: newId, ...changed },
        },
      ],
      conflict: containerConflict(input),
    });
    const id = rows ? (rows[0][0].id as number) : await nextId(db, "containers");
    return { id, etag: etags.get(project.id)!, warnings: [] };
  }
  return updateContainer(db, project, existing, input, { hostId, changed }, control);
}

/**
 * The deletion of the container's SSH grants when, as the batch runs, its stored address is another than `ipv6`: it
 * runs before the update. Decided in the batch, not from the request's read: the address may have changed meanwhile
 * (the administrator's move keeps the grants), and a write back to the address read would carry them along. The
 * address as read is kept too when it is `ipv6` in another spelling (stored before addresses were stored canonical).
 */
function dropGrantsOffAddress(db: Database, existing: ContainerRow, ipv6: string): Statement {
  const kept = addressChanges(existing.ipv6, ipv6) ? [ipv6] : [ipv6, existing.ipv6];
  const stored = sql`(select ${containers.ipv6} from ${containers} where ${containers.id} = ${existing.id})`;
  return db
    .delete(containerPermissions)
    .where(and(eq(containerPermissions.containerId, existing.id), notInArray(stored, kept)))
    .returning({ id: containerPermissions.id });
}

/** The update half of upsertContainer: a new address drops the container's SSH grants, unless the administrator writes. */
async function updateContainer(
  db: Database,
  project: ProjectRow,
  existing: ContainerRow,
  input: ContainerInput,
  { hostId, changed }: { hostId: number | undefined; changed: Record<string, unknown> },
  control: WriteControl,
) {
  const moves = addressChanges(existing.ipv6, input.ipv6);
  const grants = moves
    ? await db.select().from(containerPermissions).where(eq(containerPermissions.containerId, existing.id))
    : [];
  // The grants are the administrator's, for the machine at the old address: a tenant's move must not carry them along.
  const drops = moves && !control.byAdministrator;
  const dropping = input.ipv6 != null && !control.byAdministrator;
  const grantOf = (row: { userId: number; permission: string }) => ({ userId: row.userId, permission: row.permission });
  const { rows, etags } = await commitWrite(db, control, {
    projects: [project],
    statements: [
      ...(dropping ? [dropGrantsOffAddress(db, existing, input.ipv6!)] : []),
      db
        .update(containers)
        .set({
          ...(input.fullname != null && { fullname: input.fullname }),
          ...(input.ipv6 != null && { ipv6: input.ipv6 }),
          ...(hostId !== undefined && { hostId }),
          version: sql`${containers.version} + 1`,
        })
        .where(eq(containers.id, existing.id)),
    ],
    guards: moves ? [notAHostsAddress(input.ipv6!)] : [],
    changes: [
      {
        projectLabel: project.label,
        summary: {
          action: "update",
          containerLabel: existing.label,
          containerId: existing.id,
          ...changed,
          ...(grants.length > 0 && { [drops ? "permissionsRemoved" : "permissionsKept"]: listed(grants.map(grantOf)) }),
        },
      },
    ],
    conflict: containerConflict(input),
  });
  const removed = dropping ? (rows ? rows[0].length : grants.length) : 0;
  const warnings =
    removed > 0
      ? [
          `WARN: the address of container ${existing.label} changed, so its ${removed} SSH permission(s) were removed; ` +
            "an administrator may grant them again",
        ]
      : [];
  return { id: existing.id, etag: etags.get(project.id)!, warnings };
}

/**
 * Replaces the container's SSH permissions with `grants` (administrator only): grants already present stay
 * as they are, the others are added, and permissions not listed are removed. Returns the container view (after a dry
 * run: the one the write would give) and the project's new ETag.
 */
export async function setContainerPermissions(
  db: Database,
  project: ProjectRow,
  containerLabel: string,
  grants: PermissionGrants,
  control: WriteControl = {},
) {
  const [container] = await db
    .select()
    .from(containers)
    .where(and(eq(containers.projectId, project.id), eq(containers.label, containerLabel)))
    .limit(1);
  if (!container) throw new NotFound(`Invalid container: label ${containerLabel} not existing or access denied`);

  const wanted = new Map<string, { permission: string; userEmail: string }>();
  grants.forEach((grant, index) => {
    const key = `${grant.userEmail}\n${grant.permission}`;
    if (wanted.has(key)) throw new Invalid(`${index}: duplicate permission ${grant.permission} for ${grant.userEmail}`);
    const account = sshProxyUsername(project.label, container.label, grant.permission);
    if (account.length > MAX_ACCOUNT_NAME) {
      const problem = `SSH proxy user name ${account} is longer than ${MAX_ACCOUNT_NAME} characters`;
      throw new Invalid(`${index}.permission: ${problem}`);
    }
    wanted.set(key, grant);
  });

  const emails = [...new Set(grants.map((grant) => grant.userEmail))];
  const [userRows, currentRows] = await db.batch([
    db.select().from(users).where(inJsonList(users.email, emails)),
    db.select().from(containerPermissions).where(eq(containerPermissions.containerId, container.id)),
  ]);
  const userIdByEmail = new Map(userRows.map((row) => [row.email, row.id]));
  for (const email of emails)
    if (!userIdByEmail.has(email)) throw new NotFound(`Invalid user: email ${email} not existing`);

  const { removals, additions } = permissionChanges(wanted, userRows, currentRows);
  const statements = [stillAtAddress(container), ...permissionStatements(db, container.id, removals, additions)];
  const grantOf = (row: { userId: number; permission: string }) => ({ userId: row.userId, permission: row.permission });
  const summary = {
    containerLabel: container.label,
    containerId: container.id,
    added: listed(additions.map(grantOf)),
    removed: listed(removals.map(grantOf)),
  };
  const { etags } = await commitWrite(db, control, {
    what: "Unable to process permission update",
    projects: [project],
    statements,
    changes: [{ projectLabel: project.label, summary }],
  });
  const etag = etags.get(project.id)!;
  if (!control.dryRun) {
    const tree = await loadProjectTree(db, project);
    return { container: tree.containers.find((view) => view.label === container.label)!, etag };
  }
  const view = await dryRunView(db, { project, container, userRows, currentRows }, { removals, additions });
  return { container: view, etag };
}

/**
 * The check that the container is still at the address the request read, failing the batch otherwise: a grant is for
 * the machine at that address, and a tenant's move meanwhile (which removes the grants) must not have them follow it.
 */
const stillAtAddress = (container: ContainerRow) =>
  stillHolds(
    sql`exists (select 1 from ${containers} where ${containers.id} = ${container.id} and ${containers.ipv6} = ${container.ipv6})`,
  );

type PermissionRow = typeof containerPermissions.$inferSelect;
type UserRow = typeof users.$inferSelect;
type Grant = { userId: number; permission: string };

/** The stored permissions `wanted` no longer lists, and the grants it adds. */
function permissionChanges(
  wanted: Map<string, { permission: string; userEmail: string }>,
  userRows: UserRow[],
  currentRows: PermissionRow[],
) {
  const userIdByEmail = new Map(userRows.map((row) => [row.email, row.id]));
  const emailById = new Map(userRows.map((row) => [row.id, row.email]));
  const keep = new Set<string>();
  const removals: (typeof currentRows)[number][] = [];
  for (const row of currentRows) {
    const key = `${emailById.get(row.userId)}\n${row.permission}`;
    if (wanted.has(key)) keep.add(key);
    else removals.push(row);
  }
  const additions = [...wanted]
    .filter(([key]) => !keep.has(key))
    .map(([, grant]) => ({ userId: userIdByEmail.get(grant.userEmail)!, permission: grant.permission }));

  return { removals, additions };
}

function permissionStatements(db: Database, containerId: number, removals: PermissionRow[], additions: Grant[]) {
  const statements: Statement[] = [];
  if (removals.length) {
    const ids = removals.map((row) => row.id);
    statements.push(db.delete(containerPermissions).where(inJsonList(containerPermissions.id, ids)));
  }
  if (additions.length) {
    statements.push(
      sql`
        insert into container_permissions (container_id, user_id, permission)
        select ${containerId}, o.value ->> 'userId', o.value ->> 'permission' from json_each(${JSON.stringify(additions)}) as o`,
    );
  }
  return statements;
}

/** The view the write would give: kept grants as they are, new ones at version 0, sorted as the tree sorts them. */
async function dryRunView(
  db: Database,
  read: { project: ProjectRow; container: ContainerRow; userRows: UserRow[]; currentRows: PermissionRow[] },
  change: { removals: PermissionRow[]; additions: Grant[] },
) {
  const { project, container, userRows, currentRows } = read;
  const { removals, additions } = change;
  const [host] = await db.select().from(hosts).where(eq(hosts.id, container.hostId)).limit(1);
  const userById = new Map(userRows.map((row) => [row.id, row]));
  const granted = [
    ...currentRows.filter((row) => !removals.includes(row)),
    ...additions.map((row) => ({ id: 0, containerId: container.id, ...row, version: 0 })),
  ]
    .map((permission) => ({ permission, user: userById.get(permission.userId)! }))
    .sort((a, b) => byText(a.user.email, b.user.email) || byText(a.permission.permission, b.permission.permission));
  return containerView(project.label, container, host, granted);
}
