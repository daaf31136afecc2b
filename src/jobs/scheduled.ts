// Cron Triggers: each schedule in wrangler.toml enqueues its jobs, recording a queued run for each.
import { listPublishers } from "../news/ingest/run";
import { newsSettings } from "../news/settings";
import { logInfo } from "../shared/log";
import { enqueueJob, enqueueJobs, type JobRequest, type PlainJobKind } from "./enqueue";
import { masterOnlyRefusal } from "./instance-role";

export { enqueueJob, type JobRequest, type PlainJobKind } from "./enqueue";

/**
 * What a schedule starts: a plain kind, or a function listing the messages to queue from the settings (each sent on
 * its own), or `{batch}`: messages recorded and sent together with enqueueJobs (one sendBatch call).
 */
export type ScheduledJob = PlainJobKind | ((env: Env) => JobRequest[]) | { batch: (env: Env) => JobRequest[] };

/** Which jobs each cron expression of wrangler.toml starts. */
export const schedules: Record<string, ScheduledJob[]> = {
  // Housekeeping, and the proxy's certificate maintenance (the original ran it from the system cron at 00:05).
  "5 0 * * *": ["housekeeping", { batch: () => [{ kind: "certificates" }] }],
  // One message (and job run) per news publisher, so that one publisher's failure never blocks the others.
  "*/30 * * * *": [(env) => listPublishers(newsSettings(env)).map((publisher) => ({ kind: "news-ingest", publisher }))],
};

/**
 * Queues the schedule's jobs; on a slave instance, master-only kinds are left out (no run is recorded for them) and
 * logged. Returns the ids of the runs queued.
 */
export async function handleScheduled(controller: ScheduledController, env: Env): Promise<number[]> {
  const jobs = schedules[controller.cron];
  if (!jobs) throw new Error(`no jobs are scheduled for cron "${controller.cron}"`);
  const runsHere = (request: PlainJobKind | JobRequest) => {
    const kind = typeof request === "string" ? request : request.kind;
    const refusal = masterOnlyRefusal(env, kind);
    if (refusal) logInfo(`jobs: cron "${controller.cron}" does not queue ${kind}`, { reason: refusal });
    return !refusal;
  };
  const requests = jobs
    .flatMap((job): (PlainJobKind | JobRequest)[] =>
      typeof job === "function" ? job(env) : typeof job === "string" ? [job] : [],
    )
    .filter(runsHere);
  const batches = jobs.flatMap((job) => (typeof job === "object" ? [job.batch(env).filter(runsHere)] : []));
  const single = await Promise.all(requests.map((request) => enqueueJob(env, request, controller.cron)));
  const batched = await Promise.all(batches.map((batch) => enqueueJobs(env, batch, controller.cron)));
  return [...single, ...batched.flat()];
}
