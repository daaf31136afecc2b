// Settings of the detached jobs (queue consumer and cron triggers).
import { z } from "zod";
import { envInteger, settingsReader } from "../shared/settings";

export const JobSettings = z.object({
  /** Days a finished job run stays in job_runs before the daily housekeeping removes it. */
  JOB_HISTORY_DAYS: envInteger(30, 1),
});
export type JobSettings = z.output<typeof JobSettings>;

export const jobSettings: (env: object) => JobSettings = settingsReader(JobSettings, "jobs");
