// The proxy's job runs as the API shows them (GET /admin/jobs), and the start of its detached jobs: take the lock at
// once (423 when held), then queue the run with the lock's holder so that the queued run keeps that lock.
import { enqueueJob } from "../jobs/enqueue";
import { getJobRun, listJobRuns } from "../jobs/history";
import type { Database } from "../shared/db";
import { NotFound } from "./errors";
import { acquireJobLock, releaseJobLock } from "./job-locks";

export const PROXY_JOB_KINDS = ["gensynchaprx", "haproxy-slave-sync", "writesshprx", "certificates"] as const;
export type ProxyJobKind = (typeof PROXY_JOB_KINDS)[number];

type JobRunRow = NonNullable<Awaited<ReturnType<typeof getJobRun>>>;

const iso = (date: Date | null) => date?.toISOString() ?? null;

export const jobRunView = (row: JobRunRow) => ({
  id: row.id,
  kind: row.kind,
  state: row.state,
  trigger: row.trigger,
  attempts: row.attempts,
  createdAt: iso(row.createdAt),
  startedAt: iso(row.startedAt),
  endedAt: iso(row.endedAt),
  warnings: row.warnings,
  error: row.error,
});

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

/** Takes the job's lock and queues the run holding it; returns the run id. Throws JobLocked (423) when held. */
export async function startDetachedJob(
  env: Env,
  input: { kind: "writesshprx" | "certificates"; lock: string; caller: string },
): Promise<number> {
  const holder = crypto.randomUUID();
  await acquireJobLock(env, input.lock, { holder, kind: input.kind });
  try {
    return await enqueueJob(env, { kind: input.kind, lockHolder: holder }, `api (${input.caller})`);
  } catch (error) {
    await releaseJobLock(env, input.lock, holder);
    throw error;
  }
}
