// GET /admin/haproxy/status: whether each load balancer (the master's agent, then each slave's) runs what the
// database says is in force. Each agent recomputes the digest of the files on its disk, so hand edits show.
import { proxySettings, type ProxySettings } from "../settings";
import { AgentError, agentStatus } from "./agent-client";
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
}

/** A status page must answer while an agent hangs: each is given this long at most. */
const STATUS_TIMEOUT_MS = 10_000;

// The global fetch is looked up at call time, so that tests intercepting outbound fetch see the calls.
const outbound: typeof fetch = (input, init) => fetch(input, init);

/**
 * `inForce`: the version every load balancer should run (activeVersionDigest), null when there is none. A promise, so
 * that the agents are asked while the database is read.
 */
export async function loadBalancerStatuses(
  env: Env,
  now: Date,
  inForcePending: Promise<VersionInForce | null>,
): Promise<LoadBalancerStatus[]> {
  const settings = proxySettings(env);
  const ask = (role: "master" | "slave", agentUrl: string | undefined) =>
    askAgent(settings, { role, agentUrl }, inForcePending, now);
  return Promise.all([
    ask("master", settings.HAPROXY_AGENT_URL),
    ...settings.SLAVE_AGENT_URLS.map((url) => ask("slave", url)),
  ]);
}

const UNKNOWN = { version: null, digest: null, lastAppliedAt: null, inSync: false };

/** One load balancer's status: its agent's report judged against the version in force, or why there is none. */
async function askAgent(
  settings: ProxySettings,
  agent: { role: "master" | "slave"; agentUrl: string | undefined },
  inForcePending: Promise<VersionInForce | null>,
  now: Date,
): Promise<LoadBalancerStatus> {
  const { role, agentUrl } = agent;
  const missing = !agentUrl ? "HAPROXY_AGENT_URL" : !settings.HAPROXY_AGENT_TOKEN ? "HAPROXY_AGENT_TOKEN" : undefined;
  // Asked before the version in force is awaited, so that the agents and the database work at the same time.
  const reporting = missing
    ? undefined
    : agentStatus(outbound, {
        agentUrl: agentUrl!,
        token: settings.HAPROXY_AGENT_TOKEN!,
        timeoutMs: Math.min(settings.HAPROXY_AGENT_TIMEOUT, STATUS_TIMEOUT_MS),
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
