// What each job kind does. The work itself lives with the data it touches; this table only dispatches.
import { ingestPublisher } from "../news/ingest/run";
import { newsSettings } from "../news/settings";
import { runCertificateJob } from "../proxy/certificate-job";
import { runQueuedGenSync, syncSlave } from "../proxy/haproxy-job";
import { runSshProxyJob } from "../proxy/ssh-proxy";
import { database } from "../shared/db";
import { pruneJobRuns } from "./history";
import type { JobKind, JobMessage } from "./messages";
import { jobSettings } from "./settings";

export interface JobOutcome {
  warnings: string[];
}

/** Where a delivery stands: runners that report elsewhere (slave syncs) act on the last attempt. */
export interface JobContext {
  attempts: number;
  lastAttempt: boolean;
}

type Runner<K extends JobKind> = (
  env: Env,
  message: Extract<JobMessage, { kind: K }>,
  now: Date,
  context: JobContext,
) => Promise<JobOutcome>;

export const jobRunners: { [K in JobKind]: Runner<K> } = {
  async housekeeping(env, _message, now) {
    const days = jobSettings(env).JOB_HISTORY_DAYS;
    const removed = await pruneJobRuns(database(env.DB), { before: new Date(now.getTime() - days * 86_400_000) });
    return { warnings: [`INFO: removed ${removed} job runs older than ${days} days`] };
  },
  "news-ingest"(env, message, now) {
    // The global fetch is looked up at call time, so the tests' interception of outbound fetch applies.
    const fetcher = (url: string, init?: RequestInit) => fetch(url, init);
    return ingestPublisher(database(env.DB), {
      publisher: message.publisher,
      settings: newsSettings(env),
      fetch: fetcher,
      now,
    });
  },
  gensynchaprx(env, message, now) {
    return runQueuedGenSync(env, { runId: message.runId, lockHolder: message.lockHolder, now });
  },
  "haproxy-slave-sync"(env, message, _now, context) {
    return syncSlave(env, { ...message, lastAttempt: context.lastAttempt, attempts: context.attempts });
  },
  writesshprx(env, message, now) {
    return runSshProxyJob(env, { runId: message.runId, lockHolder: message.lockHolder, now });
  },
  certificates(env, message) {
    // The job reads the clock as it goes: attempts are dated when they start, not when the run began.
    return runCertificateJob(env, { runId: message.runId, lockHolder: message.lockHolder });
  },
};
