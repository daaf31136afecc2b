// The platform's sweep, every minute (SWEEP_CRON): fails the runs whose worker died (no heartbeat for
// JOB_HEARTBEAT_TIMEOUT) and the queued runs whose message was lost (untouched for JOB_QUEUED_TIMEOUT), each with
// its cause. Their locks need no sweep: a lock outlives its holder's last heartbeat by one timeout at most.
import { database } from "../shared/db";
import type { Sweep } from "./define";
import { failSilentRuns } from "./run-claims";
import { jobLivenessSettings } from "./settings";

/** The Cron Trigger of the sweeps (wrangler.toml): the finest a Cron Trigger fires. */
export const SWEEP_CRON = "* * * * *";

export const sweepSilentRuns: Sweep = async (env, now) => {
  const settings = jobLivenessSettings(env);
  const failed = await failSilentRuns(database(env.DB), {
    now,
    heartbeatTimeoutMs: settings.JOB_HEARTBEAT_TIMEOUT,
    queuedTimeoutMs: settings.JOB_QUEUED_TIMEOUT,
  });
  return failed.map((run) => `${run.kind} run ${run.id} failed: ${run.error}`);
};
