// Settings of the detached jobs (queue consumer and cron triggers).
import { z } from "../shared/zod";
import { envInteger, settingsReader } from "../shared/settings";

export const JobSettings = z.object({
  JOB_HISTORY_DAYS: envInteger(30, 1).describe(
    "Days a finished job run stays in the job history (the D1 table job_runs) before the daily housekeeping removes it.",
  ),
});
export type JobSettings = z.output<typeof JobSettings>;

export const jobSettings: (env: object) => JobSettings = settingsReader(JobSettings, "jobs");
