// A push whose answer may be lost: on a timeout or a dropped connection the agent is asked what became of the push
// (POST /v1/pushes/{id}/abandon, which also stops it before its reload) before anything is recorded, so that a slow
// agent is never taken for a refusal. The answer is applied, refused, or unknown (the agent could not tell yet).
import {
  abandonPush,
  AgentError,
  pushToAgent,
  type AgentPush,
  type AgentResult,
  type PushRecord,
} from "./agent-client";

/** What became of a push: `why` says it for the run's error and the version's. */
export type PushVerdict =
  | { state: "applied" }
  | { state: "stale"; runs: number }
  | { state: "refused"; why: string }
  | { state: "unknown"; why: string };

/** The id a master's push of a version goes under: its number and its creation time, unique across D1 resets. */
export const masterPushId = (version: number, createdAt: Date) => `v${version}-${createdAt.getTime()}`;

/** A slave's push: one id per attempt (a late attempt is harmless there: slaves take only newer versions). */
export const slavePushId = (version: number) => `s${version}-${crypto.randomUUID()}`;

/** The agent's record of a push, read as a verdict on `version`. */
export function verdictOf(record: PushRecord, version: number): PushVerdict {
  switch (record.state) {
    case "applied":
    case "unchanged":
      return { state: "applied" };
    case "stale": {
      const runs = Number(/runs version (\d+)/.exec(record.error ?? "")?.[1] ?? version);
      return { state: "stale", runs };
    }
    case "refused":
      return { state: "refused", why: `it refused version ${version}: ${record.error ?? "no reason given"}` };
    case "abandoned":
      return {
        state: "refused",
        why: `it dropped version ${version} before reloading: ${record.error ?? "given up"}`,
      };
    default:
      return { state: "unknown", why: `it is still working on version ${version} (${record.state})` };
  }
}

/**
 * Asks the agent what became of a push, stopping it if its reload has not started. No answer (or an agent too old
 * to keep push ids) is a verdict too: unknown.
 */
export async function settlePush(
  fetcher: typeof fetch,
  agent: { agentUrl: string; token: string; tokenPerAgent?: boolean; timeoutMs: number },
  push: { pushId: string; version: number },
): Promise<PushVerdict> {
  try {
    return verdictOf(await abandonPush(fetcher, { ...agent, pushId: push.pushId }), push.version);
  } catch (error) {
    if (!(error instanceof AgentError)) throw error;
    return { state: "unknown", why: `asked what became of version ${push.version}: ${error.message}` };
  }
}

/**
 * Pushes; when the answer is lost, asks the agent (within `queryTimeoutMs`) before deciding. Throws AgentError: a
 * refusal (`refused`, the agent said so), or `unknown` when it could not tell.
 */
export async function pushAndSettle(
  fetcher: typeof fetch,
  push: AgentPush,
  queryTimeoutMs: number,
): Promise<AgentResult> {
  try {
    return await pushToAgent(fetcher, push);
  } catch (error) {
    if (!(error instanceof AgentError) || error.reason !== "unreachable") throw error;
    const { agentUrl, token, tokenPerAgent } = push;
    const agent = { agentUrl, token, tokenPerAgent, timeoutMs: queryTimeoutMs };
    const verdict = await settlePush(fetcher, agent, push);
    const lost = error.message.replace(/\.+$/, "");
    switch (verdict.state) {
      case "applied":
        return { outcome: "applied", version: push.version };
      case "stale":
        return { outcome: "stale", version: verdict.runs };
      case "refused":
        throw new AgentError(`${lost}; asked, ${verdict.why}`, "refused");
      default:
        throw new AgentError(`${lost}; ${verdict.why}: whether it took the version is unknown`, "unknown");
    }
  }
}
