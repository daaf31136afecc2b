// How a job kind is declared: its kind string (spelled here, once), the fields of its queue message, what it runs and
// where it may not run. The platform (queue consumer, cron, enqueue) works from these definitions and knows no service.
import { z } from "../shared/zod";
import type { QueuedRequest } from "./enqueue";

export interface JobOutcome {
  warnings: string[];
}

/** Where a delivery stands: runners that report elsewhere (slave syncs) act on the last attempt. */
export interface JobContext {
  attempts: number;
  lastAttempt: boolean;
}

const runId = z.number().int().positive();

/** The queue message of a kind: `{kind, runId, ...fields}`, nothing else. */
export type MessageSchema<K extends string, F extends z.ZodRawShape> = z.ZodObject<
  { kind: z.ZodLiteral<K>; runId: typeof runId } & F,
  z.core.$strict
>;

export interface JobDefinition<K extends string = string, F extends z.ZodRawShape = z.ZodRawShape> {
  readonly kind: K;
  readonly message: MessageSchema<K, F>;
  run(env: Env, message: z.output<MessageSchema<K, F>>, now: Date, context: JobContext): Promise<JobOutcome>;
  /** Why this instance must not run the kind (a slave, for the proxy's master-only jobs), or undefined when it may. */
  refusal?(env: Env, kind: K): string | undefined;
}

/** Any definition, as the platform holds them (`any` fields: a run's message type is checked where it is defined). */
export type AnyJobDefinition = JobDefinition<string, any>;

export function defineJob<K extends string, F extends z.ZodRawShape>(spec: {
  kind: K;
  fields: F;
  run: JobDefinition<K, F>["run"];
  refusal?: JobDefinition<K, F>["refusal"];
}): JobDefinition<K, F> {
  const message = z.strictObject({ kind: z.literal(spec.kind), runId, ...spec.fields }) as MessageSchema<K, F>;
  return { kind: spec.kind, message, run: spec.run, refusal: spec.refusal };
}

/** What a caller queues for a definition: its message without the run id (recorded when it is queued). */
export type JobRequest<D extends AnyJobDefinition> = Omit<z.output<D["message"]>, "runId">;

/**
 * Work a cron schedule does in place, with no queue message nor job run of its own (the sweep that fails dead runs,
 * every minute); answers what it did, for the log.
 */
export type Sweep = (env: Env, now: Date) => Promise<string[]>;

/**
 * What a cron schedule starts: messages to queue one by one, `{batch}` to record and send together, or `{sweep}` to do
 * in place.
 */
export type ScheduledJobs =
  ((env: Env) => QueuedRequest[]) | { batch: (env: Env) => QueuedRequest[] } | { sweep: Sweep };

/** Every job kind and every cron schedule of the Worker (src/job-registry.ts builds the one instance). */
export interface JobRegistry {
  jobs: ReadonlyMap<string, AnyJobDefinition>;
  schedules: Readonly<Record<string, readonly ScheduledJobs[]>>;
}

export function jobRegistry(
  definitions: readonly AnyJobDefinition[],
  schedules: Record<string, readonly ScheduledJobs[]>,
): JobRegistry {
  const jobs = new Map<string, AnyJobDefinition>();
  for (const definition of definitions) {
    if (jobs.has(definition.kind)) throw new Error(`job kind ${definition.kind} is defined twice`);
    jobs.set(definition.kind, definition);
  }
  return { jobs, schedules };
}

/**
 * Only the envelope, to find the definition that then reads the rest of the message. `lostEnd` is the platform's: a
 * message sent again because D1 could not record the end of the attempt it names (src/jobs/queue.ts).
 */
export const JobEnvelope = z.object({
  kind: z.string().min(1).max(64),
  runId,
  lostEnd: z.object({ startedAt: z.number().int(), attempt: z.number().int().positive() }).optional(),
});
