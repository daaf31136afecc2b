// The proxy's jobs, every kind spelled here once (all five are master-only), and the queued runs they start: each
// under its lock, the one its API call took or a fresh one.
import { z } from "../../shared/zod";
import { defineJob, type AnyJobDefinition, type JobOutcome, type JobRequest } from "../../jobs/define";
import { enqueueJob, enqueueJobs, QueueSendFailed } from "../../jobs/enqueue";
import { childRunsOf } from "../../jobs/history";
import { database } from "../../shared/db";
import { SettingsError } from "../../shared/settings";
import { pruneAuditLog } from "../audit/log";
import { generateAndApply, syncSlave, type QueueSlaveSyncs } from "../haproxy/sync";
import { shippedByEarlierAttempt } from "../haproxy/settle";
import { reportUnsentSyncs } from "../haproxy/slave-sync";
import { acmeChangesUndeployed } from "../haproxy/versions";
import { acmeIssuer } from "../pki/acme-issuer";
import { maintainCertificates } from "../pki/maintenance";
import { proxySettings } from "../settings";
import { sshProxySettingsOf, writeSshProxyConfiguration } from "../sshproxy/versions";
import { DomainError } from "../../shared/domain-errors";
import { CONFIG_LOCK, MAINTENANCE_LOCK, renewJobLock, withJobLock } from "./locks";

/**
 * Spec 1: "Jobs run only on the master instance. A slave instance refuses them." A role that cannot be read (invalid
 * proxy settings) refuses too: running a master's job on a slave is worse than missing one run until they are fixed.
 */
export function masterOnly(env: Env, kind: string): string | undefined {
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

const slaveSyncTrigger = (parentRunId: number) => `${genSyncJob.kind} run ${parentRunId}`;

/** The slave syncs a gensynchaprx run queued: the ids of those sent, and the ends of those the queue refused. */
export const slaveSyncsOf = (env: Env, parentRunId: number) =>
  childRunsOf(database(env.DB), {
    kind: slaveSyncJob.kind,
    trigger: slaveSyncTrigger(parentRunId),
    after: parentRunId,
  });

/**
 * Queues a gensynchaprx run's slave syncs once (a run ships one version at most): a retry whose earlier attempt sent
 * them is answered those runs, one whose send failed queues them anew. A send the queue refuses is reported on the run
 * and the slaves' sync rows, and the sweep queues them again: the version is in force whatever the slaves' fate, so
 * the caller answers a warning, not an error. Any other failure (D1's) is thrown.
 */
export const queueSlaveSyncs =
  (env: Env, parentRunId: number): QueueSlaveSyncs =>
  async (syncs) => {
    if (syncs.length === 0) return { queued: [] };
    const { sent } = await slaveSyncsOf(env, parentRunId);
    if (sent.length === syncs.length) return { queued: sent };
    const request = (sync: (typeof syncs)[number]): JobRequest<typeof slaveSyncJob> => ({
      kind: slaveSyncJob.kind,
      parentRunId,
      ...sync,
    });
    try {
      return { queued: await enqueueJobs(env, syncs.map(request), slaveSyncTrigger(parentRunId)) };
    } catch (error) {
      if (!(error instanceof QueueSendFailed)) throw error;
      const { unsent } = await slaveSyncsOf(env, parentRunId);
      const agentUrls = syncs.map((sync) => sync.agentUrl);
      const report = { parentRunId, version: syncs[0].version, agentUrls, unsent, cause: error.message };
      return { refused: await reportUnsentSyncs(database(env.DB), report) };
    }
  };

// ---- the queued runs ----

/**
 * The queued gensynchaprx (after certificates changed): a held lock throws, and the queue retries later. A run ships
 * one version at most: when an earlier attempt of it stored one the agent did not refuse (its outcome was lost, say
 * to a failed write of the run's end, or to a timeout), a retry settles that version with the agent and answers its
 * notes, shipping nothing.
 */
export async function runQueuedGenSync(
  env: Env,
  input: { runId: number; lockHolder?: string; now: Date },
): Promise<JobOutcome> {
  const holder = input.lockHolder ?? `run-${input.runId}`;
  return withJobLock(env, CONFIG_LOCK, { holder, kind: genSyncJob.kind }, async () => {
    const slaves = queueSlaveSyncs(env, input.runId);
    const shipped = await shippedByEarlierAttempt(env, { runId: input.runId, queueSlaveSyncs: slaves });
    if (shipped) return { warnings: shipped.map((note) => note.text) };
    const holdsLock = () => renewJobLock(env, CONFIG_LOCK, holder);
    const run = { runId: input.runId, now: input.now, queueSlaveSyncs: slaves, holdsLock };
    const { notes } = await generateAndApply(env, run);
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

/** The queued certificate job: under the maintenance lock (its API call's, or a fresh one). */
export async function runCertificateJob(env: Env, input: { runId: number; lockHolder?: string }): Promise<JobOutcome> {
  const db = database(env.DB);
  const settings = proxySettings(env);
  const lock = { holder: input.lockHolder ?? `run-${input.runId}`, kind: certificatesJob.kind };
  let followUp = false;
  const outcome = await withJobLock(env, MAINTENANCE_LOCK, lock, async () => {
    const warnings = await maintainCertificates(db, {
      settings,
      issuer: acmeIssuer(db, settings),
      now: () => new Date(),
      random: Math.random,
      keepLock: async () => {
        if (!(await renewJobLock(env, MAINTENANCE_LOCK, lock.holder)))
          throw new DomainError("locked", `the ${MAINTENANCE_LOCK} lock was lost (a heartbeat came too late)`);
      },
      queueGenSync: () => enqueueJob(env, { kind: genSyncJob.kind }, `${certificatesJob.kind} run ${input.runId}`),
      queueFollowUp: () => {
        followUp = true;
      },
      acmeChangesUndeployed: () => acmeChangesUndeployed(db),
    });
    return { warnings };
  });
  // Queued once the lock is free: queued under it, the next run's first try would find the lock still held.
  if (followUp) await enqueueJob(env, { kind: certificatesJob.kind }, `${certificatesJob.kind} run ${input.runId}`);
  return outcome;
}
