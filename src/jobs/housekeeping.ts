// The platform's own job: removing job runs older than JOB_HISTORY_DAYS.
import { database } from "../shared/db";
import { defineJob } from "./define";
import { pruneJobRuns } from "./history";
import { jobSettings } from "./settings";

const DAY_MS = 86_400_000;

export const housekeepingJob = defineJob({
  kind: "housekeeping",
  fields: {},
  async run(env, _message, now) {
    const days = jobSettings(env).JOB_HISTORY_DAYS;
    const removed = await pruneJobRuns(database(env.DB), { before: new Date(now.getTime() - days * DAY_MS) });
    return { warnings: [`INFO: removed ${removed} job runs older than ${days} days`] };
  },
});
