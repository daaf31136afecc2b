// Console and SSH users (administration): the people who receive SSH access to containers.
import { asc, sql } from "drizzle-orm";
import type { Database } from "../../shared/db";
import type { UserInput } from "./inputs";
import { users } from "./tables";
import { userView } from "./views";

/** Creates the user, or updates the user with that email (only the fields given). */
export async function upsertUser(db: Database, input: UserInput) {
  const [row] = await db
    .insert(users)
    .values({
      email: input.email,
      fullname: input.fullname ?? null,
      sshPublicKey: input.sshPublicKey ?? null,
      role: input.role ?? "CONTACT",
      defaultPermission: input.defaultPermission ?? [],
      proxyPermission: input.proxyPermission ?? [],
    })
    .onConflictDoUpdate({
      target: users.email,
      set: {
        ...(input.fullname != null && { fullname: input.fullname }),
        ...(input.sshPublicKey != null && { sshPublicKey: input.sshPublicKey }),
        ...(input.role != null && { role: input.role }),
        ...(input.defaultPermission != null && { defaultPermission: input.defaultPermission }),
        ...(input.proxyPermission != null && { proxyPermission: input.proxyPermission }),
        version: sql`${users.version} + 1`,
      },
    })
    .returning();
  return userView(row);
}

export async function listUsers(db: Database) {
  const rows = await db.select().from(users).orderBy(asc(users.email));
  return rows.map(userView);
}
