// The one composition root of detached work: every job kind (the platform's own and each service's) and the cron
// schedules of wrangler.toml. The jobs platform reads this registry; it imports no service itself.
import { jobRegistry } from "./jobs/define";
import { housekeepingJob } from "./jobs/housekeeping";
import { SWEEP_CRON, sweepSilentRuns } from "./jobs/sweep";
import { newsIngestJob, newsIngestRequests } from "./news/index";
import { dailyProxyRequests, proxyJobs, queueUnsentSlaveSyncs, settlePendingVersions } from "./proxy/index";

export const registry = jobRegistry([housekeepingJob, newsIngestJob, ...proxyJobs], {
  // Housekeeping, and the proxy's certificate maintenance (the original ran it from the system cron at 00:05), whose
  // run is recorded and sent with one sendBatch.
  "5 0 * * *": [() => [{ kind: housekeepingJob.kind }], { batch: dailyProxyRequests }],
  // One message (and job run) per news publisher, so that one publisher's failure never blocks the others.
  "*/30 * * * *": [newsIngestRequests],
  // Every minute, in place: runs whose worker died or whose message was lost fail with their cause, HAProxy versions
  // such a run left pending are settled from the master agent's status, and slave syncs the queue refused are queued
  // again.
  [SWEEP_CRON]: [{ sweep: sweepSilentRuns }, { sweep: settlePendingVersions }, { sweep: queueUnsentSlaveSyncs }],
});
