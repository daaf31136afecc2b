// Cron Triggers: each schedule in wrangler.toml enqueues its jobs, recording a queued run for each.
import { database } from "../shared/db";
import { createJobRun } from "./history";
import type { JobKind, JobMessage } from "./messages";

/** Which jobs each cron expression of wrangler.toml starts. */
export const schedules: Record<string, JobKind[]> = {
  "5 0 * * *": ["housekeeping"],
};

/** Queues a job run and returns its id; shared by cron and by API endpoints that start detached jobs. */
export async function enqueueJob(env: Env, kind: JobKind, trigger: string): Promise<number> {
  const runId = await createJobRun(database(env.DB), { kind, trigger });
  const message: JobMessage = { kind, runId };
  await env.JOBS.send(message);
  return runId;
}

export async function handleScheduled(controller: ScheduledController, env: Env): Promise<number[]> {
  const kinds = schedules[controller.cron];
  if (!kinds) throw new Error(`no jobs are scheduled for cron "${controller.cron}"`);
  return Promise.all(kinds.map((kind) => enqueueJob(env, kind, controller.cron)));
}
