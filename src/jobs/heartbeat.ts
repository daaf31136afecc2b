// Heartbeats of running work: a beat every quarter of JOB_HEARTBEAT_TIMEOUT while the work goes, so that work whose
// worker died is known by its silence within one timeout (src/jobs/sweep.ts), not by a long TTL.
import { database } from "../shared/db";
import { logError } from "../shared/log";
import { beatJobRun } from "./run-claims";
import { jobLivenessSettings } from "./settings";

/** How often a running job beats: four beats per timeout, so one lost beat never makes a live run look dead. */
export const beatIntervalMs = (timeoutMs: number) => Math.max(1, Math.floor(timeoutMs / 4));

/** Runs `work` while `beat` is called every `intervalMs`; a failed beat is logged (the next may succeed). */
export async function withHeartbeat<T>(
  what: string,
  intervalMs: number,
  beat: () => Promise<unknown>,
  work: () => Promise<T>,
): Promise<T> {
  const timer = setInterval(() => {
    beat().catch((error) => logError(`jobs: heartbeat of ${what} failed`, error));
  }, intervalMs);
  try {
    return await work();
  } finally {
    clearInterval(timer);
  }
}

/** Runs `work` for a running job run, beating the run's heartbeat_at (what the sweep reads) while it goes. */
export function withRunHeartbeat<T>(env: Env, runId: number, work: () => Promise<T>): Promise<T> {
  const db = database(env.DB);
  const intervalMs = beatIntervalMs(jobLivenessSettings(env).JOB_HEARTBEAT_TIMEOUT);
  return withHeartbeat(`job run ${runId}`, intervalMs, () => beatJobRun(db, { id: runId, now: new Date() }), work);
}
