// The proxy's part of the minute sweep: a HAProxy version left `pending` by a run whose worker died between the push
// and the agent's answer is settled by asking the master agent about that push by its id (which also stops it if its
// reload has not started), under the configuration lock so that no gensynchaprx is shipping meanwhile: active (and
// the slaves follow) when the agent applied it, rejected when it dropped or refused it; left pending while the agent
// cannot tell. Then the slave syncs of the version in force that the queue refused are queued again.
import { appendJobWarnings } from "../../jobs/history";
import type { Sweep } from "../../jobs/define";
import { JobLocked } from "../../jobs/locks";
import { database, type Database } from "../../shared/db";
import { queueSlaves, settleVersion } from "../haproxy/settle";
import { nextSendOf } from "../haproxy/slave-sync";
import { orphanedPendingVersions, rejectVersion, versionInForceRun } from "../haproxy/versions";
import { proxySettings } from "../settings";
import { masterOnly, queueSlaveSyncs, slaveSyncJob, slaveSyncsOf } from "./definitions";
import { CONFIG_LOCK, withJobLock } from "./locks";

type Orphan = Awaited<ReturnType<typeof orphanedPendingVersions>>[number];

export const settlePendingVersions: Sweep = async (env) => {
  if (masterOnly(env, "gensynchaprx")) return [];
  const db = database(env.DB);
  if ((await orphanedPendingVersions(db)).length === 0) return [];
  try {
    const lock = { holder: `sweep-${crypto.randomUUID()}`, kind: "sweep of pending versions" };
    return await withJobLock(env, CONFIG_LOCK, lock, () => settleUnderLock(env, db));
  } catch (error) {
    if (!(error instanceof JobLocked)) throw error;
    return ["pending HAProxy versions wait for the next sweep: a configuration job holds the lock"];
  }
};

async function settleUnderLock(env: Env, db: Database): Promise<string[]> {
  const settings = proxySettings(env);
  const orphans = await orphanedPendingVersions(db);
  if (orphans.length === 0) return [];
  if (!settings.HAPROXY_AGENT_URL) {
    const notes: string[] = [];
    for (const orphan of orphans) notes.push(await rejectUnpushed(db, orphan));
    return notes;
  }
  if (!settings.HAPROXY_AGENT_TOKEN)
    return [
      `pending HAProxy versions ${orphans.map((o) => o.version).join(", ")} wait: HAPROXY_AGENT_TOKEN is not set`,
    ];
  const notes: string[] = [];
  for (const orphan of orphans) {
    const run = orphan.jobRunId === null ? "its run" : `run ${orphan.jobRunId}`;
    const row = { ...orphan, id: orphan.version, error: `${run} stopped before the agent answered` };
    const settled = await settleVersion(env, row, { queueSlaveSyncs: (parent) => queueSlaveSyncs(env, parent) });
    notes.push(
      settled.state === "unknown"
        ? `pending HAProxy version ${orphan.version} waits: ${settled.why}`
        : `pending HAProxy version ${orphan.version} settled as ${settled.state}`,
    );
  }
  return notes;
}

/** A version stored while no master agent is configured never went anywhere: rejected, and its run is told. */
async function rejectUnpushed(db: Database, orphan: Orphan): Promise<string> {
  const run = orphan.jobRunId === null ? "its run" : `run ${orphan.jobRunId}`;
  const note = `WARN: version ${orphan.version} was rejected: ${run} stopped before it was applied, and no agent was asked`;
  await rejectVersion(db, orphan.version, note.replace(/^WARN: version \d+ was rejected: /, ""));
  if (orphan.jobRunId !== null) await appendJobWarnings(db, { id: orphan.jobRunId, warnings: [note] });
  return note;
}

/**
 * The slave syncs of the version in force that the queue refused (their runs failed unsent, and none went out since)
 * are queued again under its run, which is told, after the queue's own retry delays and MAX_ATTEMPTS sends in all;
 * under the configuration lock, so that no run ships a version or queues these syncs meanwhile.
 */
export const queueUnsentSlaveSyncs: Sweep = async (env, now) => {
  if (masterOnly(env, slaveSyncJob.kind) || !(await unsentSyncsDue(env, now))) return [];
  try {
    const lock = { holder: `sweep-${crypto.randomUUID()}`, kind: "sweep of unsent slave syncs" };
    return await withJobLock(env, CONFIG_LOCK, lock, async () => {
      const due = await unsentSyncsDue(env, now);
      if (!due) return [];
      const queued = await queueSlaves(env, due, (parent) => queueSlaveSyncs(env, parent));
      const what = `the slave syncs of version ${due.version} (run ${due.runId})`;
      return [queued ? `${what} were queued again` : `${what} were refused by the queue again`];
    });
  } catch (error) {
    if (!(error instanceof JobLocked)) throw error;
    return ["unsent slave syncs wait for the next sweep: a configuration job holds the lock"];
  }
};

/** The version in force and its run when its unsent slave syncs are due to be queued again; undefined otherwise. */
async function unsentSyncsDue(env: Env, now: Date): Promise<{ version: number; runId: number } | undefined> {
  const slaves = proxySettings(env).SLAVE_AGENT_URLS;
  if (slaves.length === 0) return undefined;
  const inForce = await versionInForceRun(database(env.DB));
  if (!inForce || inForce.runId === null) return undefined;
  const { sent, unsent } = await slaveSyncsOf(env, inForce.runId);
  // At least one sent per slave: queued again once, whatever the slaves are now (one removed since, say).
  if (sent.length >= slaves.length) return undefined;
  const { at } = nextSendOf(unsent, slaves.length);
  return at && at <= now ? { version: inForce.version, runId: inForce.runId } : undefined;
}
