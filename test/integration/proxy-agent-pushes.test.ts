// The real HAProxy agent (its process, a real `haproxy -c`) when the control plane loses a push's answer: paused with
// SIGSTOP past the client's time limit, then resumed, it never reloads the push the client gave up; a client that
// goes away while `haproxy -c` runs stops the push; POST /v1/pushes/{id}/abandon tells what became of each id.
import { spawn, type ChildProcess } from "node:child_process";
import { chmodSync, existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bundleDigest } from "../../src/proxy/haproxy/config";
import { AGENT_TOKEN, root, tempDir, until } from "../support/proxy-haproxy-agent";
import { freePort } from "../support/processes.mjs";
import { requireBinary } from "../support/system-programs.mjs";

const agents: { child: ChildProcess; dir: string }[] = [];

/** An agent whose reload appends to `reloads`; `haproxy` may be a wrapper that sleeps before the real check. */
async function startAgent(options: { checkDelaySeconds?: number } = {}) {
  const dir = tempDir("agent-pushes");
  const port = await freePort();
  let haproxy = "haproxy";
  if (options.checkDelaySeconds) {
    haproxy = path.join(dir, "slow-haproxy");
    writeFileSync(haproxy, `#!/bin/sh\nsleep ${options.checkDelaySeconds}\nexec haproxy "$@"\n`);
    chmodSync(haproxy, 0o755);
  }
  const args = ["--config-dir", dir, "--reload-cmd", `echo reload >> ${dir}/reloads`, "--port", String(port)];
  const child = spawn(
    process.execPath,
    [path.join(root, "haproxy-agent", "agent.mjs"), ...args, "--haproxy", haproxy],
    {
      env: { ...process.env, HAPROXY_AGENT_TOKEN: AGENT_TOKEN },
      stdio: "ignore",
    },
  );
  agents.push({ child, dir });
  const url = `http://127.0.0.1:${port}`;
  await until("the agent to listen", async () => ((await fetch(`${url}/healthz`)).ok ? true : undefined), 20_000);
  const reloads = () =>
    existsSync(`${dir}/reloads`) ? readFileSync(`${dir}/reloads`, "utf8").split("\n").filter(Boolean).length : 0;
  return { url, dir, child, reloads };
}

const CONFIG = (marker: string) =>
  ["global", "defaults", "    mode http", "    timeout connect 5s", "    timeout client 5s", "    timeout server 5s"]
    .concat(["frontend f", "    bind 127.0.0.1:65001", "    default_backend b", "backend b", `    # ${marker}`, ""])
    .join("\n");

async function pushBody(version: number, pushId: string) {
  const files = { "haproxy.cfg": CONFIG(`v${version}`) };
  return { version, digest: await bundleDigest(files), onlyIfNewer: false, files, pushId };
}

const headers = { Authorization: `Bearer ${AGENT_TOKEN}`, "content-type": "application/json" };

/** A push the client gives up after `timeoutMs`: what it saw (the error's name, or the status). */
async function pushWithin(url: string, body: unknown, timeoutMs: number) {
  try {
    const response = await fetch(`${url}/v1/config`, {
      method: "PUT",
      headers,
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    return { status: response.status, body: await response.json() };
  } catch (error) {
    return { error: (error as Error).name };
  }
}

async function abandon(url: string, pushId: string) {
  const response = await fetch(`${url}/v1/pushes/${pushId}/abandon`, { method: "POST", headers });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(() => {
  requireBinary("haproxy");
});

afterAll(() => {
  for (const { child, dir } of agents) {
    child.kill("SIGCONT");
    child.kill("SIGTERM");
    rmSync(dir, { recursive: true, force: true });
  }
});

describe("haproxy-agent: the truth about a push", () => {
  it("paused past the client's time limit and resumed, it drops the push the client gave up", async () => {
    const agent = await startAgent();
    expect((await pushWithin(agent.url, await pushBody(1, "first"), 10_000)).status).toBe(200);
    agent.child.kill("SIGSTOP");
    const lost = await pushWithin(agent.url, await pushBody(2, "lost-while-paused"), 1000);
    expect(lost).toEqual({ error: "TimeoutError" });
    agent.child.kill("SIGCONT");
    await sleep(500);
    expect(await abandon(agent.url, "lost-while-paused")).toEqual({
      status: 200,
      body: {
        pushId: "lost-while-paused",
        version: 2,
        state: "abandoned",
        error: "version 2 was not applied: the control plane went away before the reload",
        at: expect.any(String),
      },
    });
    expect(agent.reloads()).toBe(1);
    const status = await (await fetch(`${agent.url}/v1/status`, { headers })).json();
    expect(status).toMatchObject({ version: 1, lastError: null });
  });

  it("paused, asked to abandon a push it has not read yet, never applies it once resumed", async () => {
    const agent = await startAgent();
    agent.child.kill("SIGSTOP");
    // Sent while paused, without a time limit: it waits in the socket until the agent resumes.
    const pending = fetch(`${agent.url}/v1/config`, {
      method: "PUT",
      headers,
      body: JSON.stringify(await pushBody(3, "given-up")),
    });
    await sleep(300);
    const abandoning = abandon(agent.url, "given-up");
    await sleep(300);
    agent.child.kill("SIGCONT");
    const [pushed, abandoned] = await Promise.all([pending, abandoning]);
    expect(abandoned).toMatchObject({ status: 200, body: { pushId: "given-up", state: "abandoned" } });
    expect(pushed.status).toBe(410);
    expect(await pushed.json()).toEqual({
      error: expect.stringMatching(/^version 3 was not applied: /),
      abandoned: true,
    });
    expect(agent.reloads()).toBe(0);
  });

  it("stops a push whose client goes away while haproxy -c runs", async () => {
    const agent = await startAgent({ checkDelaySeconds: 2 });
    expect(await pushWithin(agent.url, await pushBody(1, "impatient"), 500)).toEqual({ error: "TimeoutError" });
    const ended = await until(
      "the push to end",
      async () => {
        const response = await fetch(`${agent.url}/v1/pushes/impatient`, { headers });
        const body = (await response.json()) as { state: string };
        return body.state === "received" ? undefined : body;
      },
      10_000,
    );
    expect(ended).toMatchObject({
      state: "abandoned",
      error: "version 1 was not applied: the control plane went away before the reload",
    });
    await sleep(2500);
    expect(agent.reloads()).toBe(0);
    expect(existsSync(path.join(agent.dir, "haproxy.cfg"))).toBe(false);
  });

  it("answers an applied push as applied, and refuses a push id that is not one", async () => {
    const agent = await startAgent();
    expect(await pushWithin(agent.url, await pushBody(5, "kept"), 10_000)).toEqual({
      status: 200,
      body: { outcome: "applied", version: 5 },
    });
    expect(await abandon(agent.url, "kept")).toMatchObject({ status: 200, body: { state: "applied", version: 5 } });
    const unknown = await fetch(`${agent.url}/v1/pushes/never-sent`, { headers });
    expect({ status: unknown.status, body: await unknown.json() }).toEqual({
      status: 404,
      body: { error: "unknown push id" },
    });
    expect(await abandon(agent.url, "not%20one")).toEqual({
      status: 400,
      body: { error: "the push id must be 1 to 100 letters, digits, dots, dashes or underscores" },
    });
    const anonymous = await fetch(`${agent.url}/v1/pushes/kept/abandon`, { method: "POST" });
    expect(anonymous.status).toBe(401);
  });
});
