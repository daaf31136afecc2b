// The proxy's jobs: their definitions (every kind spelled here once; all five are master-only), their locks
// (gensynchaprx and writesshprx share one, the certificate maintenance has its own), the locked runners the queue and
// the API call, the runs as the API shows them (GET /admin/jobs), and the start of the detached jobs: take the lock at
// once, then queue the run with the lock's holder.
import { z } from "../shared/zod";
import { defineJob, type AnyJobDefinition, type JobOutcome, type JobRequest } from "../jobs/define";
import { enqueueJob, enqueueJobs } from "../jobs/enqueue";
import { finishJobRun, getJobRun, jobRunView, latestStartedRun, listJobRuns, startJobRun } from "../jobs/history";
import { acquireLock, JobLocked, releaseLock, withLock, type LockScope } from "../jobs/locks";
import { database, type Database } from "../shared/db";
import { HttpError } from "../shared/http/errors";
import { logError } from "../shared/log";
import { pruneAuditLog } from "./audit/log";
import { NotFound } from "./errors";
import {
  GENSYNC_FAILED,
  generateAndApply,
  genSyncFailureFor,
  restoreVersion,
  syncSlave,
  type AppliedVersion,
  type QueueSlaveSyncs,
} from "./haproxy/sync";
import type { BundleNote } from "./haproxy/config";
import { joinOrRun, type JoinPorts } from "./haproxy/joining";
import { notesOfRun } from "./haproxy/versions";
import { mayAccessProject, type Caller } from "./installation/api-users";
import { acmeIssuer } from "./pki/acme-issuer";
import { maintainCertificates } from "./pki/maintenance";
import { proxySettings } from "./settings";
import { SettingsError } from "../shared/settings";
import { restoreSshProxyVersion, sshProxySettingsOf, writeSshProxyConfiguration } from "./sshproxy/versions";

export const CONFIG_LOCK = "haproxy-and-ssh-proxy";
export const MAINTENANCE_LOCK = "certificate-maintenance";

/** The proxy's locks live in one JobLock object, and a holder that died loses a lock after JOB_LOCK_TIMEOUT. */
const proxyLocks = (env: Env): LockScope => ({ objectName: "proxy-jobs", ttlMs: proxySettings(env).JOB_LOCK_TIMEOUT });

const acquireJobLock = (env: Env, name: string, request: { holder: string; kind: string }) =>
  acquireLock(env, proxyLocks(env), name, request);
const releaseJobLock = (env: Env, name: string, holder: string) => releaseLock(env, proxyLocks(env), name, holder);
const withJobLock = <T>(env: Env, name: string, request: { holder: string; kind: string }, work: () => Promise<T>) =>
  withLock(env, proxyLocks(env), name, request, work);

// ---- definitions ----

/**
 * Spec 1: "Jobs run only on the master instance. A slave instance refuses them." A role that cannot be read (invalid
 * proxy settings) refuses too: running a master's job on a slave is worse than missing one run until they are fixed.
 */
function masterOnly(env: Env, kind: string): string | undefined {
  let role: string;
  try {
    role = proxySettings(env).INSTANCE_ROLE;
  } catch (error) {
    if (!(error instanceof SettingsError)) throw error;
    return `The ${kind} job runs only on the master instance, and this instance's role cannot be read: ${error.message}`;
  }
  return role === "master" ? undefined : `This is a slave instance: the ${kind} job runs only on the master instance`;
}

/** Who holds (or is to take) the job's lock: the API call that started it, or the run itself when absent. */
const lockHolder = z.string().min(1).max(100).optional();
const positive = z.number().int().positive();

/** Generate, validate and apply the HAProxy configuration (queued by the certificate job after a change). */
export const genSyncJob = defineJob({
  kind: "gensynchaprx",
  fields: { lockHolder },
  run: (env, message, now) => runQueuedGenSync(env, { runId: message.runId, lockHolder: message.lockHolder, now }),
  refusal: masterOnly,
});

/** Push one stored HAProxy version to one slave agent; the outcome is added to the parent run's warnings. */
export const slaveSyncJob = defineJob({
  kind: "haproxy-slave-sync",
  fields: { parentRunId: positive, version: positive, agentUrl: z.url() },
  run: (env, message, _now, context) =>
    syncSlave(env, { ...message, lastAttempt: context.lastAttempt, attempts: context.attempts }),
  refusal: masterOnly,
});

/** Generate the SSH proxy configuration (GET /admin/writesshprx). */
export const sshProxyJob = defineJob({
  kind: "writesshprx",
  fields: { lockHolder },
  run: (env, message, now) => runSshProxyJob(env, { runId: message.runId, lockHolder: message.lockHolder, now }),
  refusal: masterOnly,
});

/** Obtain and renew public CA certificates (GET /maintenance/start and the daily cron). */
export const certificatesJob = defineJob({
  kind: "certificates",
  fields: { lockHolder },
  // The job reads the clock as it goes: attempts are dated when they start, not when the run began.
  run: (env, message) => runCertificateJob(env, { runId: message.runId, lockHolder: message.lockHolder }),
  refusal: masterOnly,
});

/** Remove the audit entries older than PROXY_AUDIT_RETENTION_DAYS (the daily cron). */
export const auditPruneJob = defineJob({
  kind: "audit-prune",
  fields: {},
  async run(env, _message, now) {
    const days = proxySettings(env).PROXY_AUDIT_RETENTION_DAYS;
    return { warnings: await pruneAuditLog(database(env.DB), { now, days }) };
  },
  refusal: masterOnly,
});

export const proxyJobs: readonly AnyJobDefinition[] = [
  genSyncJob,
  slaveSyncJob,
  sshProxyJob,
  certificatesJob,
  auditPruneJob,
];

/** What the daily cron queues for the proxy: the certificate maintenance and the audit log's pruning. */
export const dailyProxyRequests = (): JobRequest<typeof certificatesJob | typeof auditPruneJob>[] => [
  { kind: certificatesJob.kind },
  { kind: auditPruneJob.kind },
];

const queueSlaveSyncs =
  (env: Env, parentRunId: number): QueueSlaveSyncs =>
  (syncs) =>
    enqueueJobs(
      env,
      syncs.map((sync): JobRequest<typeof slaveSyncJob> => ({ kind: slaveSyncJob.kind, parentRunId, ...sync })),
      `${genSyncJob.kind} run ${parentRunId}`,
    );

// ---- runs ----

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

/** Takes the job's lock and queues the run holding it; returns the run id. Throws JobLocked (423) when held. */
export async function startDetachedJob(
  env: Env,
  input: { kind: typeof sshProxyJob.kind | typeof certificatesJob.kind; lock: string; caller: string },
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

// ---- locked runners ----

/** A generation's notes with their texts as the run records them. */
const withWarnings = <T extends { notes: BundleNote[] }>(result: T): T & { warnings: string[] } => ({
  ...result,
  warnings: result.notes.map((note) => note.text),
});

/**
 * GET /admin/gensynchaprx as the administrator calls it: under the shared lock (423 when held), recorded as a job
 * run. A failure is recorded in full on the run and thrown as genSyncFailureFor the caller.
 */
export async function runGenSyncFromApi(
  env: Env,
  input: { caller: Caller; now: Date },
): Promise<{ runId: number; notes: BundleNote[] }> {
  return runHaproxyFromApi<AppliedVersion & { warnings: string[] }>(
    env,
    { ...input, trigger: `api (${input.caller.username})` },
    (runId) =>
      generateAndApply(env, { runId, now: input.now, queueSlaveSyncs: queueSlaveSyncs(env, runId) }).then((applied) =>
        withWarnings(applied),
      ),
  );
}

/** The trigger of a rollback run, and how it is recognised: such a run never carries anybody's latest changes. */
const restoreTrigger = (caller: Caller, version: number) => `api (${caller.username}): activate version ${version}`;
const RESTORE_TRIGGER = /: activate version \d+$/;

/**
 * GET /admin/gensynchaprx as any caller: the administrator's call (and every call when PROXY_GENERATION_DEBOUNCE is
 * 0) runs at once; a tenant's call joins the first run that starts after it arrived, waiting out the debounce window
 * since the last run (haproxy/joining.ts), so that tenants together cause at most one generation, and one reload, per
 * window. A joined run answers with its own notes and run id.
 */
export async function runGenSyncForCaller(
  env: Env,
  input: { caller: Caller; now: Date },
): Promise<{ runId: number; notes: BundleNote[]; joined: boolean }> {
  const settings = proxySettings(env);
  const debounceMs = settings.PROXY_GENERATION_DEBOUNCE;
  const runNow = (now: Date) => runGenSyncFromApi(env, { ...input, now }).then((run) => ({ ...run, joined: false }));
  if (input.caller.isAdmin || debounceMs === 0) return runNow(input.now);
  const db = database(env.DB);
  const ports: JoinPorts<{ runId: number; notes: BundleNote[]; joined: boolean }> = {
    async latestStartedRun() {
      const row = await latestStartedRun(db, genSyncJob.kind);
      return row && { ...row, startedAt: row.startedAt!.getTime(), restore: RESTORE_TRIGGER.test(row.trigger) };
    },
    run: () => runNow(new Date()),
    joined: (runId) => joinedRun(db, runId),
    isBusy: (error) => error instanceof JobLocked,
    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    now: () => Date.now(),
  };
  // Long enough for one window and a run that checks and applies (two agent calls) before it.
  const deadlineMs = debounceMs + 2 * settings.HAPROXY_AGENT_TIMEOUT + 10_000;
  return joinOrRun(ports, { debounceMs, deadlineMs });
}

/**
 * The warnings of a generation as the caller may read them: the administrator all of them; anybody else only those
 * about projects it may access (never another tenant's backends or domains, nor the installation's agents).
 */
export const warningsFor = (caller: Caller, notes: readonly BundleNote[]): string[] =>
  notes
    .filter((note) => caller.isAdmin || (note.project !== null && mayAccessProject(caller, note.project)))
    .map((note) => note.text);

/** The outcome of a run a tenant's call joined: its notes, or its failure as a tenant may read it (the run's id). */
async function joinedRun(db: Database, runId: number) {
  const [run, notes] = await Promise.all([getJobRun(db, runId), notesOfRun(db, runId)]);
  if (run?.state !== "succeeded" || notes === undefined) {
    const where = `(job run ${runId}; an administrator can read GET /admin/jobs/${runId})`;
    throw new HttpError(500, `${GENSYNC_FAILED}the run this call joined failed ${where}`, {
      "X-Job-Id": String(runId),
    });
  }
  return { runId, notes, joined: true };
}

/**
 * POST /admin/haproxy/versions/{version}/activate: re-ships a stored version as a new one, as gensynchaprx ships a
 * generated one (its lock, its run, its answers).
 */
export async function runHaproxyRestoreFromApi(
  env: Env,
  input: { caller: Caller; now: Date; version: number },
): Promise<{ runId: number; version: number; warnings: string[] }> {
  return runHaproxyFromApi(env, { ...input, trigger: restoreTrigger(input.caller, input.version) }, (runId) =>
    restoreVersion(env, {
      runId,
      now: input.now,
      version: input.version,
      queueSlaveSyncs: queueSlaveSyncs(env, runId),
    }).then((applied) => withWarnings(applied)),
  );
}

/** Recorded as a gensynchaprx run; every failure answers the spec's 500 message (see runGenSyncFromApi). */
function runHaproxyFromApi<T extends { warnings: string[] }>(
  env: Env,
  input: { caller: Caller; now: Date; trigger: string },
  work: (runId: number) => Promise<T>,
): Promise<T & { runId: number }> {
  return runConfigJobFromApi(env, {
    kind: genSyncJob.kind,
    trigger: input.trigger,
    now: input.now,
    work: (_db, runId) => work(runId),
    failed: (expected, _error, runId) => {
      const failure = expected ?? new HttpError(500, `${GENSYNC_FAILED}internal error (see the logs)`);
      return { recorded: failure.message, thrown: genSyncFailureFor(input.caller, failure, runId) };
    },
  });
}

/**
 * An API call's run under the shared lock (423 when held), recorded as a run of `kind`: succeeded with the work's
 * warnings, or failed with what `failed` records, which also says what the caller gets. `expected` is the failure
 * when it is an HttpError; any other is logged, and its text stays out of the run and the answer.
 */
async function runConfigJobFromApi<T extends { warnings: string[] }>(
  env: Env,
  input: {
    kind: typeof genSyncJob.kind | typeof sshProxyJob.kind;
    trigger: string;
    now: Date;
    work: (db: Database, runId: number) => Promise<T>;
    failed: (expected: HttpError | undefined, error: unknown, runId: number) => { recorded: string; thrown: unknown };
  },
): Promise<T & { runId: number }> {
  const holder = crypto.randomUUID();
  return withJobLock(env, CONFIG_LOCK, { holder, kind: input.kind }, async () => {
    const db = database(env.DB);
    const runId = await startJobRun(db, { kind: input.kind, trigger: input.trigger, now: input.now });
    try {
      const result = await input.work(db, runId);
      await finishJobRun(db, { id: runId, now: new Date(), state: "succeeded", warnings: result.warnings });
      return { ...result, runId };
    } catch (error) {
      const expected = error instanceof HttpError ? error : undefined;
      if (!expected) logError(`proxy: ${input.kind} run ${runId} failed`, error);
      const { recorded, thrown } = input.failed(expected, error, runId);
      await finishJobRun(db, { id: runId, now: new Date(), state: "failed", error: recorded });
      throw thrown;
    }
  });
}

/** The queued gensynchaprx (after certificates changed): a held lock throws, and the queue retries later. */
export async function runQueuedGenSync(
  env: Env,
  input: { runId: number; lockHolder?: string; now: Date },
): Promise<JobOutcome> {
  const holder = input.lockHolder ?? `run-${input.runId}`;
  return withJobLock(env, CONFIG_LOCK, { holder, kind: genSyncJob.kind }, async () => {
    const { notes } = await generateAndApply(env, {
      runId: input.runId,
      now: input.now,
      queueSlaveSyncs: queueSlaveSyncs(env, input.runId),
    });
    return { warnings: notes.map((note) => note.text) };
  });
}

/** The queued writesshprx: under the lock its API call took (or a fresh one), shared with gensynchaprx. */
export async function runSshProxyJob(
  env: Env,
  input: { runId: number; lockHolder?: string; now: Date },
): Promise<JobOutcome> {
  const settings = proxySettings(env);
  const holder = input.lockHolder ?? `run-${input.runId}`;
  return withJobLock(env, CONFIG_LOCK, { holder, kind: sshProxyJob.kind }, async () => {
    const { warnings } = await writeSshProxyConfiguration(database(env.DB), {
      runId: input.runId,
      ...sshProxySettingsOf(settings),
      kept: settings.SSH_PROXY_VERSIONS_KEPT,
      now: input.now,
    });
    return { warnings };
  });
}

/**
 * POST /admin/sshproxy/versions/{version}/activate: under the lock writesshprx takes (423 when held), stores an
 * older version again as the one in force, recorded as a writesshprx run.
 */
export async function runSshProxyRestoreFromApi(
  env: Env,
  input: { caller: Caller; now: Date; version: number },
): Promise<{ runId: number; version: number; warnings: string[] }> {
  return runConfigJobFromApi(env, {
    kind: sshProxyJob.kind,
    trigger: `api (${input.caller.username}): activate version ${input.version}`,
    now: input.now,
    work: (db, runId) =>
      restoreSshProxyVersion(db, {
        runId,
        version: input.version,
        kept: proxySettings(env).SSH_PROXY_VERSIONS_KEPT,
        now: input.now,
      }),
    failed: (expected, error) => ({ recorded: expected?.message ?? "internal error (see the logs)", thrown: error }),
  });
}

/** The queued certificate job: under the maintenance lock (its API call's, or a fresh one). */
export async function runCertificateJob(env: Env, input: { runId: number; lockHolder?: string }): Promise<JobOutcome> {
  const db = database(env.DB);
  const settings = proxySettings(env);
  const lock = { holder: input.lockHolder ?? `run-${input.runId}`, kind: certificatesJob.kind };
  return withJobLock(env, MAINTENANCE_LOCK, lock, async () => {
    const warnings = await maintainCertificates(db, {
      settings,
      issuer: acmeIssuer(db, settings),
      now: () => new Date(),
      random: Math.random,
      keepLock: () => acquireJobLock(env, MAINTENANCE_LOCK, lock),
      queueGenSync: () => enqueueJob(env, { kind: genSyncJob.kind }, `${certificatesJob.kind} run ${input.runId}`),
    });
    return { warnings };
  });
}
