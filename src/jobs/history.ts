// The job_runs repository: record a run when it is queued, started and finished, and prune old runs.
import { and, eq, lt, sql } from "drizzle-orm";
import type { Database } from "../shared/db";
import { jobRuns } from "./tables";

export async function createJobRun(db: Database, input: { kind: string; trigger: string }) {
  const [row] = await db.insert(jobRuns).values(input).returning({ id: jobRuns.id });
  return row.id;
}

export async function markJobRunning(db: Database, input: { id: number; now: Date }) {
  await db
    .update(jobRuns)
    .set({ state: "running", startedAt: input.now, attempts: sql`${jobRuns.attempts} + 1` })
    .where(eq(jobRuns.id, input.id));
}

export async function finishJobRun(
  db: Database,
  input: { id: number; now: Date; state: "succeeded" | "failed" | "queued"; warnings?: string[]; error?: string },
) {
  await db
    .update(jobRuns)
    .set({
      state: input.state,
      endedAt: input.state === "queued" ? null : input.now,
      warnings: input.warnings ?? [],
      error: input.error ?? null,
    })
    .where(eq(jobRuns.id, input.id));
}

export async function getJobRun(db: Database, id: number) {
  const [row] = await db.select().from(jobRuns).where(eq(jobRuns.id, id)).limit(1);
  return row;
}

/** Deletes finished runs that ended before `before`; returns how many went. */
export async function pruneJobRuns(db: Database, input: { before: Date }): Promise<number> {
  const deleted = await db
    .delete(jobRuns)
    .where(and(sql`${jobRuns.state} in ('succeeded', 'failed')`, lt(jobRuns.endedAt, input.before)))
    .returning({ id: jobRuns.id });
  return deleted.length;
}
