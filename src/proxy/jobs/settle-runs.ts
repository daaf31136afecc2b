// The settling of unknown HAProxy versions as GET /admin/haproxy/status runs it: under the lock gensynchaprx takes,
// so that a version settled as applied never overtakes one a run is activating; a held lock leaves them for the next
// poll.
import { JobLocked } from "../../jobs/locks";
import { settleUnknownVersions } from "../haproxy/settle";
import { unknownVersions } from "../haproxy/versions";
import { database } from "../../shared/db";
import { genSyncJob, queueSlaveSyncs } from "./definitions";
import { CONFIG_LOCK, withJobLock } from "./locks";
import { proxySettings } from "../settings";

/** Settles what it can; answers the numbers of the versions still unknown. */
export async function settleUnknownVersionsNow(env: Env): Promise<number[]> {
  const db = database(env.DB);
  const pending = await unknownVersions(db);
  if (pending.length === 0) return [];
  // Reading the status is allowed on a slave instance; settling writes and queues jobs, which only the master does.
  if (proxySettings(env).INSTANCE_ROLE !== "master") return pending.map((row) => row.id);
  const holder = crypto.randomUUID();
  // withJobLock renews the lock while the agents are asked: a lock's lease is one JOB_HEARTBEAT_TIMEOUT.
  try {
    return await withJobLock(env, CONFIG_LOCK, { holder, kind: genSyncJob.kind }, () =>
      settleUnknownVersions(env, { queueSlaveSyncs: (parentRunId) => queueSlaveSyncs(env, parentRunId) }),
    );
  } catch (error) {
    if (error instanceof JobLocked) return pending.map((row) => row.id);
    throw error;
  }
}
