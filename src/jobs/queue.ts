// The queue consumer: reads each message's envelope, finds its job definition in the registry, checks the whole
// message, claims its run and runs it, beating while it goes, and records the outcome on the job run. Queues deliver
// at least once: a message whose run is finished, or running elsewhere, is acked and does nothing. Poison messages
// are acked and logged; failures retry with exponential backoff until the last attempt.
import { database, type Database } from "../shared/db";
import { logError, logInfo, logWarn } from "../shared/log";
import { JobEnvelope, type AnyJobDefinition, type JobRegistry } from "./define";
import { withRunHeartbeat } from "./heartbeat";
import { finishJobRun, type RunEnd } from "./history";
import { claimJobRun, deadRunError, failDeadRun } from "./run-claims";
import { MAX_ATTEMPTS, retryDelaySeconds } from "./retries";
import { jobLivenessSettings } from "./settings";

type Job = { kind: string; runId: number };
type LostEnd = { startedAt: number; attempt: number };
/** A delivery's attempt: its number (counted on from an attempt whose end was lost) and its start. */
type Attempt = { number: number; startedAt: Date };

export async function handleQueue(batch: MessageBatch<unknown>, env: Env, registry: JobRegistry): Promise<void> {
  const db = database(env.DB);
  for (const message of batch.messages) {
    const envelope = JobEnvelope.safeParse(message.body);
    const definition = envelope.success ? registry.jobs.get(envelope.data.kind) : undefined;
    const { lostEnd: _, ...body } = envelope.success ? (message.body as Record<string, unknown>) : {};
    const parsed = definition?.message.safeParse(body);
    if (!definition || !parsed?.success) {
      const issues = parsed?.error?.issues ?? (envelope.success ? "unknown job kind" : envelope.error.issues);
      logError("jobs: dropping a malformed queue message", { id: message.id, issues });
      message.ack();
      continue;
    }
    const job = parsed.data as Job;
    // A job this instance must not run (a master-only job on a slave, queued before INSTANCE_ROLE changed, say) is
    // refused for good: acked, its run failed without being started. A retry would only come back here.
    const refusal = definition.refusal?.(env, definition.kind);
    if (refusal) {
      logWarn(`jobs: refused ${job.kind} run ${job.runId}`, { reason: refusal });
      await finishJobRun(db, { id: job.runId, now: new Date(), state: "failed", error: refusal });
      message.ack();
      continue;
    }
    const lostEnd = envelope.data!.lostEnd;
    const attempt = { number: (lostEnd?.attempt ?? 0) + message.attempts, startedAt: new Date() };
    if (await claimed(db, env, job, attempt.startedAt, lostEnd)) {
      await runClaimed(db, env, { definition, job, message, attempt });
    } else message.ack();
  }
}

/**
 * Whether this delivery may run the job: it claims the queued run. A second delivery (the queue's at-least-once
 * contract) finds it running or finished and does nothing; a redelivery after a crash finds its worker silent, and
 * fails the run with the cause rather than run its work twice.
 */
async function claimed(db: Database, env: Env, job: Job, now: Date, lostEnd?: LostEnd): Promise<boolean> {
  const heartbeatTimeoutMs = jobLivenessSettings(env).JOB_HEARTBEAT_TIMEOUT;
  const endLostOf = lostEnd && new Date(lostEnd.startedAt);
  const refusal = await claimJobRun(db, { id: job.runId, now, heartbeatTimeoutMs, endLostOf });
  if (refusal === null) return true;
  logWarn(`jobs: ignored a delivery of ${job.kind} run ${job.runId}`, { reason: refusal });
  if (refusal === "dead") await failDeadRun(db, { id: job.runId, now, error: deadRunError(heartbeatTimeoutMs) });
  return false;
}

/** Runs a claimed job, beating its run, and records the outcome: acked, or retried with backoff. */
async function runClaimed(
  db: Database,
  env: Env,
  input: { definition: AnyJobDefinition; job: Job; message: Message<unknown>; attempt: Attempt },
): Promise<void> {
  const { definition, job, message, attempt } = input;
  const lastAttempt = attempt.number >= MAX_ATTEMPTS;
  let end: Omit<RunEnd, "id" | "now">;
  try {
    const outcome = await withRunHeartbeat(env, job.runId, () =>
      definition.run(env, job, attempt.startedAt, { attempts: attempt.number, lastAttempt }),
    );
    end = { state: "succeeded", warnings: outcome.warnings };
    logInfo("jobs: finished", { kind: job.kind, runId: job.runId });
  } catch (error) {
    logError(`jobs: ${job.kind} run ${job.runId} failed on attempt ${attempt.number}`, error);
    end = { state: lastAttempt ? "failed" : "queued", error: error instanceof Error ? error.message : String(error) };
  }
  try {
    await finishJobRun(db, { id: job.runId, now: new Date(), ...end });
  } catch (error) {
    // The run stays `running`, which no redelivery of this message may claim (its worker might still be going): the
    // job goes again as a message naming this attempt, which its delivery may claim (a last attempt is not retried).
    if (lastAttempt) throw error;
    const delaySeconds = Math.min(
      retryDelaySeconds(attempt.number),
      jobLivenessSettings(env).JOB_HEARTBEAT_TIMEOUT / 2000,
    );
    const lostEnd: LostEnd = { startedAt: attempt.startedAt.getTime(), attempt: attempt.number };
    await env.JOBS.send({ ...job, lostEnd }, { delaySeconds: Math.floor(delaySeconds) });
    logWarn(`jobs: the end of ${job.kind} run ${job.runId} was not recorded; sent again`, { error: String(error) });
    return message.ack();
  }
  if (end.state === "queued") message.retry({ delaySeconds: retryDelaySeconds(attempt.number) });
  else message.ack();
}
