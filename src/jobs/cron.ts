// Cron Triggers: each schedule of the registry queues its jobs, recording a queued run for each, or does its sweeps in
// place; a kind this instance must not run (a slave, for the proxy's master-only jobs) is left out and logged.
import { logError, logInfo } from "../shared/log";
import type { JobRegistry, Sweep } from "./define";
import { enqueueJob, enqueueJobs, type QueuedRequest } from "./enqueue";

/** Queues the jobs of the controller's schedule and does its sweeps; returns the ids of the runs queued. */
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
  const batches = scheduled.flatMap((jobs) => ("batch" in jobs ? [jobs.batch(env).filter(runsHere)] : []));
  const sweeps = scheduled.flatMap((jobs) => ("sweep" in jobs ? [jobs.sweep] : []));
  const [singleIds, batchIds] = await Promise.all([
    Promise.all(single.map((request) => enqueueJob(env, request, controller.cron))),
    Promise.all(batches.map((batch) => enqueueJobs(env, batch, controller.cron))),
    runSweeps(env, controller, sweeps),
  ]);
  return [...singleIds, ...batchIds.flat()];
}

/**
 * Runs the sweeps in their order (the platform's, which fails dead runs, before the services' that settle what those
 * runs left); one that fails is logged and does not keep the others, nor the next minute's, from running.
 */
async function runSweeps(env: Env, controller: ScheduledController, sweeps: readonly Sweep[]): Promise<void> {
  for (const sweep of sweeps) {
    // The time of each sweep, not of the schedule: a late invocation must not judge silence from an earlier clock.
    try {
      for (const note of await sweep(env, new Date())) logInfo(`jobs: sweep: ${note}`);
    } catch (error) {
      logError(`jobs: a sweep of cron "${controller.cron}" failed`, error);
    }
  }
}
