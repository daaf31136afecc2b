// The queue consumer: reads each message's envelope, finds its job definition in the registry, checks the whole
// message, claims its run and runs it, beating while it goes, and records the outcome on the job run. Queues deliver
// at least once: a message whose run is finished, or running elsewhere, is acked and does nothing. Poison messages
// are acked and logged; failures retry with exponential backoff until the last attempt.
import { database, type Database } from "../shared/db";
import { logError, logInfo, logWarn } from "../shared/log";
import { JobEnvelope, type AnyJobDefinition, type JobRegistry } from "./define";
import { withRunHeartbeat } from "./heartbeat";
import { finishJobRun } from "./history";
import { claimJobRun, deadRunError, failDeadRun } from "./run-claims";
import { MAX_ATTEMPTS, retryDelaySeconds } from "./retries";
import { jobLivenessSettings } from "./settings";

type Job = { kind: string; runId: number };

export async function handleQueue(batch: MessageBatch<unknown>, env: Env, registry: JobRegistry): Promise<void> {
  const db = database(env.DB);
  for (const message of batch.messages) {
    const envelope = JobEnvelope.safeParse(message.body);
    const definition = envelope.success ? registry.jobs.get(envelope.data.kind) : undefined;
    const parsed = definition?.message.safeParse(message.body);
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
    if (await claimed(db, env, job)) await runClaimed(db, env, { definition, job, message });
    else message.ack();
  }
}

/**
 * Whether this delivery may run the job: it claims the queued run. A second delivery (the queue's at-least-once
 * contract) finds it running or finished and does nothing; a redelivery after a crash finds its worker silent, and
 * fails the run with the cause rather than run its work twice.
 */
async function claimed(db: Database, env: Env, job: Job): Promise<boolean> {
  const now = new Date();
  const heartbeatTimeoutMs = jobLivenessSettings(env).JOB_HEARTBEAT_TIMEOUT;
  const refusal = await claimJobRun(db, { id: job.runId, now, heartbeatTimeoutMs });
  if (refusal === null) return true;
  logWarn(`jobs: ignored a delivery of ${job.kind} run ${job.runId}`, { reason: refusal });
  if (refusal === "dead") await failDeadRun(db, { id: job.runId, now, error: deadRunError(heartbeatTimeoutMs) });
  return false;
}

/** Runs a claimed job, beating its run, and records the outcome: acked, or retried with backoff. */
async function runClaimed(
  db: Database,
  env: Env,
  input: { definition: AnyJobDefinition; job: Job; message: Message<unknown> },
): Promise<void> {
  const { definition, job, message } = input;
  const lastAttempt = message.attempts >= MAX_ATTEMPTS;
  try {
    const outcome = await withRunHeartbeat(env, job.runId, () =>
      definition.run(env, job, new Date(), { attempts: message.attempts, lastAttempt }),
    );
    await finishJobRun(db, { id: job.runId, now: new Date(), state: "succeeded", warnings: outcome.warnings });
    logInfo("jobs: finished", { kind: job.kind, runId: job.runId });
    message.ack();
  } catch (error) {
    logError(`jobs: ${job.kind} run ${job.runId} failed on attempt ${message.attempts}`, error);
    const text = error instanceof Error ? error.message : String(error);
    await finishJobRun(db, { id: job.runId, now: new Date(), state: lastAttempt ? "failed" : "queued", error: text });
    if (lastAttempt) message.ack();
    else message.retry({ delaySeconds: retryDelaySeconds(message.attempts) });
  }
}
