// The haproxy_agent_syncs repository: each slave agent's latest sync as the slave sync job records it (its state, its
// attempts, its error and next retry) and the highest version each agent said it runs.
import { max, sql } from "drizzle-orm";
import type { Database } from "../../shared/db";
import { haproxyAgentSyncs } from "./tables";

export type AgentSyncRow = typeof haproxyAgentSyncs.$inferSelect;

/**
 * Records an attempt's outcome; the highest version the agent said it runs is kept (never lowered). An attempt for a
 * version older than the row's leaves the row alone: a late retry of an older version's sync must not hide the newer
 * version's (its failure and next retry, say).
 */
export function recordAgentSync(
  db: Database,
  input: Omit<AgentSyncRow, "agentVersion" | "updatedAt"> & { agentVersion: number | null; now: Date },
) {
  const { now, agentVersion, ...row } = input;
  const highest = sql`max(coalesce(${haproxyAgentSyncs.agentVersion}, 0), coalesce(excluded.agent_version, 0))`;
  return db
    .insert(haproxyAgentSyncs)
    .values({ ...row, agentVersion, updatedAt: now })
    .onConflictDoUpdate({
      target: haproxyAgentSyncs.agentUrl,
      set: {
        version: row.version,
        state: row.state,
        attempts: row.attempts,
        error: row.error,
        nextRetryAt: row.nextRetryAt,
        parentRunId: row.parentRunId,
        agentVersion: sql`nullif(${highest}, 0)`,
        updatedAt: now,
      },
      setWhere: sql`excluded.version >= ${haproxyAgentSyncs.version}`,
    });
}

/** Each slave agent's latest sync, by its URL. */
export async function agentSyncs(db: Database): Promise<Map<string, AgentSyncRow>> {
  const rows = await db.select().from(haproxyAgentSyncs);
  return new Map(rows.map((row) => [row.agentUrl, row]));
}

/** The highest version any slave agent said it runs (0 when none did). */
export async function highestSlaveVersion(db: Database): Promise<number> {
  const [row] = await db.select({ highest: max(haproxyAgentSyncs.agentVersion) }).from(haproxyAgentSyncs);
  return row?.highest ?? 0;
}
