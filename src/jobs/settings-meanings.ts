// The meanings of the jobs' settings (src/jobs/settings.ts), for docs/settings.md only: the Worker never imports this
// module (.dependency-cruiser.cjs), so the texts stay out of its bundle.
import type { SettingMeanings } from "../shared/settings";
import { LONGEST_RETRY_DELAY_MS } from "./retries";
import { type JobSettings, MIN_QUEUED_TIMEOUT_MS } from "./settings";

export const jobSettingMeanings: SettingMeanings<keyof typeof JobSettings.shape> = {
  JOB_HISTORY_DAYS:
    "Days a finished job run stays in the job history (the D1 table job_runs) before the daily housekeeping removes it.",
  JOB_HEARTBEAT_TIMEOUT:
    "A running job beats (its run's heartbeat_at and its lock) every quarter of this. A run without a beat for this long is dead (its worker crashed): its lock is free again, the sweep marks it failed with the cause, and a redelivered message of it does nothing. At least 200ms: below, a lock would expire between two beats of its holder.",
  JOB_QUEUED_TIMEOUT: `A queued job run that no delivery has touched for this long lost its queue message: the sweep marks it failed. At least ${MIN_QUEUED_TIMEOUT_MS / 60_000}m, two minutes more than the longest retry delay (${LONGEST_RETRY_DELAY_MS / 60_000}m), so that a run waiting for its retry is never taken for a lost one.`,
};
