// Queuing jobs: record the run, then send its message; a send that fails fails the run with the cause, so that no
// run waits in `queued` for a message that does not exist (a worker dying between the two leaves one the sweep fails
// after JOB_QUEUED_TIMEOUT). Used by the cron schedules and by the services' endpoints that start detached jobs. A
// message is `{kind, runId, ...fields}`; its definition (src/jobs/define.ts) types the fields where it is queued
// (JobRequest) and checks them where it is run.
import { sql, type SQL } from "drizzle-orm";
import { commitBatch, database, type Database, type Statement } from "../shared/db";
import { logError } from "../shared/log";
import { createJobRun, createJobRuns, finishJobRun, jobRunInsert } from "./history";

/** A job message before its run is recorded: its kind and its fields (every field but runId). */
export type QueuedRequest = { kind: string } & Record<string, unknown>;

/**
 * A write that stands or falls with a queued run (the audit entry of a job an API call started): it goes in the D1
 * batch that records the run, so that neither is written without the other, and `undo`, given the rows it returned,
 * goes in the write that fails the run when its message cannot be sent.
 */
export interface RecordedWithRun {
  /** The write, given the new run's id as SQL. */
  write: (runId: SQL) => Statement;
  undo: (returned: Record<string, unknown>[]) => Statement;
}

/** A recorded run, and what its failed send takes back with it. */
type RecordedRun = { id: number; undo: Statement[] };

/**
 * The queue refused runs' messages: the runs are recorded failed ("its queue message could not be sent"), so that a
 * caller that can send them later knows they are owed. Its message is the queue's.
 */
export class QueueSendFailed extends Error {
  override name = "QueueSendFailed";
  constructor(cause: unknown) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
  }
}

/** Sends the runs' messages; if the send fails, the runs fail with the cause and QueueSendFailed is thrown. */
async function sendOrFail(db: Database, runs: readonly RecordedRun[], send: () => Promise<unknown>): Promise<void> {
  try {
    await send();
  } catch (error) {
    logError(`jobs: could not queue runs ${runs.map((run) => run.id).join(", ")}`, error);
    const cause = error instanceof Error ? error.message : String(error);
    const now = new Date();
    const failed = { now, state: "failed" as const, error: `its queue message could not be sent: ${cause}` };
    await Promise.all(runs.map((run) => finishJobRun(db, { id: run.id, ...failed }, run.undo)));
    throw new QueueSendFailed(error);
  }
}

/**
 * Records a queued run, with `alongside` in the same batch when given. It comes right after the run's insert on the
 * same connection, so last_insert_rowid() there is the run's id (read before its own row is inserted).
 */
async function recordRun(
  db: Database,
  input: { kind: string; trigger: string },
  alongside?: RecordedWithRun,
): Promise<RecordedRun> {
  if (!alongside) return { id: await createJobRun(db, input), undo: [] };
  const insertRun = jobRunInsert(db, input);
  const [[run], returned] = await commitBatch(db, [insertRun, alongside.write(sql`last_insert_rowid()`)]);
  return { id: Number(run.id), undo: [alongside.undo(returned)] };
}

/**
 * Queues a job run and returns its id. A kind alone stands for a message with no fields. `alongside` is written with
 * the run (RecordedWithRun): a run whose batch fails is neither recorded nor sent.
 */
export async function enqueueJob(
  env: Env,
  job: string | QueuedRequest,
  trigger: string,
  alongside?: RecordedWithRun,
): Promise<number> {
  const request = typeof job === "string" ? { kind: job } : job;
  const db = database(env.DB);
  const run = await recordRun(db, { kind: request.kind, trigger }, alongside);
  await sendOrFail(db, [run], () => env.JOBS.send({ ...request, runId: run.id }));
  return run.id;
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
  const runs = runIds.map((id) => ({ id, undo: [] }));
  await sendOrFail(db, runs, () => env.JOBS.sendBatch(messages));
  return runIds;
}
