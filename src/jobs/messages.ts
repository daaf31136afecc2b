// The messages on the jobs queue: one variant per job kind, each naming the job run it belongs to.
import { z } from "zod";

export const JobMessage = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("housekeeping"), runId: z.number().int().positive() }),
  /** One news publisher's ingestion: "guardian", "nyt" or "feed:<url>" (src/news/ingest/run.ts). */
  z.object({ kind: z.literal("news-ingest"), runId: z.number().int().positive(), publisher: z.string().min(1).max(4096) }),
]);
export type JobMessage = z.infer<typeof JobMessage>;
export type JobKind = JobMessage["kind"];
