// Queuing jobs: record the run, then send its message. Shared by the cron schedules and by the API endpoints that
// start detached jobs (kept apart from scheduled.ts so that services can queue jobs without importing the schedules).
import { database } from "../shared/db";
import { createJobRun, createJobRuns } from "./history";
import type { JobKind, JobMessage } from "./messages";

/** A job message before its run is recorded (every field but runId). */
export type JobRequest = JobMessage extends infer M ? (M extends JobMessage ? Omit<M, "runId"> : never) : never;

/** Kinds whose message carries nothing but the run id, so that naming the kind is enough. */
export type PlainJobKind = {
  [K in JobKind]: Exclude<keyof Extract<JobMessage, { kind: K }>, "kind" | "runId"> extends never ? K : never;
}[JobKind];

/** Queues a job run and returns its id. */
export async function enqueueJob(env: Env, job: PlainJobKind | JobRequest, trigger: string): Promise<number> {
  const request = typeof job === "string" ? { kind: job } : job;
  const runId = await createJobRun(database(env.DB), { kind: request.kind, trigger });
  const message = { ...request, runId } as JobMessage;
  await env.JOBS.send(message);
  return runId;
}

/**
 * Queues several job runs at once: their runs in one D1 statement, their messages in one sendBatch call (a
 * gensynchaprx queues one slave sync per slave agent this way). Returns the run ids in order.
 */
export async function enqueueJobs(env: Env, requests: JobRequest[], trigger: string): Promise<number[]> {
  if (requests.length === 0) return [];
  const runIds = await createJobRuns(
    database(env.DB),
    requests.map((request) => ({ kind: request.kind, trigger })),
  );
  await env.JOBS.sendBatch(
    requests.map((request, index) => ({ body: { ...request, runId: runIds[index] } as JobMessage })),
  );
  return runIds;
}
