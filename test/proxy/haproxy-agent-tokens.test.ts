// HAPROXY_AGENT_TOKENS_PER_AGENT: each agent (the master's, each slave's) is sent its own token, derived from
// HAPROXY_AGENT_TOKEN and its URL as haproxy-agent/derive-token.mjs prints it, at every call (check, push, status);
// unset, every agent gets HAPROXY_AGENT_TOKEN itself, as before.
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { expectJson } from "../support/proxy-api";
import { deliverBatch } from "../support/jobs-queue";
import { AGENT, agentEnv, callWith } from "../support/proxy-job-env";
import { silenceConsoleAndRestoreMocks } from "../support/silent-console";
import { createJobsProject } from "./jobs-fixtures";

const SLAVE_1 = "http://slave-1.tokens.test:9400";
const SLAVE_2 = "http://slave-2.tokens.test:9400";

// What `HAPROXY_AGENT_TOKEN=agent-token node haproxy-agent/derive-token.mjs <url>` prints for each agent.
const DERIVED: Record<string, string> = {
  [AGENT]: "7963b8b37e7a8b8320fd844ca6a424f42c1324dcc0505f9fa884b57dd1450516",
  [SLAVE_1]: "9ffc62990033bdb589df3e677a8dac9aa8b60f7668ca6bdb2df2667aedce29b6",
  [SLAVE_2]: "2a3144b9dd90d5b7ecd2734608d8f4270d699824275b0b1cb15c90e5522ed7f2",
};
const SHARED = Object.fromEntries(Object.keys(DERIVED).map((url) => [url, "agent-token"]));

beforeAll(async () => {
  await createJobsProject();
});

silenceConsoleAndRestoreMocks();

/**
 * Agents that each accept only their own token (401 otherwise, as haproxy-agent does), check and apply anything and
 * report the last version applied; `seen` lists each call as [agent, path, authorization].
 */
function agentsWithTokens(tokens: Record<string, string>) {
  const seen: [string, string, string | null][] = [];
  const runs = new Map<string, number>();
  const digests = new Map<string, string>();
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const request = new Request(input as RequestInfo, init as RequestInit);
    const url = new URL(request.url);
    const authorization = request.headers.get("Authorization");
    seen.push([url.origin, url.pathname, authorization]);
    if (authorization !== `Bearer ${tokens[url.origin]}`)
      return Response.json({ error: "unauthorized" }, { status: 401 });
    if (url.pathname === "/v1/check") return Response.json({ valid: true });
    if (url.pathname === "/v1/status") {
      const digest = digests.get(url.origin) ?? null;
      return Response.json({ version: runs.get(url.origin) ?? null, digest, diskDigest: digest });
    }
    const { version, digest } = (await request.json()) as { version: number; digest: string };
    runs.set(url.origin, version);
    digests.set(url.origin, digest);
    return Response.json({ outcome: "applied", version });
  });
  return { seen, runs };
}

/** gensynchaprx, the slave syncs it queued, then the status page: the version each agent took. */
async function shipEverywhere(workerEnv: Env) {
  const sendBatch = vi.spyOn(env.JOBS, "sendBatch").mockResolvedValue(undefined as never);
  expect((await callWith(workerEnv, "/admin/gensynchaprx")).status).toBe(200);
  const bodies = [...sendBatch.mock.calls[0][0]].map((message) => message.body as { version: number });
  const messages = bodies.map((body, index) => ({ id: `t${index}`, attempts: 1, body }));
  const { result } = await deliverBatch(messages, workerEnv);
  expect(result.explicitAcks).toEqual(["t0", "t1"]);
  const status = await expectJson(callWith(workerEnv, "/admin/haproxy/status"), 200);
  return { version: bodies[0].version, status };
}

describe("agent tokens", () => {
  const slaves = { SLAVE_AGENT_URLS: `${SLAVE_1} ${SLAVE_2}` };

  it("sends each agent its own derived token under HAPROXY_AGENT_TOKENS_PER_AGENT", async () => {
    const { seen, runs } = agentsWithTokens(DERIVED);
    const { version, status } = await shipEverywhere(agentEnv({ ...slaves, HAPROXY_AGENT_TOKENS_PER_AGENT: "true" }));
    expect(Object.fromEntries(runs)).toEqual({ [AGENT]: version, [SLAVE_1]: version, [SLAVE_2]: version });
    expect(status.map((agent: { state: string }) => agent.state)).toEqual(["in-sync", "in-sync", "in-sync"]);
    const paths = (agent: string) => seen.filter(([origin]) => origin === agent).map(([, path]) => path);
    expect(paths(AGENT)).toEqual(["/v1/check", "/v1/config", "/v1/status"]);
    expect(paths(SLAVE_1)).toEqual(["/v1/config", "/v1/status"]);
    expect(paths(SLAVE_2)).toEqual(["/v1/config", "/v1/status"]);
    for (const [origin, , authorization] of seen) expect(authorization).toBe(`Bearer ${DERIVED[origin]}`);
  });

  it("sends every agent HAPROXY_AGENT_TOKEN itself when the setting is off, as before", async () => {
    const { seen, runs } = agentsWithTokens(SHARED);
    const { version } = await shipEverywhere(agentEnv({ ...slaves, HAPROXY_AGENT_TOKENS_PER_AGENT: "false" }));
    expect(Object.fromEntries(runs)).toEqual({ [AGENT]: version, [SLAVE_1]: version, [SLAVE_2]: version });
    expect(seen).toHaveLength(7);
    for (const [, , authorization] of seen) expect(authorization).toBe("Bearer agent-token");
  });
});
