// The agent's HTTP server, started as an operator runs it and asked over real HTTP: what it answers to requests it
// refuses before they reach a push (a bundle too large, a push id that is no id).
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { authorization, startAgent, stopAgents } from "./agent-process";

const dirs: string[] = [];
afterEach(() => {
  stopAgents();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
const tempDir = () => {
  const dir = mkdtempSync(path.join(tmpdir(), "agent-server-"));
  dirs.push(dir);
  return dir;
};

describe("haproxy-agent: the HTTP server", () => {
  it("answers a bundle over --max-body with 413 and why, just over or far over, and goes on answering", async () => {
    const configDir = tempDir();
    const agent = await startAgent(configDir, { args: ["--max-body", "1"] });
    for (const megabytes of [1.5, 16]) {
      const response = await fetch(`${agent.url}/v1/config`, {
        method: "PUT",
        headers: { ...authorization, "Content-Type": "application/json" },
        body: "x".repeat(megabytes * 1024 * 1024),
      });
      expect({ status: response.status, body: await response.json() }).toEqual({
        status: 413,
        body: { error: "the bundle is larger than 1 MB" },
      });
    }
    expect(readdirSync(configDir)).toEqual([]);
    expect((await fetch(`${agent.url}/healthz`)).status).toBe(200);
  });

  it("answers a push id whose percent-escape is malformed with 400, not an unexpected error", async () => {
    const agent = await startAgent(tempDir(), {});
    for (const [method, pathName] of [
      ["GET", "/v1/pushes/%ZZ"],
      ["POST", "/v1/pushes/p-%E0%A4%A/abandon"],
    ]) {
      const response = await fetch(`${agent.url}${pathName}`, { method, headers: authorization });
      expect({ status: response.status, body: await response.json() }).toEqual({
        status: 400,
        body: { error: "the push id must be 1 to 100 letters, digits, dots, dashes or underscores" },
      });
    }
    // An id escaped as it may be is still read: %2D is a dash.
    const known = await fetch(`${agent.url}/v1/pushes/p%2D1`, { headers: authorization });
    expect({ status: known.status, body: await known.json() }).toEqual({
      status: 404,
      body: { error: "unknown push id" },
    });
    expect(agent.output()).not.toContain("unexpected error");
  });
});
