// Settings of the detached jobs (queue consumer and cron triggers).
import { z } from "../shared/zod";
import { envDurationMs, envInteger, settingsReader } from "../shared/settings";
import { LONGEST_RETRY_DELAY_MS } from "./retries";

/** A beat every 50 ms at this: shorter, and a D1 write could outlast the lease it renews. */
const MIN_HEARTBEAT_TIMEOUT_MS = 200;
export const MIN_QUEUED_TIMEOUT_MS = LONGEST_RETRY_DELAY_MS + 120_000;

export const JobSettings = z.object({
  JOB_HISTORY_DAYS: envInteger(30, 1),
  JOB_HEARTBEAT_TIMEOUT: envDurationMs("60s").pipe(z.number().min(MIN_HEARTBEAT_TIMEOUT_MS, "must be at least 200ms")),
  JOB_QUEUED_TIMEOUT: envDurationMs("2h").pipe(
    z.number().min(MIN_QUEUED_TIMEOUT_MS, `must be at least ${MIN_QUEUED_TIMEOUT_MS / 60_000}m`),
  ),
});
export type JobSettings = z.output<typeof JobSettings>;

export const jobSettings: (env: object) => JobSettings = settingsReader(JobSettings, "jobs");

/**
 * The liveness settings alone: the queue consumer and the locks read them on every run, and must still claim and beat
 * a run whose job's own settings (JOB_HISTORY_DAYS) are invalid, so that that run fails with its own error.
 */
export const jobLivenessSettings: (env: object) => Pick<JobSettings, "JOB_HEARTBEAT_TIMEOUT" | "JOB_QUEUED_TIMEOUT"> =
  settingsReader(JobSettings.pick({ JOB_HEARTBEAT_TIMEOUT: true, JOB_QUEUED_TIMEOUT: true }), "jobs");
