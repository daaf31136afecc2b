// The messages on the jobs queue: one variant per job kind, each naming the job run it belongs to.
import { z } from "zod";

export const JobMessage = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("housekeeping"), runId: z.number().int().positive() }),
]);
export type JobMessage = z.infer<typeof JobMessage>;
export type JobKind = JobMessage["kind"];
