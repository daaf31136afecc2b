// Console and SSH users (administration): the people who receive SSH access to containers.
import { asc, eq, sql } from "drizzle-orm";
import type { Database, Statement } from "../../shared/db";
import type { UserInput } from "./inputs";
import { revisionBumpWhere } from "./revisions";
import { containerPermissions, containers, users } from "./tables";
import { userView } from "./views";
import { commitWrite, tableRow, type WriteControl } from "./writes";

/**
 * Creates the user, or updates the user with that email (only the fields given). The projects where the user holds a
 * permission show the user: their revisions are bumped.
 */
export async function upsertUser(db: Database, input: UserInput, control: WriteControl = {}) {
  const [existing] = await db.select().from(users).where(eq(users.email, input.email)).limit(1);
  const values = {
    email: input.email,
    fullname: input.fullname ?? null,
    sshPublicKey: input.sshPublicKey ?? null,
    role: input.role ?? "CONTACT",
    defaultPermission: input.defaultPermission ?? [],
    proxyPermission: input.proxyPermission ?? [],
  };
  const changed = {
    ...(input.fullname != null && { fullname: input.fullname }),
    ...(input.sshPublicKey != null && { sshPublicKey: input.sshPublicKey }),
    ...(input.role != null && { role: input.role }),
    ...(input.defaultPermission != null && { defaultPermission: input.defaultPermission }),
    ...(input.proxyPermission != null && { proxyPermission: input.proxyPermission }),
  };
  const statements: Statement[] = [
    db
      .insert(users)
      .values(values)
      .onConflictDoUpdate({ target: users.email, set: { ...changed, version: sql`${users.version} + 1` } })
      .returning(),
  ];
  if (existing) {
    statements.push(
      revisionBumpWhere(sql`select ${containers.projectId} from ${containers} where ${containers.id} in
        (select ${containerPermissions.containerId} from ${containerPermissions} where ${containerPermissions.userId} = ${existing.id})`),
    );
  }
  const summary = {
    action: existing ? "update" : "create",
    email: input.email,
    userId: existing ? existing.id : sql`(select id from ${users} where ${users.email} = ${input.email})`,
    // Which fields, never the key itself.
    fields: Object.keys(changed),
  };
  const { rows } = await commitWrite(db, control, {
    what: "Unable to process user update",
    projects: [],
    statements,
    changes: [{ projectLabel: null, summary }],
  });
  if (rows) return userView(tableRow(users, rows[0][0]));
  return userView(
    existing ? { ...existing, ...changed, version: existing.version + 1 } : { id: 0, ...values, version: 0 },
  );
}

export async function listUsers(db: Database) {
  const rows = await db.select().from(users).orderBy(asc(users.email));
  return rows.map(userView);
}
