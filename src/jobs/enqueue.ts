// Queuing jobs: record the run, then send its message. Used by the cron schedules and by the services' endpoints that
// start detached jobs. A message is `{kind, runId, ...fields}`; its definition (src/jobs/define.ts) types the fields
// where it is queued (JobRequest) and checks them where it is run.
import { database } from "../shared/db";
import { createJobRun, createJobRuns } from "./history";

/** A job message before its run is recorded: its kind and its fields (every field but runId). */
export type QueuedRequest = { kind: string } & Record<string, unknown>;

/** Queues a job run and returns its id. A kind alone stands for a message with no fields. */
export async function enqueueJob(env: Env, job: string | QueuedRequest, trigger: string): Promise<number> {
  const request = typeof job === "string" ? { kind: job } : job;
  const runId = await createJobRun(database(env.DB), { kind: request.kind, trigger });
  await env.JOBS.send({ ...request, runId });
  return runId;
}

/**
 * Queues several job runs at once: their runs in one D1 statement, their messages in one sendBatch call (a
 * gensynchaprx queues one slave sync per slave agent this way). Returns the run ids in order.
 */
export async function enqueueJobs(env: Env, requests: readonly QueuedRequest[], trigger: string): Promise<number[]> {
  if (requests.length === 0) return [];
  const runIds = await createJobRuns(
    database(env.DB),
    requests.map((request) => ({ kind: request.kind, trigger })),
  );
  await env.JOBS.sendBatch(requests.map((request, index) => ({ body: { ...request, runId: runIds[index] } })));
  return runIds;
}
