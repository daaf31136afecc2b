// Shared setup of the proxy's job and operations tests: a Worker env with or without agents, the job-lock object, the
// database, SSH keys for seeded users, and fakes of the agents' endpoints at the fetch edge.
import { createExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { vi } from "vitest";
import worker from "../../src/index";
import { database } from "../../src/shared/db";
import { ADMIN_AUTH } from "./proxy-api";

export const AGENT = "http://agent.test:9400";
export const KEY_ANNA = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGFubmE= anna@laptop";
export const KEY_BEN = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGJlbg== ben@desk";

export const db = () => database(env.DB);
export const locks = () => env.JOB_LOCK.get(env.JOB_LOCK.idFromName("proxy-jobs"));

/**
 * The test Worker's env with settings overridden (a fresh object, so settings are parsed again). Tenants' gensynchaprx
 * calls are not debounced unless a test asks for it.
 */
export const withVars = (vars: Record<string, string> = {}) =>
  ({ ...env, HAPROXY_AGENT_URL: "", SLAVE_AGENT_URLS: "", PROXY_GENERATION_DEBOUNCE: "0", ...vars }) as unknown as Env;

/** An env whose master agent is AGENT. */
export const agentEnv = (vars: Record<string, string> = {}) =>
  withVars({ HAPROXY_AGENT_URL: AGENT, HAPROXY_AGENT_TOKEN: "agent-token", ...vars });

/** A GET through the Worker with `workerEnv`, as the administrator unless `auth` says otherwise (null: anonymous). */
export async function callWith(workerEnv: Env, path: string, auth: string | null = ADMIN_AUTH): Promise<Response> {
  const headers: Record<string, string> = auth ? { Authorization: auth } : {};
  return worker.fetch(new Request(`http://example.com${path}`, { headers }), workerEnv, createExecutionContext());
}

export interface AgentCall {
  url: string;
  authorization: string | null;
  body: { version: number; digest: string; onlyIfNewer: boolean; files: Record<string, string> };
}

export const applied = () => Response.json({ outcome: "applied", version: 1 });
export const valid = () => Response.json({ valid: true });

/**
 * Answers outbound fetches as the agents would: pushes (PUT /v1/config) with `answer`, checks (POST /v1/check) with
 * `check`; records each push in `calls` and each check in `checks`.
 */
export function fakeAgents(
  answer: (call: AgentCall) => Response | Promise<Response>,
  check: (call: AgentCall) => Response | Promise<Response> = valid,
) {
  const calls: AgentCall[] = [];
  const checks: AgentCall[] = [];
  const spy = vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const request = new Request(input as RequestInfo, init as RequestInit);
    const call = {
      url: request.url,
      authorization: request.headers.get("Authorization"),
      body: await request.json(),
    } as AgentCall;
    const isCheck = new URL(call.url).pathname === "/v1/check";
    (isCheck ? checks : calls).push(call);
    return isCheck ? check(call) : answer(call);
  });
  return { calls, checks, spy };
}

/** What fetch throws when its AbortSignal.timeout fires: an agent that did not answer. */
export const timedOut = () => new DOMException("The operation was aborted due to timeout", "TimeoutError");

export interface Seen {
  method: string;
  url: string;
  body: any;
}

/**
 * Answers the agents' endpoints: `push` for PUT /v1/config, `abandon` for POST /v1/pushes/{id}/abandon, `status` for
 * GET /v1/status, `check` for POST /v1/check (valid by default). A handler that throws is an agent that did not answer.
 */
export function agents(handlers: {
  push?: (call: Seen) => Response;
  abandon?: (call: Seen) => Response;
  status?: (call: Seen) => Response;
  check?: (call: Seen) => Response;
}) {
  const seen: Seen[] = [];
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const request = new Request(input as RequestInfo, init as RequestInit);
    const text = request.method === "GET" ? "" : await request.text();
    const call = { method: request.method, url: request.url, body: text ? JSON.parse(text) : undefined };
    seen.push(call);
    const path = new URL(request.url).pathname;
    const handler =
      path === "/v1/config"
        ? handlers.push
        : path === "/v1/check"
          ? (handlers.check ?? (() => Response.json({ valid: true })))
          : path === "/v1/status"
            ? handlers.status
            : /^\/v1\/pushes\/[^/]+\/abandon$/.test(path)
              ? handlers.abandon
              : undefined;
    if (!handler) throw new TypeError(`no fake for ${request.method} ${path}`);
    return handler(call);
  });
  return seen;
}

/** An agent's record of a push (GET or abandon of /v1/pushes/{id}). */
export const record = (state: string, version: number | null, error: string | null = null) =>
  Response.json({ pushId: "x", version, state, error, at: "2030-01-01T00:00:00.000Z" });
