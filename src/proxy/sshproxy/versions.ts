// The stored SSH proxy versions: each generation's accounts (JSON) and sshpiperd file, the number kept bounded.
import { desc, notInArray } from "drizzle-orm";
import { sha256Hex } from "../../shared/bytes";
import type { Database } from "../../shared/db";
import { NotFound } from "../errors";
import type { Ipv6Network } from "../installation/addresses";
import { loadSshInstallation } from "../installation/load";
import { generateSshAccounts, sshpiperdYaml, type SshAccount, type SshProxyFiles } from "./config";
import { sshProxyVersions } from "./tables";

/** Generates and stores a version; returns its warnings. */
export async function writeSshProxyConfiguration(
  db: Database,
  input: { runId: number; files: SshProxyFiles; kept: number; addressExceptions: readonly Ipv6Network[]; now: Date },
) {
  const { accounts, warnings } = generateSshAccounts(await loadSshInstallation(db), input.addressExceptions);
  const accountsJson = JSON.stringify(accounts);
  const yaml = sshpiperdYaml(accounts, input.files);
  const [row] = await db
    .insert(sshProxyVersions)
    .values({
      digest: `sha256:${await sha256Hex(`${accountsJson}\n${yaml}`)}`,
      jobRunId: input.runId,
      accounts: accountsJson,
      yaml,
      warnings,
      createdAt: input.now,
    })
    .returning({ id: sshProxyVersions.id });
  const keep = db
    .select({ id: sshProxyVersions.id })
    .from(sshProxyVersions)
    .orderBy(desc(sshProxyVersions.id))
    .limit(input.kept);
  await db.delete(sshProxyVersions).where(notInArray(sshProxyVersions.id, keep));
  return { version: row.id, warnings: [`INFO: SSH proxy version ${row.id}: ${accounts.length} accounts`, ...warnings] };
}

export async function getSshProxyVersion(db: Database) {
  const [row] = await db.select().from(sshProxyVersions).orderBy(desc(sshProxyVersions.id)).limit(1);
  if (!row) throw new NotFound("No SSH proxy configuration has been generated yet");
  return {
    version: row.id,
    digest: row.digest,
    jobId: row.jobRunId,
    createdAt: row.createdAt.toISOString(),
    warnings: row.warnings,
    accounts: JSON.parse(row.accounts) as SshAccount[],
    yaml: row.yaml,
  };
}
