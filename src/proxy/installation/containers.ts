// Containers: create-or-update by label within a project, and the administrator's SSH permission grants.
import { and, eq, sql } from "drizzle-orm";
import { isConstraintFailure, type Database } from "../../shared/db";
import { vetContainerAddress, type Ipv6Network } from "./addresses";
import { HttpError } from "../../shared/http/errors";
import { commit, inJsonList, type Statement } from "./bulk";
import { CannotProcess, Conflict, NotFound } from "../errors";
import { loadProjectTree } from "./projects";
import type { ProjectRow } from "./rows";
import type { ContainerInput, PermissionGrants } from "./inputs";
import { containerPermissions, containers, hosts, users } from "./tables";
import { sshProxyUsername } from "./views";

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
  if (!checked.ok) throw new HttpError(400, `ipv6: ${checked.error}`);
  return checked.value;
}

/**
 * Creates the container, or updates the one with the same label in the project (only the fields given).
 * Returns its id. A non-empty containerPermissions list and a refused address are refused before anything is written.
 */
export async function upsertContainer(
  db: Database,
  project: ProjectRow,
  input: ContainerInput,
  addressExceptions: readonly Ipv6Network[] = [],
): Promise<number> {
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

  try {
    if (!existing) {
      if (hostId === undefined) throw new CannotProcess("Invalid host: no hostname or host id available in input");
      if (input.ipv6 == null) throw new CannotProcess("Invalid container: no ipv6 address available in input");
      const [row] = await db
        .insert(containers)
        .values({
          projectId: project.id,
          label: input.label,
          fullname: input.fullname ?? null,
          hostId,
          ipv6: input.ipv6,
        })
        .returning({ id: containers.id });
      return row.id;
    }
    await db
      .update(containers)
      .set({
        ...(input.fullname != null && { fullname: input.fullname }),
        ...(input.ipv6 != null && { ipv6: input.ipv6 }),
        ...(hostId !== undefined && { hostId }),
        version: sql`${containers.version} + 1`,
      })
      .where(eq(containers.id, existing.id));
    return existing.id;
  } catch (error) {
    // The unique index is the check: no extra read, and no race between a check and the write.
    if (isConstraintFailure(error, "containers.ipv6")) {
      throw new Conflict(`Invalid container: address ${input.ipv6} is already used by another container`);
    }
    if (isConstraintFailure(error, "containers.project_id, containers.label")) {
      throw new CannotProcess(
        "Unable to process container create: a concurrent change conflicted with this request, nothing was changed",
      );
    }
    throw error;
  }
}

/**
 * Replaces the container's SSH permissions with `grants` (administrator only): grants already present stay
 * as they are, the others are added, and permissions not listed are removed. Returns the container view.
 */
export async function setContainerPermissions(
  db: Database,
  project: ProjectRow,
  containerLabel: string,
  grants: PermissionGrants,
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
    if (wanted.has(key))
      throw new HttpError(400, `${index}: duplicate permission ${grant.permission} for ${grant.userEmail}`);
    const account = sshProxyUsername(project.label, container.label, grant.permission);
    if (account.length > MAX_ACCOUNT_NAME) {
      const problem = `SSH proxy user name ${account} is longer than ${MAX_ACCOUNT_NAME} characters`;
      throw new HttpError(400, `${index}.permission: ${problem}`);
    }
    wanted.set(key, grant);
  });

  const emails = [...new Set(grants.map((grant) => grant.userEmail))];
  const [userRows, currentRows] = await db.batch([
    db.select({ id: users.id, email: users.email }).from(users).where(inJsonList(users.email, emails)),
    db.select().from(containerPermissions).where(eq(containerPermissions.containerId, container.id)),
  ]);
  const userIdByEmail = new Map(userRows.map((row) => [row.email, row.id]));
  for (const email of emails)
    if (!userIdByEmail.has(email)) throw new NotFound(`Invalid user: email ${email} not existing`);

  const emailById = new Map(userRows.map((row) => [row.id, row.email]));
  const keep = new Set<string>();
  const removals: number[] = [];
  for (const row of currentRows) {
    const key = `${emailById.get(row.userId)}\n${row.permission}`;
    if (wanted.has(key)) keep.add(key);
    else removals.push(row.id);
  }
  const additions = [...wanted].filter(([key]) => !keep.has(key)).map(([, grant]) => grant);

  const statements: Statement[] = [];
  if (removals.length)
    statements.push(db.delete(containerPermissions).where(inJsonList(containerPermissions.id, removals)));
  if (additions.length) {
    const rows = additions.map((grant) => ({
      userId: userIdByEmail.get(grant.userEmail)!,
      permission: grant.permission,
    }));
    statements.push(
      sql`
        insert into container_permissions (container_id, user_id, permission)
        select ${container.id}, o.value ->> 'userId', o.value ->> 'permission' from json_each(${JSON.stringify(rows)}) as o`,
    );
  }
  await commit(db, statements, "Unable to process permission update");
  const tree = await loadProjectTree(db, project);
  return tree.containers.find((view) => view.label === container.label)!;
}
