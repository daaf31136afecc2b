// The news-ingest job: one queued run per publisher (so one publisher's failure never blocks the others), and the
// messages the half-hourly cron queues.
import { z } from "../../shared/zod";
import { defineJob, type JobRequest } from "../../jobs/define";
import { database } from "../../shared/db";
import { newsSettings } from "../settings";
import { ingestPublisher, listPublishers } from "./run";

export const newsIngestJob = defineJob({
  kind: "news-ingest",
  /** "guardian", "nyt", "feed:<url>" or "sample:<format>" (run.ts). */
  fields: { publisher: z.string().min(1).max(4096) },
  run(env, message, now) {
    // The global fetch is looked up at call time, so the tests' interception of outbound fetch applies.
    const fetcher = (url: string, init?: RequestInit) => fetch(url, init);
    return ingestPublisher(database(env.DB), {
      publisher: message.publisher,
      settings: newsSettings(env),
      fetch: fetcher,
      now,
    });
  },
});

/** What the cron queues: one message per configured publisher. */
export function newsIngestRequests(env: Env): JobRequest<typeof newsIngestJob>[] {
  return listPublishers(newsSettings(env)).map((publisher) => ({ kind: newsIngestJob.kind, publisher }));
}
