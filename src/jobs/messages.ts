// The messages on the jobs queue: one variant per job kind, each naming the job run it belongs to.
import { z } from "zod";

const runId = z.number().int().positive();
/** Who holds (or is to take) the job's lock: the API call that started it, or the run itself when absent. */
const lockHolder = z.string().min(1).max(100).optional();

export const JobMessage = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("housekeeping"), runId }),
  /** One news publisher's ingestion: "guardian", "nyt" or "feed:<url>" (src/news/ingest/run.ts). */
  z.object({ kind: z.literal("news-ingest"), runId, publisher: z.string().min(1).max(4096) }),
  /** Generate, validate and apply the HAProxy configuration (queued by the certificate job after a change). */
  z.object({ kind: z.literal("gensynchaprx"), runId, lockHolder }),
  /** Push one stored HAProxy version to one slave agent; the outcome is added to the parent run's warnings. */
  z.object({
    kind: z.literal("haproxy-slave-sync"),
    runId,
    parentRunId: runId,
    version: z.number().int().positive(),
    agentUrl: z.url(),
  }),
  /** Generate the SSH proxy configuration (GET /admin/writesshprx). */
  z.object({ kind: z.literal("writesshprx"), runId, lockHolder }),
  /** Obtain and renew public CA certificates (GET /maintenance/start and the daily cron). */
  z.object({ kind: z.literal("certificates"), runId, lockHolder }),
]);
export type JobMessage = z.infer<typeof JobMessage>;
export type JobKind = JobMessage["kind"];
