// Talks to a load balancer's agent (haproxy-agent/) with a bearer token: PUT /v1/config pushes a bundle (the agent
// writes it beside the live configuration, runs `haproxy -c`, swaps it in and reloads), POST /v1/check has it run
// `haproxy -c` on a bundle without applying it, GET /v1/status reads what it runs and what is on its disk, POST
// /v1/pushes/{id}/abandon asks what became of a push whose answer was lost (and stops it before its reload).
import { fetchWithin, NoAnswer, readAnswerText, type Unreadable } from "../../shared/http/bounded-fetch";
import { bearerTokenFor } from "./agent-token";

export interface AgentPush {
  agentUrl: string;
  /** HAPROXY_AGENT_TOKEN: sent as it is, or the agent's own token derived from it when `tokenPerAgent`. */
  token: string;
  /** HAPROXY_AGENT_TOKENS_PER_AGENT (agent-token.ts). */
  tokenPerAgent?: boolean;
  timeoutMs: number;
  version: number;
  digest: string;
  /** Every file by its path relative to the configuration directory, certificates included. */
  files: Record<string, string>;
  /** Slaves refuse a version older than the one they run (a late retry must not roll them back). */
  onlyIfNewer: boolean;
  /** What the agent keeps the push's outcome under (haproxy-agent/pushes.mjs). */
  pushId: string;
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
    /**
     * unknown: the push's answer was lost and the agent could not tell what became of it, or its reload did not end
     * in time (HAProxy may be loading the version); unchecked: the agent's `haproxy -c` did not finish in time, so it
     * gave no verdict (nothing was applied).
     */
    readonly reason: "unreachable" | "refused" | "not-configured" | "unknown" | "unchecked",
    /** When `haproxy -c` refused the bundle: its ALERT lines, as the agent listed them. */
    readonly alerts: readonly string[] = [],
  ) {
    super(message);
  }
}

const MAX_DETAIL = 2000;

/**
 * An agent's answers are a few hundred bytes; the longest quotes at most 4000 characters of haproxy's output
 * (MAX_OUTPUT in haproxy-agent/apply.mjs). Whatever answers past this bound is not an agent to trust: it is not read.
 */
const MAX_ANSWER_BYTES = 65_536;

const unreachable = (agentUrl: string, timeoutMs: number, failure: NoAnswer) => {
  const reason = failure.timedOut ? `no answer within ${timeoutMs} ms` : failure.detail;
  return new AgentError(`agent ${agentUrl} is unreachable: ${reason}`, "unreachable");
};

/**
 * One request to an agent; an agent that does not answer in time (or at all) is an AgentError "unreachable", an
 * answer past MAX_ANSWER_BYTES or not UTF-8 one "refused".
 */
async function callAgent(
  fetcher: typeof fetch,
  call: {
    agentUrl: string;
    token: string;
    tokenPerAgent?: boolean;
    timeoutMs: number;
    method: string;
    path: string;
    body?: unknown;
  },
): Promise<{ status: number; body: Record<string, unknown> }> {
  const init = {
    method: call.method,
    headers: {
      Authorization: `Bearer ${await bearerTokenFor(call)}`,
      ...(call.body === undefined ? {} : { "Content-Type": "application/json" }),
    },
    body: call.body === undefined ? undefined : JSON.stringify(call.body),
  };
  const unanswered = (failure: NoAnswer) => unreachable(call.agentUrl, call.timeoutMs, failure);
  const response = await fetchWithin(fetcher, `${call.agentUrl}${call.path}`, init, call.timeoutMs, unanswered);
  const refused = (why: Unreadable) => {
    const what = why === "too large" ? `more than ${MAX_ANSWER_BYTES} bytes` : "bytes that are not UTF-8";
    return new AgentError(`agent ${call.agentUrl} answered HTTP ${response.status} with ${what}`, "refused");
  };
  const text = await readAnswerText(response, MAX_ANSWER_BYTES, { refused, unanswered });
  let body: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(text);
    body = parsed && typeof parsed === "object" && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  } catch {
    body = { error: text.slice(0, MAX_DETAIL) };
  }
  if (fromInFront(response.status, body)) {
    const detail =
      response.status === 503 && body.agentStopping === true
        ? "it is stopping (HTTP 503)"
        : `HTTP ${response.status} from what stands in front of it`;
    throw new AgentError(`agent ${call.agentUrl} is unreachable: ${detail}`, "unreachable");
  }
  return { status: response.status, body };
}

/**
 * A 502, 503 or 504 the agent did not send (it answers none of them, but a 504 for a `haproxy -c` or a reload that ran
 * out of time, flagged): a proxy or load balancer in front of it gave up, and a push may still have reached the agent.
 * Read as a refusal, a version the agent goes on to apply would be recorded as rejected; as no answer, it is asked.
 * The agent's own 503, a check it stopped as it exits (`agentStopping`), is no answer either: it is going away.
 */
const fromInFront = (status: number, body: Record<string, unknown>) =>
  (status === 502 || status === 503 || status === 504) && !checkTimedOut(status, body) && !reloadTimedOut(status, body);

const errorOf = (status: number, body: Record<string, unknown>) =>
  (typeof body.error === "string" ? body.error : `HTTP ${status}`).slice(0, MAX_DETAIL);

/**
 * Most ALERT lines read of a refusal, and the longest kept: the agent's own bounds (haproxy-agent/alerts.mjs), which
 * lists the first line about each section before any second one.
 */
const MAX_ALERTS = 256;
const MAX_ALERT_LENGTH = 400;

/**
 * The ALERT lines of a refusal, held to the agent's bounds whatever it sent (they are traced with regular expressions
 * and quoted in warnings); an agent older than the list sends none, and its refusals then cannot be traced.
 */
const alertsOf = (body: Record<string, unknown>): string[] =>
  Array.isArray(body.alerts)
    ? body.alerts
        .filter((alert): alert is string => typeof alert === "string")
        .slice(0, MAX_ALERTS)
        .map((alert) => alert.slice(0, MAX_ALERT_LENGTH))
    : [];

/**
 * The agent's answer to a `haproxy -c` that did not finish within its --timeout: no verdict on the bundle, so no
 * refusal (a gateway's 504 without the flag stays one).
 */
const checkTimedOut = (status: number, body: Record<string, unknown>) => status === 504 && body.checkTimedOut === true;

/**
 * The agent's answer to a reload command that did not finish within its --timeout: the new files are in place and
 * HAProxy may be loading them, so whether the version is in force is unknown (its push stays `reloading` on the agent
 * until a later reload settles it), never a refusal.
 */
const reloadTimedOut = (status: number, body: Record<string, unknown>) =>
  status === 504 && body.reloadTimedOut === true;

export async function pushToAgent(fetcher: typeof fetch, push: AgentPush): Promise<AgentResult> {
  const { status, body } = await callAgent(fetcher, {
    ...push,
    method: "PUT",
    path: "/v1/config",
    body: {
      version: push.version,
      digest: push.digest,
      onlyIfNewer: push.onlyIfNewer,
      files: push.files,
      pushId: push.pushId,
      // The agent starts no reload that could not end before this control plane stops waiting.
      timeoutMs: push.timeoutMs,
    },
  });
  if (status === 200 && (body.outcome === "applied" || body.outcome === "unchanged")) {
    return { outcome: body.outcome, version: push.version };
  }
  if (status === 409 && typeof body.version === "number") return { outcome: "stale", version: body.version };
  if (checkTimedOut(status, body)) {
    const why = `agent ${push.agentUrl} could not check version ${push.version} (HTTP ${status}): ${errorOf(status, body)}`;
    throw new AgentError(why, "unchecked");
  }
  if (reloadTimedOut(status, body)) {
    const why =
      `agent ${push.agentUrl} could not tell whether HAProxy took version ${push.version} (HTTP ${status}): ` +
      errorOf(status, body);
    throw new AgentError(why, "unknown");
  }
  const refusal = `agent ${push.agentUrl} refused version ${push.version} (HTTP ${status}): ${errorOf(status, body)}`;
  throw new AgentError(refusal, "refused", alertsOf(body));
}

/**
 * The agent's `haproxy -c` verdict on a bundle it does not apply; `error` quotes haproxy (administrator only), and
 * `alerts` lists haproxy's ALERT lines.
 */
export type AgentCheck = ({ valid: true } | { valid: false; error: string; alerts: string[] }) & {
  /** The version the agent runs (null: none, or an agent too old to tell). */
  agentVersion?: number | null;
};

export async function checkWithAgent(
  fetcher: typeof fetch,
  check: Pick<AgentPush, "agentUrl" | "token" | "tokenPerAgent" | "timeoutMs" | "digest" | "files">,
): Promise<AgentCheck> {
  const { status, body } = await callAgent(fetcher, {
    ...check,
    method: "POST",
    path: "/v1/check",
    body: { digest: check.digest, files: check.files },
  });
  const agentVersion = positiveInteger(body.version);
  if (status === 200 && body.valid === true) return { valid: true, agentVersion };
  if (status === 200 && body.valid === false)
    return { valid: false, error: errorOf(status, body), alerts: alertsOf(body), agentVersion };
  if (checkTimedOut(status, body))
    throw new AgentError(
      `agent ${check.agentUrl} could not check (HTTP ${status}): ${errorOf(status, body)}`,
      "unchecked",
    );
  throw new AgentError(
    `agent ${check.agentUrl} refused the check (HTTP ${status}): ${errorOf(status, body)}`,
    "refused",
  );
}

/** What an agent reports (GET /v1/status): `diskDigest` is recomputed from its files, so hand edits show. */
export interface AgentStatus {
  version: number | null;
  /** The digest recorded when the version was applied. */
  digest: string | null;
  diskDigest: string | null;
  appliedAt: string | null;
  lastError: { at: string; version: number; message: string } | null;
}

const text = (value: unknown) => (typeof value === "string" ? value : null);
const positiveInteger = (value: unknown) =>
  typeof value === "number" && Number.isSafeInteger(value) && value > 0 ? value : null;

/** What an agent says became of a push (haproxy-agent/pushes.mjs): `reloading` is not over yet. */
export interface PushRecord {
  state: "received" | "reloading" | "applied" | "unchanged" | "refused" | "stale" | "abandoned";
  version: number | null;
  error: string | null;
}

const PUSH_STATES: readonly string[] = [
  "received",
  "reloading",
  "applied",
  "unchanged",
  "refused",
  "stale",
  "abandoned",
];

/**
 * POST /v1/pushes/{id}/abandon: what became of a push; one that has not reached its reload is stopped for good (an
 * id the agent never saw included). An agent too old to know push ids answers 404: an AgentError "refused".
 */
export async function abandonPush(
  fetcher: typeof fetch,
  agent: Pick<AgentPush, "agentUrl" | "token" | "tokenPerAgent" | "timeoutMs" | "pushId">,
): Promise<PushRecord> {
  const path = `/v1/pushes/${encodeURIComponent(agent.pushId)}/abandon`;
  const { status, body } = await callAgent(fetcher, { ...agent, method: "POST", path });
  if (status !== 200 || typeof body.state !== "string" || !PUSH_STATES.includes(body.state)) {
    throw new AgentError(
      `agent ${agent.agentUrl} could not tell what became of push ${agent.pushId} (HTTP ${status}): ${errorOf(status, body)}`,
      "refused",
    );
  }
  return {
    state: body.state as PushRecord["state"],
    version: positiveInteger(body.version),
    error: text(body.error)?.slice(0, MAX_DETAIL) ?? null,
  };
}

export async function agentStatus(
  fetcher: typeof fetch,
  agent: Pick<AgentPush, "agentUrl" | "token" | "tokenPerAgent" | "timeoutMs">,
): Promise<AgentStatus> {
  const { status, body } = await callAgent(fetcher, { ...agent, method: "GET", path: "/v1/status" });
  if (status !== 200) {
    throw new AgentError(
      `agent ${agent.agentUrl} refused the status (HTTP ${status}): ${errorOf(status, body)}`,
      "refused",
    );
  }
  const lastError = body.lastError as Record<string, unknown> | null | undefined;
  return {
    version: typeof body.version === "number" ? body.version : null,
    digest: text(body.digest),
    diskDigest: text(body.diskDigest),
    appliedAt: text(body.appliedAt),
    lastError:
      lastError && typeof lastError === "object"
        ? {
            at: String(lastError.at),
            version: Number(lastError.version),
            message: String(lastError.message).slice(0, MAX_DETAIL),
          }
        : null,
  };
}
