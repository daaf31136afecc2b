// The stored SSH proxy versions: each generation's accounts (JSON) and sshpiperd file, the number kept bounded; the
// newest is the one in force. Also the preview of the next generation and the re-storing of an older version.
import { asc, desc, eq, notInArray, sql } from "drizzle-orm";
import { sha256Hex } from "../../shared/bytes";
import { filePieces, joinPieces, type Database } from "../../shared/db";
import { unifiedDiff } from "../unified-diff";
import { NotFound, versionNotFound } from "../domain-errors";
import type { Ipv6Network } from "../installation/addresses";
import type { SshInstallation } from "../installation/rows";
import { loadSshInstallation } from "../installation/load";
import type { ProxySettings } from "../settings";
import {
  accountsStillGranted,
  generateSshAccounts,
  sshpiperdYaml,
  type SshAccount,
  type SshProxyFiles,
} from "./config";
import { sshProxyVersionFiles, sshProxyVersions } from "./tables";

type SshVersionRow = typeof sshProxyVersions.$inferSelect;

const digestOf = async (accountsJson: string, yaml: string) => `sha256:${await sha256Hex(`${accountsJson}\n${yaml}`)}`;

const ACCOUNTS_FILE = "accounts.json";
const YAML_FILE = "sshpiperd.yaml";

/** A version's accounts (JSON) and sshpiperd file, as stored. */
interface VersionFiles {
  accounts: string;
  yaml: string;
}

/**
 * Inserts a version with its files (in pieces) and drops the oldest beyond the number kept, in one batch; returns its
 * number.
 */
async function insertVersion(
  db: Database,
  values: typeof sshProxyVersions.$inferInsert,
  files: VersionFiles,
  kept: number,
) {
  const keep = db
    .select({ id: sshProxyVersions.id })
    .from(sshProxyVersions)
    .orderBy(desc(sshProxyVersions.id))
    .limit(kept);
  // Inside the batch (one transaction) the newest id is the version just inserted.
  const newest = sql`(select max(${sshProxyVersions.id}) from ${sshProxyVersions})`;
  // 300 accounts with RSA keys make 2 MB of accounts and file, more than one D1 row holds: in pieces.
  const pieces = filePieces({ [ACCOUNTS_FILE]: files.accounts, [YAML_FILE]: files.yaml });
  const [[row]] = await db.batch([
    db.insert(sshProxyVersions).values(values).returning({ id: sshProxyVersions.id }),
    ...pieces.map((piece) => db.insert(sshProxyVersionFiles).values({ versionId: newest, ...piece })),
    db.delete(sshProxyVersionFiles).where(notInArray(sshProxyVersionFiles.versionId, keep)),
    db.delete(sshProxyVersions).where(notInArray(sshProxyVersions.id, keep)),
  ]);
  return row.id;
}

/** A stored version's files, its pieces joined. */
async function filesOf(db: Database, versionId: number): Promise<VersionFiles> {
  const pieces = await db
    .select({ name: sshProxyVersionFiles.name, content: sshProxyVersionFiles.content })
    .from(sshProxyVersionFiles)
    .where(eq(sshProxyVersionFiles.versionId, versionId))
    .orderBy(asc(sshProxyVersionFiles.name), asc(sshProxyVersionFiles.part));
  const files = joinPieces(pieces);
  // Every version is stored with both (an empty file as one empty piece): a missing one is damage, never "none".
  for (const name of [ACCOUNTS_FILE, YAML_FILE]) {
    if (files[name] === undefined) throw new Error(`SSH proxy version ${versionId} has no ${name} stored`);
  }
  return { accounts: files[ACCOUNTS_FILE], yaml: files[YAML_FILE] };
}

/** What writesshprx and its preview take from the proxy's settings. */
export const sshProxySettingsOf = (settings: ProxySettings) => ({
  files: {
    upstreamKeyFile: settings.SSH_PROXY_UPSTREAM_KEY_FILE,
    knownHostsFile: settings.SSH_PROXY_KNOWN_HOSTS_FILE,
  } satisfies SshProxyFiles,
  addressExceptions: settings.PROXY_ADDRESS_EXCEPTIONS,
});

/**
 * Generates and stores a version; returns its warnings. A run stores one version at most: when its run already stored
 * one (a message delivered again), that version is answered and nothing is written.
 */
export async function writeSshProxyConfiguration(
  db: Database,
  input: { runId: number; files: SshProxyFiles; kept: number; addressExceptions: readonly Ipv6Network[]; now: Date },
) {
  const [stored] = await db
    .select({ id: sshProxyVersions.id, warnings: sshProxyVersions.warnings })
    .from(sshProxyVersions)
    .where(eq(sshProxyVersions.jobRunId, input.runId))
    .limit(1);
  if (stored) {
    const already = `INFO: SSH proxy version ${stored.id} was already stored by this run`;
    return { version: stored.id, warnings: [already, ...stored.warnings] };
  }
  const { accounts, warnings } = generateSshAccounts(await loadSshInstallation(db), input.addressExceptions);
  const accountsJson = JSON.stringify(accounts);
  const yaml = sshpiperdYaml(accounts, input.files);
  const version = await insertVersion(
    db,
    { digest: await digestOf(accountsJson, yaml), jobRunId: input.runId, warnings, createdAt: input.now },
    { accounts: accountsJson, yaml },
    input.kept,
  );
  return { version, warnings: [`INFO: SSH proxy version ${version}: ${accounts.length} accounts`, ...warnings] };
}

/** The columns of a version's summary: the list reads no accounts or file (up to 2 MB a version). */
const summaryColumns = {
  id: sshProxyVersions.id,
  digest: sshProxyVersions.digest,
  jobRunId: sshProxyVersions.jobRunId,
  restoredFrom: sshProxyVersions.restoredFrom,
  createdAt: sshProxyVersions.createdAt,
};

const summary = (row: Pick<SshVersionRow, keyof typeof summaryColumns>) => ({
  version: row.id,
  digest: row.digest,
  jobId: row.jobRunId,
  restoredFrom: row.restoredFrom,
  createdAt: row.createdAt.toISOString(),
});

/** The newest version (the one in force), or a given one, with its files; undefined when there is none. */
async function findSshProxyVersion(db: Database, version?: number) {
  const [row] = await db
    .select()
    .from(sshProxyVersions)
    .where(version === undefined ? undefined : eq(sshProxyVersions.id, version))
    .orderBy(desc(sshProxyVersions.id))
    .limit(1);
  return row && { ...row, ...(await filesOf(db, row.id)) };
}

/** A stored version's answer: its summary, warnings, accounts and file. */
const versionAnswer = (row: NonNullable<Awaited<ReturnType<typeof findSshProxyVersion>>>) => ({
  ...summary(row),
  warnings: row.warnings,
  accounts: JSON.parse(row.accounts) as SshAccount[],
  yaml: row.yaml,
});

/** A stored version, as stored (GET /admin/sshproxy/versions/{version}: history, not what sshpiperd runs). */
export async function getSshProxyVersion(db: Database, version: number) {
  const row = await findSshProxyVersion(db, version);
  if (!row) throw versionNotFound(version);
  return versionAnswer(row);
}

/** Stored accounts as far as the installation grants them now (accountsStillGranted), with a warning for each cut. */
const stillGranted = (
  installation: SshInstallation,
  stored: readonly SshAccount[],
  addressExceptions: readonly Ipv6Network[],
) => accountsStillGranted(stored, generateSshAccounts(installation, addressExceptions).accounts);

/**
 * GET /admin/sshproxy, what sshpiperd is fed: the newest version as far as the installation grants it now. A grant
 * removed or an address freed (a container moved or deleted) stops at once, not at the next writesshprx: another
 * tenant may take the address at once, and the shared upstream key would log in to its machine. When anything is cut,
 * the file is generated again with the current settings, the digest is that of what is answered (no longer the
 * version's own) and the cuts are `WARN:`s after the version's warnings; otherwise the version is answered as stored.
 * Reads the version (2 queries) and the installation (1 batch) concurrently.
 */
export async function getSshProxyInForce(
  db: Database,
  input: { files: SshProxyFiles; addressExceptions: readonly Ipv6Network[] },
) {
  const [row, installation] = await Promise.all([findSshProxyVersion(db), loadSshInstallation(db)]);
  if (!row) throw new NotFound("No SSH proxy configuration has been generated yet");
  const stored = versionAnswer(row);
  const { accounts, warnings: cut } = stillGranted(installation, stored.accounts, input.addressExceptions);
  if (cut.length === 0) return stored;
  const yaml = sshpiperdYaml(accounts, input.files);
  const digest = await digestOf(JSON.stringify(accounts), yaml);
  return { ...stored, digest, warnings: [...stored.warnings, ...cut], accounts, yaml };
}

export async function listSshProxyVersions(db: Database) {
  const rows = await db.select(summaryColumns).from(sshProxyVersions).orderBy(desc(sshProxyVersions.id));
  return rows.map(summary);
}

/** Whether a stored version has this number (its id only, not its accounts and file). */
export async function sshProxyVersionExists(db: Database, version: number): Promise<boolean> {
  const [row] = await db
    .select({ id: sshProxyVersions.id })
    .from(sshProxyVersions)
    .where(eq(sshProxyVersions.id, version))
    .limit(1);
  return row !== undefined;
}

/**
 * POST /admin/sshproxy/versions/{version}/activate: stores an older version's accounts and file again as the newest
 * version (the one in force), noting which version it restores. Only what the installation still grants comes back
 * (accountsStillGranted). The file is always generated again from the accounts restored, with the current upstream key
 * and known_hosts files: the old version's would undo a key rotation made since.
 */
export async function restoreSshProxyVersion(
  db: Database,
  input: {
    runId: number;
    version: number;
    kept: number;
    now: Date;
    files: SshProxyFiles;
    addressExceptions: readonly Ipv6Network[];
  },
) {
  const old = await findSshProxyVersion(db, input.version);
  if (!old) throw versionNotFound(input.version);
  const restored = JSON.parse(old.accounts) as SshAccount[];
  const { accounts, warnings: cut } = stillGranted(await loadSshInstallation(db), restored, input.addressExceptions);
  const accountsJson = JSON.stringify(accounts);
  const yaml = sshpiperdYaml(accounts, input.files);
  const version = await insertVersion(
    db,
    {
      digest: await digestOf(accountsJson, yaml),
      jobRunId: input.runId,
      restoredFrom: old.id,
      warnings: [...old.warnings, ...cut],
      createdAt: input.now,
    },
    { accounts: accountsJson, yaml },
    input.kept,
  );
  return { version, warnings: [`INFO: SSH proxy version ${version} restores version ${old.id}`, ...cut] };
}

/** The files a preview shows and diffs: the accounts (indented, so that a diff names the lines) and the yaml. */
const previewFiles = (accounts: unknown, yaml: string) => ({
  "accounts.json": `${JSON.stringify(accounts, null, 2)}\n`,
  "sshpiperd.yaml": yaml,
});

/**
 * GET /admin/sshproxy/preview: what writesshprx would store now, with its diff against the version in force; nothing
 * is stored. No agent checks an SSH proxy configuration: `valid` is always null.
 */
export async function previewSshProxy(
  db: Database,
  input: { files: SshProxyFiles; addressExceptions: readonly Ipv6Network[] },
) {
  const [installation, inForce] = await Promise.all([loadSshInstallation(db), findSshProxyVersion(db)]);
  const { accounts, warnings } = generateSshAccounts(installation, input.addressExceptions);
  const yaml = sshpiperdYaml(accounts, input.files);
  const digest = await digestOf(JSON.stringify(accounts), yaml);
  const files = previewFiles(accounts, yaml);
  const before = inForce ? previewFiles(JSON.parse(inForce.accounts), inForce.yaml) : {};
  return {
    version: inForce?.id ?? null,
    digest,
    changed: digest !== inForce?.digest,
    files,
    diff: unifiedDiff(before, files),
    valid: null,
    validation: "no agent checks the SSH proxy configuration",
    problems: warnings,
  };
}
