// The slave sync job's engine: pushes the active version to one slave agent, records each attempt in
// haproxy_agent_syncs (GET /admin/haproxy/status shows it) and reports on the parent gensynchaprx run from the first
// failed attempt on, with the time of the next one; and the same reports of syncs the queue refused to take.
import { jobWarningsAppend } from "../../jobs/history";
import { MAX_ATTEMPTS, retryDelaySeconds } from "../../jobs/retries";
import { database, type Database } from "../../shared/db";
import { proxySettings } from "../settings";
import { AgentError } from "./agent-client";
import { agentSyncs, recordAgentSync, type AgentSyncRow } from "./agent-syncs";
import { bundleDigest } from "./config";
import { pushAndSettle, slavePushId } from "./push-outcome";
import { bundleOfVersion, findVersion, highestVersion } from "./versions";

// The global fetch is looked up at call time, so that tests intercepting outbound fetch see the pushes.
const outbound: typeof fetch = (input, init) => fetch(input, init);

export interface SlaveSync {
  parentRunId: number;
  version: number;
  agentUrl: string;
  attempts: number;
  lastAttempt: boolean;
}

/** Records the attempt's outcome on the agent's sync row. */
const recordAttempt = (
  db: Database,
  input: SlaveSync,
  outcome: Pick<AgentSyncRow, "state" | "error" | "nextRetryAt"> & { agentVersion: number | null },
) =>
  recordAgentSync(db, {
    agentUrl: input.agentUrl,
    version: input.version,
    attempts: input.attempts,
    parentRunId: input.parentRunId,
    now: new Date(),
    ...outcome,
  });

type AttemptOutcome = Parameters<typeof recordAttempt>[2];

/**
 * Records the attempt's outcome and reports it on the parent run in one batch, so that the sync row and the run never
 * tell different stories; answers the warnings of this sync's own run.
 */
async function recordAndReport(db: Database, input: SlaveSync, outcome: AttemptOutcome, warnings: string[]) {
  await db.batch([recordAttempt(db, input, outcome), jobWarningsAppend(db, { id: input.parentRunId, warnings })]);
  return { warnings };
}

/**
 * Pushes an active version to one slave agent; the outcome goes to the parent gensynchaprx run's warnings and the
 * agent's sync row. A failure throws (the queue retries with backoff) and is reported at once, with the next
 * attempt's time. A version that is no longer the active one, or whose certificates changed since, is not pushed: a
 * newer version has or will be.
 */
export async function syncSlave(env: Env, input: SlaveSync): Promise<{ warnings: string[] }> {
  const db = database(env.DB);
  const settings = proxySettings(env);
  const superseded = (why: string, agentVersion: number | null = null, ...warnings: string[]) =>
    recordAndReport(db, input, { state: "superseded", error: null, nextRetryAt: null, agentVersion }, [
      `INFO: slave ${input.agentUrl} not synced to version ${input.version}: ${why}`,
      ...warnings,
    ]);

  const stored = await findVersion(db, input.version);
  if (!stored || stored.row.status !== "active") return superseded("it is no longer the active version");
  const { row } = stored;
  const { files } = await bundleOfVersion(db, row, stored.files);
  if ((await bundleDigest(files)) !== row.digest)
    return superseded("its certificates changed since; the next gensynchaprx ships them");

  try {
    if (!settings.HAPROXY_AGENT_TOKEN) throw new AgentError("HAPROXY_AGENT_TOKEN is not set", "not-configured");
    const push = {
      agentUrl: input.agentUrl,
      token: settings.HAPROXY_AGENT_TOKEN,
      tokenPerAgent: settings.HAPROXY_AGENT_TOKENS_PER_AGENT,
      timeoutMs: settings.HAPROXY_AGENT_TIMEOUT,
      version: row.id,
      digest: row.digest,
      files,
      onlyIfNewer: true,
      pushId: slavePushId(row.id),
    };
    const result = await pushAndSettle(outbound, push, settings.HAPROXY_AGENT_QUERY_TIMEOUT);
    if (result.outcome !== "stale") {
      const synced = { state: "synced", error: null, nextRetryAt: null, agentVersion: row.id } as const;
      return recordAndReport(db, input, synced, [`INFO: slave ${input.agentUrl} synced to version ${input.version}`]);
    }
    if (result.version <= (await highestVersion(db))) {
      return superseded(`it already runs version ${result.version}`, result.version);
    }
    // Higher than anything stored here: D1 was reset or restored. The next generation is numbered past it.
    return superseded(
      `it already runs version ${result.version}`,
      result.version,
      `WARN: slave ${input.agentUrl} runs version ${result.version}, higher than any stored here (was D1 reset?): ` +
        `the next gensynchaprx numbers its version past it`,
    );
  } catch (error) {
    await reportFailure(db, input, error);
    throw error;
  }
}

/** A failed attempt, on the sync row and the parent run: the next attempt's time, or that there is none. */
async function reportFailure(db: Database, input: SlaveSync, error: unknown) {
  const cause = error instanceof Error ? error.message : String(error);
  if (input.lastAttempt) {
    await recordAndReport(db, input, { state: "failed", error: cause, nextRetryAt: null, agentVersion: null }, [
      `WARN: slave ${input.agentUrl} could not be synced to version ${input.version} after ${input.attempts} attempts: ${cause}`,
    ]);
    return;
  }
  const nextRetryAt = new Date(Date.now() + retryDelaySeconds(input.attempts) * 1000);
  await recordAndReport(db, input, { state: "retrying", error: cause, nextRetryAt, agentVersion: null }, [
    `WARN: slave ${input.agentUrl} could not be synced to version ${input.version} ` +
      `(attempt ${input.attempts} of ${MAX_ATTEMPTS}): ${cause}; next attempt at ${nextRetryAt.toISOString()}`,
  ]);
}

/**
 * When the sweep is to queue a run's slave syncs again, from the ends of its sync runs the queue refused (one per
 * slave per failed send): after the queue's own retry delay past the last, null once MAX_ATTEMPTS sends failed.
 */
export function nextSendOf(unsent: readonly Date[], slaves: number): { sends: number; at: Date | null } {
  const sends = Math.ceil(unsent.length / Math.max(slaves, 1));
  const last = unsent.at(-1);
  if (!last || sends >= MAX_ATTEMPTS) return { sends, at: null };
  return { sends, at: new Date(last.getTime() + retryDelaySeconds(sends) * 1000) };
}

/**
 * Slave syncs the queue refused: the parent run says so, and each slave's sync row (GET /admin/haproxy/status) shows
 * it, with no attempt made, and when the sweep queues them again, or `failed` once it no longer will. A slave already
 * synced to the version (a re-send of every slave's sync after one message was lost) keeps its row. Answers the
 * run's warning.
 */
export async function reportUnsentSyncs(
  db: Database,
  input: { parentRunId: number; version: number; agentUrls: string[]; unsent: readonly Date[]; cause: string },
): Promise<string> {
  const { sends, at } = nextSendOf(input.unsent, input.agentUrls.length);
  const error = `its queue message could not be sent: ${input.cause}`;
  const outcome = { state: at ? ("retrying" as const) : ("failed" as const), error, nextRetryAt: at };
  const rows = await agentSyncs(db);
  const unsynced = input.agentUrls.filter((agentUrl) => {
    const row = rows.get(agentUrl);
    return !(row?.state === "synced" && row.version >= input.version);
  });
  const unsent = `WARN: the syncs of version ${input.version} to the slaves could not be queued`;
  const warning = at
    ? `${unsent} (send ${sends} of ${MAX_ATTEMPTS}): ${input.cause}; the first sweep from ${at.toISOString()} queues them again`
    : `${unsent} after ${sends} sends: ${input.cause}; they wait for the next gensynchaprx`;
  // One batch: the rows and the run's warning are written together or not at all.
  await db.batch([
    jobWarningsAppend(db, { id: input.parentRunId, warnings: [warning] }),
    ...unsynced.map((agentUrl) =>
      recordAttempt(db, { ...input, agentUrl, attempts: 0, lastAttempt: false }, { ...outcome, agentVersion: null }),
    ),
  ]);
  return warning;
}
