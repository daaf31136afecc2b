// Delivers messages to the Worker's queue handler as the edge-jobs queue would, for the tests of detached jobs.
import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { vi } from "vitest";
import worker from "../../src/index";

/** A message as the queue hands it over (its timestamp is the delivery's). */
export interface QueuedMessage {
  id: string;
  attempts: number;
  body: unknown;
}

/** Delivers the messages in one batch; returns what the handler acked or retried, and a spy on each retry(). */
export async function deliverBatch(messages: QueuedMessage[], workerEnv: Env) {
  const batch = createMessageBatch(
    "edge-jobs",
    messages.map((message) => ({ ...message, timestamp: new Date() })),
  );
  const retries = batch.messages.map((message) => vi.spyOn(message, "retry"));
  const ctx = createExecutionContext();
  await worker.queue(batch, workerEnv, ctx);
  return { result: await getQueueResult(batch, ctx), retries };
}
