// Settles the versions whose push's outcome was unknown (the answer was lost and the master's agent could not tell):
// GET /admin/haproxy/status asks the agent again, which stops the push for good unless it was applied. Applied, the
// version becomes the one in force (or history, when a newer one is) and the slaves get it; dropped or refused, it
// is rejected; still unknown, it waits for the next poll.
import { appendJobWarnings } from "../../jobs/history";
import { database } from "../../shared/db";
import { proxySettings } from "../settings";
import { agentOf } from "./checked-bundle";
import { masterPushId, settlePush } from "./push-outcome";
import type { QueueSlaveSyncs } from "./sync";
import { activateVersion, markVersionPrevious, newerVersionInForce, rejectVersion, unknownVersions } from "./versions";

// The global fetch is looked up at call time, so that tests intercepting outbound fetch see the calls.
const outbound: typeof fetch = (input, init) => fetch(input, init);

/** Settles each unknown version, oldest first; answers the numbers of those still unknown. */
export async function settleUnknownVersions(
  env: Env,
  input: { queueSlaveSyncs: (parentRunId: number) => QueueSlaveSyncs },
): Promise<number[]> {
  const db = database(env.DB);
  const settings = proxySettings(env);
  const rows = await unknownVersions(db);
  const agent = agentOf(settings);
  if (rows.length === 0 || !agent) return rows.map((row) => row.id);
  const stillUnknown: number[] = [];
  for (const row of rows) {
    const query = { ...agent, timeoutMs: settings.HAPROXY_AGENT_QUERY_TIMEOUT };
    const verdict = await settlePush(outbound, query, { pushId: masterPushId(row.id, row.createdAt), version: row.id });
    const note = (text: string) =>
      row.jobRunId === null ? undefined : appendJobWarnings(db, { id: row.jobRunId, warnings: [text] });
    if (verdict.state === "unknown") {
      stillUnknown.push(row.id);
    } else if (verdict.state !== "applied") {
      const why = verdict.state === "refused" ? verdict.why : `it runs version ${verdict.runs}`;
      await rejectVersion(db, row.id, `${row.error ?? "its answer was lost"}; settled later: ${why}`);
      await note(`INFO: version ${row.id} was settled as rejected: ${why}`);
    } else if (await newerVersionInForce(db, row.id)) {
      await markVersionPrevious(db, row.id);
      await note(`INFO: version ${row.id} was settled as applied, after a newer version`);
    } else {
      await activateVersion(db, row.id, settings.HAPROXY_VERSIONS_KEPT);
      await note(`INFO: version ${row.id} was settled as applied: it is the version in force`);
      if (row.jobRunId !== null) await queueSlaves(settings.SLAVE_AGENT_URLS, row, input, note);
    }
  }
  return stillUnknown;
}

/** The slave syncs of a version settled as in force, queued under the run that pushed it. */
async function queueSlaves(
  slaves: string[],
  row: { id: number; jobRunId: number | null },
  input: { queueSlaveSyncs: (parentRunId: number) => QueueSlaveSyncs },
  note: (text: string) => Promise<void> | undefined,
) {
  if (slaves.length === 0) return;
  const runs = await input.queueSlaveSyncs(row.jobRunId!)(slaves.map((agentUrl) => ({ version: row.id, agentUrl })));
  for (const [index, agentUrl] of slaves.entries()) {
    await note(`INFO: sync of version ${row.id} to slave ${agentUrl} queued as job ${runs[index]}`);
  }
}
