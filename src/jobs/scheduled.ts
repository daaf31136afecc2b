// Cron Triggers: each schedule in wrangler.toml enqueues its jobs, recording a queued run for each.
import { listPublishers } from "../news/ingest/run";
import { newsSettings } from "../news/settings";
import { database } from "../shared/db";
import { createJobRun } from "./history";
import type { JobKind, JobMessage } from "./messages";

/** A job message before its run is recorded (every field but runId). */
export type JobRequest = JobMessage extends infer M ? (M extends JobMessage ? Omit<M, "runId"> : never) : never;

/** Kinds whose message carries nothing but the run id, so that naming the kind is enough. */
export type PlainJobKind = {
  [K in JobKind]: Exclude<keyof Extract<JobMessage, { kind: K }>, "kind" | "runId"> extends never ? K : never;
}[JobKind];

/** What a schedule starts: a plain kind, or a function listing the messages to queue from the settings. */
export type ScheduledJob = PlainJobKind | ((env: Env) => JobRequest[]);

/** Which jobs each cron expression of wrangler.toml starts. */
export const schedules: Record<string, ScheduledJob[]> = {
  "5 0 * * *": ["housekeeping"],
  // One message (and job run) per news publisher, so that one publisher's failure never blocks the others.
  "*/30 * * * *": [(env) => listPublishers(newsSettings(env)).map((publisher) => ({ kind: "news-ingest", publisher }))],
};

/** Queues a job run and returns its id; shared by cron and by API endpoints that start detached jobs. */
export async function enqueueJob(env: Env, job: PlainJobKind | JobRequest, trigger: string): Promise<number> {
  const request = typeof job === "string" ? { kind: job } : job;
  const runId = await createJobRun(database(env.DB), { kind: request.kind, trigger });
  const message = { ...request, runId } as JobMessage;
  await env.JOBS.send(message);
  return runId;
}

export async function handleScheduled(controller: ScheduledController, env: Env): Promise<number[]> {
  const jobs = schedules[controller.cron];
  if (!jobs) throw new Error(`no jobs are scheduled for cron "${controller.cron}"`);
  const requests = jobs.flatMap((job): (PlainJobKind | JobRequest)[] => (typeof job === "function" ? job(env) : [job]));
  return Promise.all(requests.map((request) => enqueueJob(env, request, controller.cron)));
}
