// API users of the proxy API: lookup and credential checks (the administrator comes from secrets).
import { asc, eq, sql } from "drizzle-orm";
import type { Database } from "../shared/db";
import { constantTimeEqualText, hashPassword, verifyPassword } from "../shared/passwords";
import { NotFound } from "./errors";
import { apiUsers } from "./tables";

/** Who is calling: an API user limited to its project patterns, or the administrator. */
export interface Caller {
  username: string;
  isAdmin: boolean;
  /** Regular expressions that must match a whole project label; ignored for the administrator. */
  projectPatterns: string[];
}

export async function findApiUser(db: Database, username: string) {
  const [row] = await db.select().from(apiUsers).where(eq(apiUsers.username, username)).limit(1);
  return row;
}

/**
 * Checks Basic credentials: first against the administrator secrets (constant-time), then against the
 * stored PBKDF2 hash. An unknown user costs a full hash too, so timing does not reveal user names.
 */
export async function authenticate(
  db: Database,
  admin: { username?: string; password?: string },
  username: string,
  password: string,
): Promise<Caller | undefined> {
  if (admin.username && admin.password) {
    const nameMatches = constantTimeEqualText(username, admin.username);
    const passwordMatches = constantTimeEqualText(password, admin.password);
    if (nameMatches && passwordMatches) return { username, isAdmin: true, projectPatterns: [] };
    if (nameMatches) return undefined;
  }
  const user = await findApiUser(db, username);
  const valid = await verifyPassword(password, user?.passwordHash);
  if (!user || !valid) return undefined;
  return { username: user.username, isAdmin: false, projectPatterns: user.projectPatterns };
}

/** True when the caller may see the project: the administrator always, others when a pattern matches fully. */
export function mayAccessProject(caller: Caller, projectLabel: string): boolean {
  if (caller.isAdmin) return true;
  return caller.projectPatterns.some((pattern) => {
    try {
      return new RegExp(`^(?:${pattern})$`).test(projectLabel);
    } catch {
      return false;
    }
  });
}

/** Stores a new API user with a PBKDF2 hash of the password. */
export async function createApiUser(
  db: Database,
  input: { username: string; password: string; email?: string; projectPatterns: string[] },
) {
  const [row] = await db
    .insert(apiUsers)
    .values({
      username: input.username,
      passwordHash: await hashPassword(input.password),
      email: input.email,
      projectPatterns: input.projectPatterns,
    })
    .returning();
  return row;
}

const apiUserView = (row: typeof apiUsers.$inferSelect) => ({
  username: row.username,
  email: row.email,
  projectPatterns: row.projectPatterns,
  version: row.version,
});

/** Creates the API user, or replaces the password, email and patterns of the user with that name. */
export async function upsertApiUser(
  db: Database,
  input: { username: string; password: string; email?: string | null; projectPatterns: string[] },
) {
  const passwordHash = await hashPassword(input.password);
  const [row] = await db
    .insert(apiUsers)
    .values({ username: input.username, passwordHash, email: input.email ?? null, projectPatterns: input.projectPatterns })
    .onConflictDoUpdate({
      target: apiUsers.username,
      set: {
        passwordHash,
        email: input.email ?? null,
        projectPatterns: input.projectPatterns,
        version: sql`${apiUsers.version} + 1`,
      },
    })
    .returning();
  return apiUserView(row);
}

export async function listApiUsers(db: Database) {
  const rows = await db.select().from(apiUsers).orderBy(asc(apiUsers.username));
  return rows.map(apiUserView);
}

export async function deleteApiUser(db: Database, username: string): Promise<void> {
  const deleted = await db.delete(apiUsers).where(eq(apiUsers.username, username)).returning({ id: apiUsers.id });
  if (deleted.length === 0) throw new NotFound(`Invalid API user: username ${username} not existing`);
}
