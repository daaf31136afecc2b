// Cron Triggers: each schedule of the registry queues its jobs, recording a queued run for each; a kind this instance
// must not run (a slave, for the proxy's master-only jobs) is left out and logged.
import { logInfo } from "../shared/log";
import type { JobRegistry } from "./define";
import { enqueueJob, enqueueJobs, type QueuedRequest } from "./enqueue";

/** Queues the jobs of the controller's schedule; returns the ids of the runs queued. */
export async function handleScheduled(
  controller: ScheduledController,
  env: Env,
  registry: JobRegistry,
): Promise<number[]> {
  const scheduled = registry.schedules[controller.cron];
  if (!scheduled) throw new Error(`no jobs are scheduled for cron "${controller.cron}"`);
  const runsHere = (request: QueuedRequest) => {
    const refusal = registry.jobs.get(request.kind)?.refusal?.(env, request.kind);
    if (refusal) logInfo(`jobs: cron "${controller.cron}" does not queue ${request.kind}`, { reason: refusal });
    return !refusal;
  };
  const single = scheduled.flatMap((jobs) => (typeof jobs === "function" ? jobs(env).filter(runsHere) : []));
  const batches = scheduled.flatMap((jobs) => (typeof jobs === "object" ? [jobs.batch(env).filter(runsHere)] : []));
  const singleIds = await Promise.all(single.map((request) => enqueueJob(env, request, controller.cron)));
  const batchIds = await Promise.all(batches.map((batch) => enqueueJobs(env, batch, controller.cron)));
  return [...singleIds, ...batchIds.flat()];
}
