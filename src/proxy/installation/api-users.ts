// API users of the proxy API: lookup and credential checks (the administrator comes from secrets).
import { toHex } from "../../shared/bytes";
import { asc, eq, sql } from "drizzle-orm";
import type { Database } from "../../shared/db";
import { constantTimeEqualText, hashPassword, sameSecret, verifyPassword } from "../../shared/passwords";
import { NotFound } from "../domain-errors";
import { anyPatternMatchesLabel } from "./project-patterns";
import { apiUsers } from "./tables";
import { commitWrite, DELETED_A_ROW, tableRow, type WriteControl } from "./writes";

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

/** How long, and for how many credentials, a successful PBKDF2 check is remembered in this isolate. */
export interface VerificationCacheSettings {
  ttlMs: number;
  maxEntries: number;
}

/**
 * Credentials this isolate verified recently: an HMAC of user name and password (under a key that never leaves the
 * isolate) to the stored hash they matched and when that stops counting. An entry counts only while the stored hash
 * is still the same, so a password change or a deleted user drops it at once, in every isolate.
 */
const verified = new Map<string, { passwordHash: string; expiresAt: number }>();
let credentialKey: Promise<CryptoKey> | undefined;

async function credentialDigest(username: string, password: string): Promise<string> {
  credentialKey ??= crypto.subtle.importKey(
    "raw",
    crypto.getRandomValues(new Uint8Array(32)),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  // The name's length first, so that no other name/password split gives the same bytes.
  const message = new TextEncoder().encode(`${username.length}:${username}:${password}`);
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", await credentialKey, message));
  return toHex(mac);
}

async function passwordMatches(
  username: string,
  password: string,
  passwordHash: string | undefined,
  cache: VerificationCacheSettings,
  now: number,
): Promise<boolean> {
  if (passwordHash === undefined || cache.ttlMs <= 0 || cache.maxEntries <= 0) {
    return verifyPassword(password, passwordHash);
  }
  const digest = await credentialDigest(username, password);
  const entry = verified.get(digest);
  if (entry && entry.expiresAt > now && constantTimeEqualText(entry.passwordHash, passwordHash)) return true;
  if (entry) verified.delete(digest);
  if (!(await verifyPassword(password, passwordHash))) return false;
  while (verified.size >= cache.maxEntries) verified.delete(verified.keys().next().value!);
  verified.set(digest, { passwordHash, expiresAt: now + cache.ttlMs });
  return true;
}

/**
 * Checks Basic credentials: against the administrator secrets (constant-time), then against the stored PBKDF2 hash.
 * Every refusal costs the same: a wrong password for the administrator's name, for an API user and for an unknown
 * name each read the user row and run one PBKDF2 check (against a decoy where there is no hash to check), so timing
 * tells no name apart.
 */
export async function authenticate(
  db: Database,
  admin: { username?: string; password?: string },
  username: string,
  password: string,
  cache: VerificationCacheSettings = { ttlMs: 0, maxEntries: 0 },
  now = Date.now(),
): Promise<Caller | undefined> {
  const adminConfigured = Boolean(admin.username && admin.password);
  const [isAdminName, isAdminPassword] = adminConfigured
    ? await Promise.all([sameSecret(username, admin.username!), sameSecret(password, admin.password!)])
    : [false, false];
  if (isAdminName && isAdminPassword) return { username, isAdmin: true, projectPatterns: [] };
  const user = await findApiUser(db, username);
  // The administrator's name never logs in as an API user of the same name.
  const passwordHash = isAdminName ? undefined : user?.passwordHash;
  if (!(await passwordMatches(username, password, passwordHash, cache, now)) || !user || isAdminName) return undefined;
  return { username: user.username, isAdmin: false, projectPatterns: user.projectPatterns };
}

/** True when the caller may see the project: the administrator always, others when a pattern matches fully. */
export function mayAccessProject(caller: Caller, projectLabel: string): boolean {
  return caller.isAdmin || anyPatternMatchesLabel(caller.projectPatterns, projectLabel);
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

const apiUserView = (
  row: Pick<typeof apiUsers.$inferSelect, "username" | "email" | "projectPatterns" | "version">,
) => ({
  username: row.username,
  email: row.email,
  projectPatterns: row.projectPatterns,
  version: row.version,
});

/** Creates the API user, or replaces the password, email and patterns of the user with that name. */
export async function upsertApiUser(
  db: Database,
  input: { username: string; password: string; email?: string | null; projectPatterns: string[] },
  control: WriteControl = {},
) {
  const existing = await findApiUser(db, input.username);
  const passwordHash = await hashPassword(input.password);
  const fields = { email: input.email ?? null, projectPatterns: input.projectPatterns };
  const { rows } = await commitWrite(db, control, {
    what: "Unable to process API user update",
    projects: [],
    statements: [
      db
        .insert(apiUsers)
        .values({ username: input.username, passwordHash, ...fields })
        .onConflictDoUpdate({
          target: apiUsers.username,
          set: { passwordHash, ...fields, version: sql`${apiUsers.version} + 1` },
        })
        .returning(),
    ],
    // The patterns say what the user may reach; the password (and its hash) never goes into the log.
    changes: [
      {
        projectLabel: null,
        summary: {
          action: existing ? "update" : "create",
          username: input.username,
          projectPatterns: input.projectPatterns,
        },
      },
    ],
  });
  if (rows) return apiUserView(tableRow(apiUsers, rows[0][0]));
  return apiUserView({ username: input.username, ...fields, version: existing ? existing.version + 1 : 0 });
}

export async function listApiUsers(db: Database) {
  const rows = await db.select().from(apiUsers).orderBy(asc(apiUsers.username));
  return rows.map(apiUserView);
}

export async function deleteApiUser(db: Database, username: string, control: WriteControl = {}): Promise<void> {
  const missing = () => new NotFound(`Invalid API user: username ${username} not existing`);
  const existing = await findApiUser(db, username);
  if (!existing) throw missing();
  const { rows } = await commitWrite(db, control, {
    what: "Unable to process API user delete",
    projects: [],
    statements: [db.delete(apiUsers).where(eq(apiUsers.id, existing.id)).returning({ id: apiUsers.id })],
    changes: [{ projectLabel: null, summary: { username }, onlyIf: DELETED_A_ROW }],
  });
  if (rows && rows[0].length === 0) throw missing();
}
