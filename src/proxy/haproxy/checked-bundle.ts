// The bundle a generation ships, checked by the master's `haproxy -c` first: what the load balancer refuses is traced
// to the tenant backends it came from (isolation.ts), those are left out and the rest checked again, so that one
// tenant's refused section never keeps the others' changes, or renewed certificates, from shipping. A refusal that
// names no line (a crash of `haproxy -c`) is traced by leaving tenant backends out half at a time.
import type { ProxySettings } from "../settings";
import { AgentError, checkWithAgent, type AgentCheck } from "./agent-client";
import { bundleDigest, bundleFiles, type HaproxyBundle } from "./config";
import { attributeAlerts, namesNothing } from "./isolation";

/** Rounds of leaving out what the master's `haproxy -c` refused before the refusal fails the run. */
export const MAX_ISOLATION_ROUNDS = 10;

/** What a tenant whose backend was traced that way is told: HAProxy's own output names nothing of theirs. */
export const TRACED = "haproxy -c failed without naming a line while this backend was in, and passed without it";

// The global fetch is looked up at call time, so that tests intercepting outbound fetch see the checks.
const outbound: typeof fetch = (input, init) => fetch(input, init);

/** The master's agent as the check needs it; undefined without its URL or token (nothing can check then). */
export const agentOf = (settings: ProxySettings) =>
  settings.HAPROXY_AGENT_URL && settings.HAPROXY_AGENT_TOKEN
    ? {
        agentUrl: settings.HAPROXY_AGENT_URL,
        token: settings.HAPROXY_AGENT_TOKEN,
        tokenPerAgent: settings.HAPROXY_AGENT_TOKENS_PER_AGENT,
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
type Agent = NonNullable<ReturnType<typeof agentOf>>;

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
  const tracing = { passesWithoutTenants: undefined as boolean | undefined };
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
    if (backends.size === 0 && namesNothing(check.alerts) && round < MAX_ISOLATION_ROUNDS) {
      const culprit = await traceUnattributed(agent, generate, excluded, current, tracing);
      if (culprit !== undefined) {
        excluded.set(culprit, TRACED);
        continue;
      }
    }
    if (unattributed.length > 0 || backends.size === 0 || round === MAX_ISOLATION_ROUNDS) {
      const why =
        round === MAX_ISOLATION_ROUNDS ? ` (still refused after ${round} rounds of leaving backends out)` : "";
      const detail = (version: number) => `agent ${agent.agentUrl} refused version ${version}${why}: ${check.error}`;
      return { ...current, agentRuns, refusal: { reason: "refused", checked: true, output: check.error, detail } };
    }
    for (const [backendId, messages] of backends) excluded.set(backendId, messages.join("; "));
  }
}

/**
 * The tenant backend to leave out for a refusal that names none, or undefined when the refusal is not the tenants'
 * (it stays without any of their backends: checked once a generation) or the agent cannot answer. Keeps the check
 * passing with the suspects left out and failing without: one half goes, and if the check still fails the other half
 * holds a backend it needs gone (the first half stays out meanwhile). So ⌈log₂ n⌉ checks a round; other backends to
 * blame are found by the next rounds, MAX_ISOLATION_ROUNDS bounding them all.
 */
async function traceUnattributed(
  agent: Agent,
  generate: Generate,
  excluded: ReadonlyMap<number, string>,
  current: Candidate,
  tracing: { passesWithoutTenants: boolean | undefined },
): Promise<number | undefined> {
  let suspects = [...new Set(current.bundle.sections.map((place) => place.backendId))];
  let leftOut: number[] = [];
  const passesWithout = async (ids: number[]) => {
    const { files, digest } = await candidate(
      generate,
      new Map([...excluded, ...ids.map((id) => [id, TRACED] as const)]),
    );
    return checkWithAgent(outbound, { ...agent, digest, files }).then(
      (check) => check.valid,
      (error: unknown) => {
        if (error instanceof AgentError) return undefined;
        throw error;
      },
    );
  };
  if (suspects.length === 0) return undefined;
  // Without every tenant backend the file is the same whatever was excluded: one check answers for all rounds.
  tracing.passesWithoutTenants ??= await passesWithout(suspects);
  if (tracing.passesWithoutTenants !== true) return undefined;
  while (suspects.length > 1) {
    const half = suspects.slice(0, Math.ceil(suspects.length / 2));
    const passes = await passesWithout([...leftOut, ...half]);
    if (passes === undefined) return undefined;
    if (passes) suspects = half;
    else [leftOut, suspects] = [[...leftOut, ...half], suspects.slice(half.length)];
  }
  return suspects[0];
}
