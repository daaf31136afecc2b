// Pushes a generated bundle to a load balancer's agent (haproxy-agent/): PUT /v1/config with a bearer token. The
// agent writes it beside the live configuration, runs `haproxy -c`, swaps it in and reloads; this reads its answer.

export interface AgentPush {
  agentUrl: string;
  token: string;
  timeoutMs: number;
  version: number;
  digest: string;
  /** Every file by its path relative to the configuration directory, certificates included. */
  files: Record<string, string>;
  /** Slaves refuse a version older than the one they run (a late retry must not roll them back). */
  onlyIfNewer: boolean;
}

export type AgentResult = { outcome: "applied" | "unchanged"; version: number } | { outcome: "stale"; version: number };

/**
 * The agent refused the bundle or could not be reached. The message may quote the agent's answer (`haproxy -c`
 * output): it is for the administrator and the job history; `reason` is what others may be told.
 */
export class AgentError extends Error {
  override name = "AgentError";
  constructor(
    message: string,
    readonly reason: "unreachable" | "refused" | "not-configured",
  ) {
    super(message);
  }
}

const MAX_DETAIL = 2000;

export async function pushToAgent(fetcher: typeof fetch, push: AgentPush): Promise<AgentResult> {
  let response: Response;
  try {
    response = await fetcher(`${push.agentUrl}/v1/config`, {
      method: "PUT",
      headers: { Authorization: `Bearer ${push.token}`, "Content-Type": "application/json" },
      body: JSON.stringify({
        version: push.version,
        digest: push.digest,
        onlyIfNewer: push.onlyIfNewer,
        files: push.files,
      }),
      signal: AbortSignal.timeout(push.timeoutMs),
    });
  } catch (error) {
    const reason =
      error instanceof Error && error.name === "TimeoutError"
        ? `no answer within ${push.timeoutMs} ms`
        : String(error instanceof Error ? error.message : error);
    throw new AgentError(`agent ${push.agentUrl} is unreachable: ${reason}`, "unreachable");
  }
  const text = await response.text();
  let body: { outcome?: string; version?: number; error?: string } = {};
  try {
    body = JSON.parse(text);
  } catch {
    body = { error: text.slice(0, MAX_DETAIL) };
  }
  if (response.status === 200 && (body.outcome === "applied" || body.outcome === "unchanged")) {
    return { outcome: body.outcome, version: push.version };
  }
  if (response.status === 409 && typeof body.version === "number") return { outcome: "stale", version: body.version };
  const detail = (body.error ?? `HTTP ${response.status}`).slice(0, MAX_DETAIL);
  const refusal = `agent ${push.agentUrl} refused version ${push.version} (HTTP ${response.status}): ${detail}`;
  throw new AgentError(refusal, "refused");
}
