// The proxy's part of the minute sweep: a HAProxy version left `pending` by a run whose worker died between the push
// and the agent's answer is settled from what the master agent says it runs (GET /v1/status), under the
// configuration lock so that no gensynchaprx is shipping meanwhile: active (and the slaves follow) when the agent
// runs it, rejected when it runs another; left pending while the agent cannot be asked.
import { appendJobWarnings } from "../../jobs/history";
import type { Sweep } from "../../jobs/define";
import { JobLocked } from "../../jobs/locks";
import { database, type Database } from "../../shared/db";
import { AgentError, agentStatus, type AgentStatus } from "../haproxy/agent-client";
import { activateVersion, orphanedPendingVersions, rejectVersion } from "../haproxy/versions";
import { proxySettings, type ProxySettings } from "../settings";
import { masterOnly, queueSlaveSyncs } from "./definitions";
import { CONFIG_LOCK, withJobLock } from "./locks";

/** The sweep asks the agent as the status page does: an agent that hangs is asked again next minute. */
const STATUS_TIMEOUT_MS = 10_000;

// The global fetch is looked up at call time, so that tests intercepting outbound fetch see the calls.
const outbound: typeof fetch = (input, init) => fetch(input, init);

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
  const reported = await askMaster(settings);
  if (reported instanceof AgentError)
    return [`pending HAProxy versions ${orphans.map((o) => o.version).join(", ")} wait: ${reported.message}`];
  const notes: string[] = [];
  for (const orphan of orphans) notes.push(await settle(env, db, { settings, orphan, reported }));
  return notes;
}

/** What the master agent runs; an AgentError when it cannot be asked (null: no agent, the version was never pushed). */
async function askMaster(settings: ProxySettings): Promise<AgentStatus | AgentError | null> {
  if (!settings.HAPROXY_AGENT_URL) return null;
  if (!settings.HAPROXY_AGENT_TOKEN) return new AgentError("HAPROXY_AGENT_TOKEN is not set", "not-configured");
  const timeoutMs = Math.min(settings.HAPROXY_AGENT_TIMEOUT, STATUS_TIMEOUT_MS);
  return agentStatus(outbound, { agentUrl: settings.HAPROXY_AGENT_URL, token: settings.HAPROXY_AGENT_TOKEN, timeoutMs })
    .then((status): AgentStatus | AgentError => status)
    .catch((error: unknown) => {
      if (error instanceof AgentError) return error;
      throw error;
    });
}

/** Settles one orphaned version from the agent's report; answers the note, which its run's warnings get too. */
async function settle(
  env: Env,
  db: Database,
  input: { settings: ProxySettings; orphan: Orphan; reported: AgentStatus | null },
): Promise<string> {
  const { settings, orphan, reported } = input;
  const { version, jobRunId } = orphan;
  const run = jobRunId === null ? "its run" : `run ${jobRunId}`;
  let note: string;
  if (reported !== null && reported.version === version && reported.digest === orphan.digest) {
    await activateVersion(db, version, settings.HAPROXY_VERSIONS_KEPT);
    note = `INFO: version ${version} is active: ${run} stopped before the agent answered, and the agent runs it`;
    if (jobRunId !== null) {
      const syncs = settings.SLAVE_AGENT_URLS.map((agentUrl) => ({ version, agentUrl }));
      const syncRuns = await queueSlaveSyncs(env, jobRunId)(syncs);
      note += syncRuns.length > 0 ? `; slave syncs queued as jobs ${syncRuns.join(", ")}` : "";
    }
  } else {
    const runs = reported === null ? "no agent was asked" : `the agent runs version ${reported.version ?? "none"}`;
    note = `WARN: version ${version} was rejected: ${run} stopped before it was applied, and ${runs}`;
    await rejectVersion(db, version, note.replace(/^WARN: version \d+ was rejected: /, ""));
  }
  if (jobRunId !== null) await appendJobWarnings(db, { id: jobRunId, warnings: [note] });
  return note;
}
