// Settings of the detached jobs (queue consumer and cron triggers).
import { z } from "../shared/zod";
import { envDurationMs, envInteger, settingsReader } from "../shared/settings";

export const JobSettings = z.object({
  JOB_HISTORY_DAYS: envInteger(30, 1).describe(
    "Days a finished job run stays in the job history (the D1 table job_runs) before the daily housekeeping removes it.",
  ),
  JOB_HEARTBEAT_TIMEOUT: envDurationMs("60s").describe(
    "A running job beats (its run's heartbeat_at and its lock) every quarter of this. A run without a beat for this long is dead (its worker crashed): its lock is free again, the sweep marks it failed with the cause, and a redelivered message of it does nothing.",
  ),
  JOB_QUEUED_TIMEOUT: envDurationMs("2h").describe(
    "A queued job run that no delivery has touched for this long lost its queue message: the sweep marks it failed. Keep it above the longest retry delay (1h).",
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
