// The queue consumer: reads each message's envelope, finds its job definition in the registry, checks the whole
// message, runs it and records the outcome on the job run. Poison messages are acked and logged; failures retry with
// exponential backoff until the last attempt.
import { database } from "../shared/db";
import { logError, logInfo, logWarn } from "../shared/log";
import { JobEnvelope, type JobRegistry } from "./define";
import { finishJobRun, markJobRunning } from "./history";

/** Must match max_retries + 1 of the consumer in wrangler.toml: the last attempt records the failure. */
export const MAX_ATTEMPTS = 6;

/** 30 s, 60 s, 120 s ... capped at one hour. */
export const retryDelaySeconds = (attempts: number) => Math.min(30 * 2 ** Math.max(0, attempts - 1), 3600);

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
    const job = parsed.data as { kind: string; runId: number };
    // A job this instance must not run (a master-only job on a slave, queued before INSTANCE_ROLE changed, say) is
    // refused for good: acked, its run failed without being started. A retry would only come back here.
    const refusal = definition.refusal?.(env, definition.kind);
    if (refusal) {
      logWarn(`jobs: refused ${job.kind} run ${job.runId}`, { reason: refusal });
      await finishJobRun(db, { id: job.runId, now: new Date(), state: "failed", error: refusal });
      message.ack();
      continue;
    }
    await markJobRunning(db, { id: job.runId, now: new Date() });
    try {
      const outcome = await definition.run(env, job, new Date(), {
        attempts: message.attempts,
        lastAttempt: message.attempts >= MAX_ATTEMPTS,
      });
      await finishJobRun(db, { id: job.runId, now: new Date(), state: "succeeded", warnings: outcome.warnings });
      logInfo("jobs: finished", { kind: job.kind, runId: job.runId });
      message.ack();
    } catch (error) {
      logError(`jobs: ${job.kind} run ${job.runId} failed on attempt ${message.attempts}`, error);
      const lastAttempt = message.attempts >= MAX_ATTEMPTS;
      const text = error instanceof Error ? error.message : String(error);
      await finishJobRun(db, { id: job.runId, now: new Date(), state: lastAttempt ? "failed" : "queued", error: text });
      if (lastAttempt) message.ack();
      else message.retry({ delaySeconds: retryDelaySeconds(message.attempts) });
    }
  }
}
