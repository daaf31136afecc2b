// Settles the versions whose push's outcome was unknown (the answer was lost and the master's agent could not tell):
// GET /admin/haproxy/status asks the agent again, which stops the push for good unless it was applied. Applied, the
// version becomes the one in force (or history, when a newer one is) and the slaves get it; dropped or refused, it
// is rejected; still unknown, it waits for the next poll.
import { appendJobWarnings } from "../../jobs/history";
import { database } from "../../shared/db";
import { proxySettings } from "../settings";
import { agentOf } from "./checked-bundle";
import { masterPushId, settlePush } from "./push-outcome";
import type { BundleNote } from "./backend-sections";
import { AGENT_SUMMARY, GenSyncFailed, queuedNotes, UNKNOWN_OUTCOME, type QueueSlaveSyncs } from "./sync";
import { activateVersion, latestVersionOfRun, markVersionUnknown, rejectVersion, unknownVersions } from "./versions";

// The global fetch is looked up at call time, so that tests intercepting outbound fetch see the calls.
const outbound: typeof fetch = (input, init) => fetch(input, init);

/** Settles each unknown version, oldest first; answers the numbers of those still unknown. */
export async function settleUnknownVersions(
  env: Env,
  input: { queueSlaveSyncs: (parentRunId: number) => QueueSlaveSyncs },
): Promise<number[]> {
  const rows = await unknownVersions(database(env.DB));
  if (rows.length === 0 || !agentOf(proxySettings(env))) return rows.map((row) => row.id);
  const stillUnknown: number[] = [];
  for (const row of rows) {
    if ((await settleVersion(env, row, input)).state === "unknown") stillUnknown.push(row.id);
  }
  return stillUnknown;
}

/** A version whose push's answer was lost: its push id is its number and creation time. */
export interface UndecidedVersion {
  id: number;
  createdAt: Date;
  error: string | null;
  jobRunId: number | null;
}

/**
 * Asks the master's agent what became of one version's push, stopping it if its reload has not started, and records
 * the answer: applied (in force, or history when a newer version is; its run gets the slave syncs), rejected, or
 * still unknown (`why` says why). The caller holds the configuration lock and has checked that there is an agent.
 */
export async function settleVersion(
  env: Env,
  row: UndecidedVersion,
  input: { queueSlaveSyncs: (parentRunId: number) => QueueSlaveSyncs },
): Promise<{ state: "applied" } | { state: "rejected" } | { state: "unknown"; why: string }> {
  const db = database(env.DB);
  const settings = proxySettings(env);
  const query = { ...agentOf(settings)!, timeoutMs: settings.HAPROXY_AGENT_QUERY_TIMEOUT };
  const verdict = await settlePush(outbound, query, { pushId: masterPushId(row.id, row.createdAt), version: row.id });
  const note = (text: string) =>
    row.jobRunId === null ? undefined : appendJobWarnings(db, { id: row.jobRunId, warnings: [text] });
  if (verdict.state === "unknown") return verdict;
  if (verdict.state !== "applied") {
    const why = verdict.state === "refused" ? verdict.why : `it runs version ${verdict.runs}`;
    await rejectVersion(db, row.id, `${row.error ?? "its answer was lost"}; settled later: ${why}`);
    await note(`INFO: version ${row.id} was settled as rejected: ${why}`);
    return { state: "rejected" };
  }
  if ((await activateVersion(db, row.id, settings.HAPROXY_VERSIONS_KEPT)) === "superseded") {
    await note(`INFO: version ${row.id} was settled as applied, after a newer version`);
  } else {
    await note(`INFO: version ${row.id} was settled as applied: it is the version in force`);
    if (row.jobRunId !== null) await queueSlaves(env, { version: row.id, runId: row.jobRunId }, input.queueSlaveSyncs);
  }
  return { state: "applied" };
}

/**
 * The slave syncs of a version in force, queued under the run that pushed it, which is told their runs (or, by
 * queueSlaveSyncs, that the queue refused them); answers whether they were queued.
 */
export async function queueSlaves(
  env: Env,
  shipped: { version: number; runId: number },
  queueSlaveSyncs: (parentRunId: number) => QueueSlaveSyncs,
): Promise<boolean> {
  const slaves = proxySettings(env).SLAVE_AGENT_URLS;
  if (slaves.length === 0) return true;
  const { version, runId } = shipped;
  const syncs = await queueSlaveSyncs(runId)(slaves.map((agentUrl) => ({ version, agentUrl })));
  if ("refused" in syncs) return false;
  await appendJobWarnings(database(env.DB), { id: runId, warnings: queuedNotes(version, slaves, syncs.queued) });
  return true;
}

/**
 * What an earlier attempt of a queued gensynchaprx shipped, for its retry: the notes of the version it stored, once
 * that version is known to be applied. One it left pending or unknown (its answer was lost) is settled first under
 * its own push id, so that a retry never ships again what the agent may have taken. Undefined when the run shipped
 * nothing (no version, or a rejected one), and the retry generates anew; GenSyncFailed while the agent cannot tell.
 */
export async function shippedByEarlierAttempt(
  env: Env,
  input: { runId: number; queueSlaveSyncs: QueueSlaveSyncs },
): Promise<BundleNote[] | undefined> {
  const db = database(env.DB);
  const row = await latestVersionOfRun(db, input.runId);
  if (!row || row.status === "rejected") return undefined;
  // Its slave syncs may not have gone out (the queue refused them after the version became active).
  if (row.status === "active")
    await queueSlaves(env, { version: row.id, runId: input.runId }, () => input.queueSlaveSyncs);
  if (row.status === "active" || row.status === "previous") return row.notes;
  if (!agentOf(proxySettings(env))) {
    await rejectVersion(db, row.id, "its run stopped before it was applied, and no agent is configured");
    return undefined;
  }
  const settled = await settleVersion(env, row, { queueSlaveSyncs: () => input.queueSlaveSyncs });
  if (settled.state === "rejected") return undefined;
  if (settled.state === "applied") return row.notes;
  const cause = `an earlier attempt's push of version ${row.id} was lost, and ${settled.why}`;
  await markVersionUnknown(db, row.id, cause);
  throw new GenSyncFailed(`${cause}. ${UNKNOWN_OUTCOME}`, AGENT_SUMMARY.unknown, UNKNOWN_OUTCOME);
}
