// The news users repository and its two views: public {id, name, picture} and full (adds role, email, createdAt).
// Password hashes, token versions and password change times never leave this module's rows for a response.
import { asc, count, eq, sql, type SQL } from "drizzle-orm";
import { md5Hex } from "../../shared/bytes";
import { isUniqueFailure, type Database } from "../../shared/db";
import { hashPassword } from "../../shared/passwords";
import { duplicateRecord, recordNotFound } from "./errors";
import { orderOf, type SortKey } from "./sort";
import { newsUsers } from "./tables";

export type NewsUser = typeof newsUsers.$inferSelect;

export interface PublicUserView {
  id: string;
  name: string;
  picture: string;
}

export interface FullUserView extends PublicUserView {
  role: NewsUser["role"];
  email: string;
  createdAt: string;
}

export const publicUserView = (user: NewsUser): PublicUserView => ({
  id: user.id,
  name: user.name,
  picture: user.picture,
});

export const fullUserView = (user: NewsUser): FullUserView => ({
  ...publicUserView(user),
  role: user.role,
  email: user.email,
  createdAt: user.createdAt.toISOString(),
});

/** The generator's default picture: the Gravatar identicon of the e-mail address. */
export const gravatar = async (email: string) => `https://gravatar.com/avatar/${await md5Hex(email)}?d=identicon`;

export async function getUser(db: Database, id: string): Promise<NewsUser | undefined> {
  const [user] = await db.select().from(newsUsers).where(eq(newsUsers.id, id)).limit(1);
  return user;
}

export async function findUserByEmail(db: Database, email: string): Promise<NewsUser | undefined> {
  const [user] = await db.select().from(newsUsers).where(eq(newsUsers.email, email)).limit(1);
  return user;
}

export async function createUser(
  db: Database,
  input: { email: string; password: string; name?: string; picture?: string; role?: NewsUser["role"]; now: Date },
): Promise<NewsUser> {
  if (await findUserByEmail(db, input.email)) throw duplicateRecord("email", "email already registered");
  const row = {
    id: crypto.randomUUID(),
    email: input.email,
    passwordHash: await hashPassword(input.password),
    name: input.name ?? input.email.slice(0, input.email.indexOf("@")),
    picture: input.picture ?? (await gravatar(input.email)),
    role: input.role ?? "user",
    createdAt: input.now,
    updatedAt: input.now,
  };
  try {
    const [user] = await db.insert(newsUsers).values(row).returning();
    return user;
  } catch (error) {
    // Two sign-ups with one address at once: the unique index decides, the loser gets the same Conflict.
    if (isUniqueFailure(error)) throw duplicateRecord("email", "email already registered");
    throw error;
  }
}

export async function updateUser(
  db: Database,
  input: { id: string; name?: string; picture?: string; now: Date },
): Promise<NewsUser> {
  const changes = {
    ...(input.name !== undefined && { name: input.name }),
    ...(input.picture !== undefined && { picture: input.picture }),
    updatedAt: input.now,
  };
  const [user] = await db.update(newsUsers).set(changes).where(eq(newsUsers.id, input.id)).returning();
  if (!user) throw recordNotFound();
  return user;
}

/**
 * Sets a new password, raises the user's token version and records when, in the same statement, so that every token
 * issued before (including one signed by a login that read the old row while this ran, and the original service's
 * tokens, which carry only their issue time) stops working.
 */
export async function setPassword(db: Database, input: { id: string; password: string; now: Date }): Promise<NewsUser> {
  const passwordHash = await hashPassword(input.password);
  const [user] = await db
    .update(newsUsers)
    .set({
      passwordHash,
      tokenVersion: sql`${newsUsers.tokenVersion} + 1`,
      passwordChangedAt: input.now,
      updatedAt: input.now,
    })
    .where(eq(newsUsers.id, input.id))
    .returning();
  if (!user) throw recordNotFound();
  return user;
}

export async function deleteUser(db: Database, id: string): Promise<void> {
  const deleted = await db.delete(newsUsers).where(eq(newsUsers.id, id)).returning({ id: newsUsers.id });
  if (deleted.length === 0) throw recordNotFound();
}

export const USER_SORT_FIELDS = {
  createdAt: newsUsers.createdAt,
  updatedAt: newsUsers.updatedAt,
  name: newsUsers.name,
  email: newsUsers.email,
  role: newsUsers.role,
};

export interface ListInput {
  q?: string;
  page: number;
  limit: number;
  sort: SortKey<keyof typeof USER_SORT_FIELDS>[];
}

/** The two statements of GET /users (the page and the total), exposed so that a test can read their plans. */
export function listUsersQueries(db: Database, input: ListInput) {
  let where: SQL | undefined;
  if (input.q) {
    const pattern = `%${input.q.replace(/[\\%_]/g, (char) => `\\${char}`)}%`;
    where = sql`(${newsUsers.email} LIKE ${pattern} ESCAPE '\\' OR ${newsUsers.name} LIKE ${pattern} ESCAPE '\\')`;
  }
  const order = [...orderOf(input.sort, USER_SORT_FIELDS), asc(newsUsers.id)];
  return [
    db
      .select()
      .from(newsUsers)
      .where(where)
      .orderBy(...order)
      .limit(input.limit)
      .offset((input.page - 1) * input.limit),
    db.select({ total: count() }).from(newsUsers).where(where),
  ] as const;
}

/** GET /users: `q` matches the e-mail address or the name (case-insensitive substring), as the generator's keywords do. */
export async function listUsers(db: Database, input: ListInput): Promise<{ rows: NewsUser[]; total: number }> {
  const [rows, [{ total }]] = await db.batch(listUsersQueries(db, input));
  return { rows, total };
}
