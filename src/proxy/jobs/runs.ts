// The proxy's job runs as the API shows them (GET /admin/jobs): only its own kinds.
import { getJobRun, jobRunView, listJobRuns } from "../../jobs/history";
import type { Database } from "../../shared/db";
import { NotFound } from "../domain-errors";
import { auditPruneJob, certificatesJob, genSyncJob, slaveSyncJob, sshProxyJob } from "./definitions";

export const PROXY_JOB_KINDS = [
  genSyncJob.kind,
  slaveSyncJob.kind,
  sshProxyJob.kind,
  certificatesJob.kind,
  auditPruneJob.kind,
] as const;
export type ProxyJobKind = (typeof PROXY_JOB_KINDS)[number];

export async function listProxyJobs(db: Database, input: { kind?: ProxyJobKind; limit: number }) {
  const rows = await listJobRuns(db, { kinds: input.kind ? [input.kind] : [...PROXY_JOB_KINDS], limit: input.limit });
  return rows.map(jobRunView);
}

/** A run of one of the proxy's jobs (other services' runs answer 404 here). */
export async function getProxyJob(db: Database, id: number) {
  const row = Number.isSafeInteger(id) && id > 0 ? await getJobRun(db, id) : undefined;
  if (!row || !(PROXY_JOB_KINDS as readonly string[]).includes(row.kind))
    throw new NotFound(`Invalid job: id ${id} not existing`);
  return jobRunView(row);
}
