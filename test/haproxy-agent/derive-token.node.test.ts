// haproxy-agent/derive-token.mjs: the token it prints for an agent is the one the control plane sends that agent under
// HAPROXY_AGENT_TOKENS_PER_AGENT, and an agent configured with its own token refuses another agent's (401).
import { execFileSync, spawnSync } from "node:child_process";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { derivedAgentToken } from "../../src/proxy/haproxy/agent-token";
import { startAgent, stopAgents } from "./agent-process";
import { scratchDirs } from "./scratch-dirs";

const script = path.join(import.meta.dirname, "..", "..", "haproxy-agent", "derive-token.mjs");
const SECRET = "the-control-plane-secret";
const derive = (agentUrl: string, secret = SECRET) =>
  execFileSync(process.execPath, [script, agentUrl], { env: { HAPROXY_AGENT_TOKEN: secret }, encoding: "utf8" });

const tempDir = scratchDirs("agent-token-");
afterEach(stopAgents);

describe("haproxy-agent/derive-token.mjs", () => {
  it("prints the token the control plane derives, the same for each spelling of one URL", async () => {
    const token = await derivedAgentToken(SECRET, "http://lb-a.example:9400");
    expect(token).toMatch(/^[0-9a-f]{64}$/);
    expect(token).not.toBe(await derivedAgentToken(SECRET, "http://lb-b.example:9400"));
    expect(token).not.toBe(await derivedAgentToken("another-secret", "http://lb-a.example:9400"));
    for (const spelling of ["http://lb-a.example:9400", "http://LB-A.example:9400/", "HTTP://lb-a.example:9400//"]) {
      expect(derive(spelling)).toBe(`${token}\n`);
      expect(await derivedAgentToken(SECRET, spelling)).toBe(token);
    }
    expect(derive("https://lb-a.example:443/agent/")).toBe(
      `${await derivedAgentToken(SECRET, "https://lb-a.example/agent")}\n`,
    );
  });

  it("refuses to run without the secret, without a URL or with one that is none", () => {
    const run = (args: string[], env: Record<string, string>) => {
      const { status, stdout, stderr } = spawnSync(process.execPath, [script, ...args], { env, encoding: "utf8" });
      return { status, stdout, stderr };
    };
    expect(run(["http://lb-a.example:9400"], {})).toEqual({
      status: 2,
      stdout: "",
      stderr: "HAPROXY_AGENT_TOKEN (the control plane's secret) is not set\n",
    });
    expect(run([], { HAPROXY_AGENT_TOKEN: SECRET })).toMatchObject({
      status: 2,
      stdout: "",
      stderr: expect.stringMatching(/^usage: /),
    });
    expect(run(["lb-a"], { HAPROXY_AGENT_TOKEN: SECRET })).toEqual({
      status: 2,
      stdout: "",
      stderr: "not a URL: lb-a\n",
    });
  });

  it("gives an agent a token that opens no other agent", async () => {
    const urlA = "http://lb-a.example:9400";
    const agentB = await startAgent(tempDir(), {
      env: { HAPROXY_AGENT_TOKEN: derive("http://lb-b.example:9400").trim() },
    });
    const status = (token: string) =>
      fetch(`${agentB.url}/v1/status`, { headers: { Authorization: `Bearer ${token}` } });
    const refused = await status(await derivedAgentToken(SECRET, urlA));
    expect(refused.status).toBe(401);
    expect((await status(SECRET)).status).toBe(401);
    expect((await status(await derivedAgentToken(SECRET, "http://lb-b.example:9400"))).status).toBe(200);
  });
});
