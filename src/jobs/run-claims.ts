// Who runs a job run: a delivery claims a queued run (one delivery wins, whatever the queue redelivers), beats while it
// runs, and the sweep fails the runs whose worker went silent and the queued runs whose message was lost.
import { and, eq, lt, or, sql } from "drizzle-orm";
import type { Database } from "../shared/db";
import { getJobRun } from "./history";
import { jobRuns } from "./tables";

/** Why a delivery does not run its run: finished already, running elsewhere, run by a worker that died, or gone. */
export type ClaimRefusal = "finished" | "running" | "dead" | "missing";

/**
 * Makes a queued run running, in one conditional UPDATE, so that of two deliveries of its message only one runs it.
 * A retry keeps the warnings the run has: children and sweeps may have added theirs since the failed attempt. Answers
 * null when claimed, or why not: a running run whose heartbeat is older than `heartbeatTimeoutMs` is "dead".
 * `endLostOf`, the start of an attempt whose end D1 could not record, also claims the run still running since it.
 */
export async function claimJobRun(
  db: Database,
  input: { id: number; now: Date; heartbeatTimeoutMs: number; endLostOf?: Date },
): Promise<ClaimRefusal | null> {
  const lost = input.endLostOf && and(eq(jobRuns.state, "running"), eq(jobRuns.startedAt, input.endLostOf));
  const claimed = await db
    .update(jobRuns)
    .set({
      state: "running",
      startedAt: input.now,
      heartbeatAt: input.now,
      attempts: sql`${jobRuns.attempts} + 1`,
    })
    .where(and(eq(jobRuns.id, input.id), or(eq(jobRuns.state, "queued"), lost)))
    .returning({ id: jobRuns.id });
  if (claimed.length > 0) return null;
  const run = await getJobRun(db, input.id);
  if (!run) return "missing";
  if (run.state !== "running") return "finished";
  const lastBeat = (run.heartbeatAt ?? run.startedAt)?.getTime() ?? 0;
  return input.now.getTime() - lastBeat > input.heartbeatTimeoutMs ? "dead" : "running";
}

/** A running run's heartbeat. */
export async function beatJobRun(db: Database, input: { id: number; now: Date }) {
  await db
    .update(jobRuns)
    .set({ heartbeatAt: input.now })
    .where(and(eq(jobRuns.id, input.id), eq(jobRuns.state, "running")));
}

export const deadRunError = (timeoutMs: number) =>
  `its worker stopped: no heartbeat for ${Math.round(timeoutMs / 1000)} s (a crash or a deploy); the run was not retried`;
export const lostMessageError = (timeoutMs: number) =>
  `its queue message was lost: no delivery for ${Math.round(timeoutMs / 60_000)} min; the run was never started`;

/** A run the sweep failed: its id, kind and the cause recorded on it. */
export interface SweptRun {
  id: number;
  kind: string;
  error: string | null;
}

/**
 * Fails, in one batch, the running runs silent for `heartbeatTimeoutMs` and the queued runs untouched for
 * `queuedTimeoutMs` (a run never delivered counts from its creation); answers them.
 */
export async function failSilentRuns(
  db: Database,
  input: { now: Date; heartbeatTimeoutMs: number; queuedTimeoutMs: number },
): Promise<SweptRun[]> {
  const lastBeat = sql`coalesce(${jobRuns.heartbeatAt}, ${jobRuns.startedAt}, ${jobRuns.createdAt})`;
  const before = (ms: number) => input.now.getTime() - ms;
  const fail = (state: "running" | "queued", timeoutMs: number, error: string) =>
    db
      .update(jobRuns)
      .set({ state: "failed", endedAt: input.now, error })
      .where(and(eq(jobRuns.state, state), lt(lastBeat, before(timeoutMs))))
      .returning({ id: jobRuns.id, kind: jobRuns.kind, error: jobRuns.error });
  const [dead, lost] = await db.batch([
    fail("running", input.heartbeatTimeoutMs, deadRunError(input.heartbeatTimeoutMs)),
    fail("queued", input.queuedTimeoutMs, lostMessageError(input.queuedTimeoutMs)),
  ]);
  return [...dead, ...lost];
}

/** Fails one run, if it is still running, with the cause (a redelivery found its worker dead). */
export async function failDeadRun(db: Database, input: { id: number; now: Date; error: string }) {
  await db
    .update(jobRuns)
    .set({ state: "failed", endedAt: input.now, error: input.error })
    .where(and(eq(jobRuns.id, input.id), eq(jobRuns.state, "running")));
}
