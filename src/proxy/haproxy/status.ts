// GET /admin/haproxy/status: whether each load balancer (the master's agent, then each slave's) runs what the
// database says is in force. Each agent recomputes the digest of the files on its disk, so hand edits show. A slave
// also shows its latest sync (failed attempts and the next retry); the master the versions whose outcome is unknown.
import { database } from "../../shared/db";
import { proxySettings, type ProxySettings } from "../settings";
import { AgentError, agentStatus } from "./agent-client";
import { agentSyncs, type AgentSyncRow } from "./agent-syncs";
import type { VersionInForce } from "./versions";

/**
 * in-sync: the files on disk are the version in force; modified: they differ from what the agent applied (edited
 * by hand); outdated: the agent runs another version (or none); unreachable: the agent did not answer;
 * not-configured: there is no agent to ask (HAPROXY_AGENT_URL or HAPROXY_AGENT_TOKEN unset).
 */
export type LoadBalancerState = "in-sync" | "modified" | "outdated" | "unreachable" | "not-configured";

export interface LoadBalancerStatus {
  role: "master" | "slave";
  agentUrl: string | null;
  state: LoadBalancerState;
  inSync: boolean;
  /** The version the agent last applied. */
  version: number | null;
  /** The digest of the files on the agent's disk, recomputed when asked. */
  digest: string | null;
  /** The version in force, which every load balancer should run. */
  expectedVersion: number | null;
  expectedDigest: string | null;
  lastAppliedAt: string | null;
  /** The agent's last failed apply since its last success, or why the agent could not be asked. */
  lastError: string | null;
  lastErrorAt: string | null;
  /** Master only: versions pushed whose outcome the agent has not told yet (their answer was lost). */
  unknownVersions: number[];
  /** Slaves only: the latest sync the queue ran, or null when none has yet. */
  sync: SlaveSyncStatus | null;
}

/** A slave's latest sync as haproxy_agent_syncs records it. */
export interface SlaveSyncStatus {
  version: number;
  state: AgentSyncRow["state"];
  attempts: number;
  error: string | null;
  nextRetryAt: string | null;
  at: string;
}

const syncStatus = (row: AgentSyncRow | undefined): SlaveSyncStatus | null =>
  row
    ? {
        version: row.version,
        state: row.state,
        attempts: row.attempts,
        error: row.error,
        nextRetryAt: row.nextRetryAt?.toISOString() ?? null,
        at: row.updatedAt.toISOString(),
      }
    : null;

// The global fetch is looked up at call time, so that tests intercepting outbound fetch see the calls.
const outbound: typeof fetch = (input, init) => fetch(input, init);

/**
 * `inForce`: the version every load balancer should run (activeVersionDigest), null when there is none. A promise, so
 * that the agents are asked while the database is read. `unknownVersions`: the master's versions still unknown.
 */
export async function loadBalancerStatuses(
  env: Env,
  now: Date,
  inForcePending: Promise<VersionInForce | null>,
  unknownVersions: number[] = [],
): Promise<LoadBalancerStatus[]> {
  const settings = proxySettings(env);
  const syncsPending = settings.SLAVE_AGENT_URLS.length > 0 ? agentSyncs(database(env.DB)) : undefined;
  const ask = (role: "master" | "slave", agentUrl: string | undefined) =>
    askAgent(settings, { role, agentUrl }, inForcePending, now);
  const [master, ...slaves] = await Promise.all([
    ask("master", settings.HAPROXY_AGENT_URL),
    ...settings.SLAVE_AGENT_URLS.map((url) => ask("slave", url)),
  ]);
  const syncs = (await syncsPending) ?? new Map<string, AgentSyncRow>();
  return [
    { ...master, unknownVersions },
    ...slaves.map((slave) => ({ ...slave, sync: syncStatus(syncs.get(slave.agentUrl!)) })),
  ];
}

/** What an agent's own answer says; the master's unknown versions and a slave's sync come from D1. */
type AgentReport = Omit<LoadBalancerStatus, "unknownVersions" | "sync">;

const UNKNOWN = { version: null, digest: null, lastAppliedAt: null, inSync: false };

/** One load balancer's status: its agent's report judged against the version in force, or why there is none. */
async function askAgent(
  settings: ProxySettings,
  agent: { role: "master" | "slave"; agentUrl: string | undefined },
  inForcePending: Promise<VersionInForce | null>,
  now: Date,
): Promise<LoadBalancerStatus> {
  return { unknownVersions: [], sync: null, ...(await agentReport(settings, agent, inForcePending, now)) };
}

async function agentReport(
  settings: ProxySettings,
  agent: { role: "master" | "slave"; agentUrl: string | undefined },
  inForcePending: Promise<VersionInForce | null>,
  now: Date,
): Promise<AgentReport> {
  const { role, agentUrl } = agent;
  const missing = !agentUrl ? "HAPROXY_AGENT_URL" : !settings.HAPROXY_AGENT_TOKEN ? "HAPROXY_AGENT_TOKEN" : undefined;
  // Asked before the version in force is awaited, so that the agents and the database work at the same time.
  const reporting = missing
    ? undefined
    : agentStatus(outbound, {
        agentUrl: agentUrl!,
        token: settings.HAPROXY_AGENT_TOKEN!,
        tokenPerAgent: settings.HAPROXY_AGENT_TOKENS_PER_AGENT,
        // A status page must answer while an agent hangs.
        timeoutMs: Math.min(settings.HAPROXY_AGENT_TIMEOUT, settings.HAPROXY_AGENT_QUERY_TIMEOUT),
      }).catch((error: unknown) => {
        if (error instanceof AgentError) return error;
        throw error;
      });
  const inForce = await inForcePending;
  const expected = { expectedVersion: inForce?.version ?? null, expectedDigest: inForce?.digest ?? null };
  if (!reporting) {
    return {
      role,
      agentUrl: agentUrl ?? null,
      state: "not-configured",
      ...UNKNOWN,
      ...expected,
      lastError: `${missing} is not set: no agent to ask`,
      lastErrorAt: null,
    };
  }
  const reported = await reporting;
  if (reported instanceof AgentError) {
    return {
      role,
      agentUrl: agentUrl!,
      state: "unreachable",
      ...UNKNOWN,
      ...expected,
      lastError: reported.message,
      lastErrorAt: now.toISOString(),
    };
  }
  const inSync = inForce !== null && reported.diskDigest === inForce.digest;
  const state: LoadBalancerState = inSync
    ? "in-sync"
    : reported.digest !== null && reported.diskDigest !== reported.digest
      ? "modified"
      : "outdated";
  return {
    role,
    agentUrl: agentUrl!,
    state,
    inSync,
    version: reported.version,
    digest: reported.diskDigest,
    ...expected,
    lastAppliedAt: reported.appliedAt,
    lastError: reported.lastError?.message ?? null,
    lastErrorAt: reported.lastError?.at ?? null,
  };
}
