// The bundle a generation ships, checked by the master's `haproxy -c` first: what the load balancer refuses is traced
// to the tenant backends it came from (isolation.ts), those are left out and the rest checked again, so that one
// tenant's refused section never keeps the others' changes, or renewed certificates, from shipping.
import type { ProxySettings } from "../settings";
import { AgentError, checkWithAgent, type AgentCheck } from "./agent-client";
import { bundleDigest, bundleFiles, type HaproxyBundle } from "./config";
import { attributeAlerts } from "./isolation";

/** Rounds of leaving out what the master's `haproxy -c` refused before the refusal fails the run. */
export const MAX_ISOLATION_ROUNDS = 10;

// The global fetch is looked up at call time, so that tests intercepting outbound fetch see the checks.
const outbound: typeof fetch = (input, init) => fetch(input, init);

/** The master's agent as the check needs it; undefined without its URL or token (nothing can check then). */
export const agentOf = (settings: ProxySettings) =>
  settings.HAPROXY_AGENT_URL && settings.HAPROXY_AGENT_TOKEN
    ? {
        agentUrl: settings.HAPROXY_AGENT_URL,
        token: settings.HAPROXY_AGENT_TOKEN,
        timeoutMs: settings.HAPROXY_AGENT_TIMEOUT,
      }
    : undefined;

export interface Candidate {
  bundle: HaproxyBundle;
  files: Record<string, string>;
  digest: string;
}

/**
 * Why the agent refused the last candidate: `output` is what it said (haproxy's output, or why it could not answer);
 * `detail` the run's error for the administrator, given the number the candidate is stored under.
 */
export interface Refusal {
  reason: AgentError["reason"];
  /** Whether `haproxy -c` gave this verdict (false: the agent could not check, and `output` says why). */
  checked: boolean;
  output: string;
  detail(version: number): string;
}

type Generate = (excluded: ReadonlyMap<number, string>) => HaproxyBundle;

async function candidate(generate: Generate, excluded: ReadonlyMap<number, string>): Promise<Candidate> {
  const bundle = generate(excluded);
  const files = bundleFiles(bundle);
  return { bundle, files, digest: await bundleDigest(files) };
}

/**
 * Generates and checks until the master's `haproxy -c` accepts, leaving out the tenant backends its refusals name,
 * at most MAX_ISOLATION_ROUNDS times. A refusal that names anything else, one that persists, or an agent that cannot
 * answer ends it with `refusal` set. Without an agent the first candidate is the answer, unchecked.
 */
export async function checkedBundle(
  agent: ReturnType<typeof agentOf>,
  generate: Generate,
): Promise<Candidate & { refusal?: Refusal; agentRuns?: number }> {
  const excluded = new Map<number, string>();
  for (let round = 1; ; round++) {
    const current = await candidate(generate, excluded);
    if (!agent) return current;
    let check: AgentCheck;
    try {
      check = await checkWithAgent(outbound, { ...agent, digest: current.digest, files: current.files });
    } catch (error) {
      if (!(error instanceof AgentError)) throw error;
      return {
        ...current,
        refusal: { reason: error.reason, checked: false, output: error.message, detail: () => error.message },
      };
    }
    // The version the master runs comes with each verdict: the new one is numbered past it.
    const agentRuns = check.agentVersion ?? undefined;
    if (check.valid) return { ...current, agentRuns };
    const { backends, unattributed } = attributeAlerts(check.alerts, current.bundle.sections);
    if (unattributed.length > 0 || backends.size === 0 || round === MAX_ISOLATION_ROUNDS) {
      const why =
        round === MAX_ISOLATION_ROUNDS ? ` (still refused after ${round} rounds of leaving backends out)` : "";
      const detail = (version: number) => `agent ${agent.agentUrl} refused version ${version}${why}: ${check.error}`;
      return { ...current, agentRuns, refusal: { reason: "refused", checked: true, output: check.error, detail } };
    }
    for (const [backendId, messages] of backends) excluded.set(backendId, messages.join("; "));
  }
}
