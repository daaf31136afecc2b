// Queuing jobs: record the run, then send its message; a send that fails fails the run with the cause, so that no
// run waits in `queued` for a message that does not exist (a worker dying between the two leaves one the sweep fails
// after JOB_QUEUED_TIMEOUT). Used by the cron schedules and by the services' endpoints that start detached jobs. A
// message is `{kind, runId, ...fields}`; its definition (src/jobs/define.ts) types the fields where it is queued
// (JobRequest) and checks them where it is run.
import { database, type Database } from "../shared/db";
import { logError } from "../shared/log";
import { createJobRun, createJobRuns, finishJobRun } from "./history";

/** A job message before its run is recorded: its kind and its fields (every field but runId). */
export type QueuedRequest = { kind: string } & Record<string, unknown>;

/** Sends the runs' messages; if the send fails, the runs fail with the cause and the error is thrown on. */
async function sendOrFail(db: Database, runIds: readonly number[], send: () => Promise<unknown>): Promise<void> {
  try {
    await send();
  } catch (error) {
    logError(`jobs: could not queue runs ${runIds.join(", ")}`, error);
    const cause = error instanceof Error ? error.message : String(error);
    const now = new Date();
    const failed = { now, state: "failed" as const, error: `its queue message could not be sent: ${cause}` };
    await Promise.all(runIds.map((id) => finishJobRun(db, { id, ...failed })));
    throw error;
  }
}

/** Queues a job run and returns its id. A kind alone stands for a message with no fields. */
export async function enqueueJob(env: Env, job: string | QueuedRequest, trigger: string): Promise<number> {
  const request = typeof job === "string" ? { kind: job } : job;
  const db = database(env.DB);
  const runId = await createJobRun(db, { kind: request.kind, trigger });
  await sendOrFail(db, [runId], () => env.JOBS.send({ ...request, runId }));
  return runId;
}

/**
 * Queues several job runs at once: their runs in one D1 statement, their messages in one sendBatch call (a
 * gensynchaprx queues one slave sync per slave agent this way). Returns the run ids in order.
 */
export async function enqueueJobs(env: Env, requests: readonly QueuedRequest[], trigger: string): Promise<number[]> {
  if (requests.length === 0) return [];
  const db = database(env.DB);
  const runIds = await createJobRuns(
    db,
    requests.map((request) => ({ kind: request.kind, trigger })),
  );
  const messages = requests.map((request, index) => ({ body: { ...request, runId: runIds[index] } }));
  await sendOrFail(db, runIds, () => env.JOBS.sendBatch(messages));
  return runIds;
}
