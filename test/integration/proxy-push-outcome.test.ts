// The truth about a push, end to end: a real wrangler dev and the real HAProxy agent (its `haproxy -c` a little slow
// for pushes only, so that it can be paused with SIGSTOP mid-push). Paused past the control plane's time limit and
// resumed before its question times out, the agent drops the push and the version is rejected; paused past both, the
// version is `unknown` until the status poll settles it (rejected when paused before the reload, in force when paused
// during it); a dead slave shows on the parent run and the status page from its first failed attempt.
import { spawn, type ChildProcess } from "node:child_process";
import { chmodSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AGENT_TOKEN, api, proxyVars, root, tempDir, until } from "../support/proxy-haproxy-agent";
import { freePort } from "../support/processes.mjs";
import { requireBinary } from "../support/system-programs.mjs";
import { startWranglerDev, type DevServer } from "../support/wrangler-dev.mjs";

/**
 * Seconds a push's `haproxy -c` takes (a check's takes none): long enough to pause the agent mid-push. The agent's
 * limit is 3 s for the check and for the reload each, so the control plane waits 7 s (and 2 s for its question).
 */
const PUSH_CHECK_SECONDS = 0.8;

let server: DevServer;
let agent: { url: string; dir: string; child: ChildProcess; reloads(): number };
let deadSlave: string;

async function startSlowAgent() {
  const dir = tempDir("agent-outcome");
  const port = await freePort();
  const haproxy = path.join(dir, "slow-haproxy");
  // A push stages its files in .staging-*; a check in .check-*: only pushes are slow.
  writeFileSync(
    haproxy,
    `#!/bin/sh\ncase "$*" in *.staging-*) sleep ${PUSH_CHECK_SECONDS};; esac\nexec haproxy "$@"\n`,
  );
  chmodSync(haproxy, 0o755);
  // The reload takes 2 s while the file slow-reload exists (to pause the agent during a reload).
  const reload = `if [ -f ${dir}/slow-reload ]; then sleep 2; fi; echo reload >> ${dir}/reloads`;
  const args = ["--config-dir", dir, "--reload-cmd", reload, "--port", String(port), "--timeout", "3"];
  const child = spawn(
    process.execPath,
    [path.join(root, "haproxy-agent", "agent.mjs"), ...args, "--haproxy", haproxy],
    {
      env: { ...process.env, HAPROXY_AGENT_TOKEN: AGENT_TOKEN },
      stdio: "ignore",
    },
  );
  const url = `http://127.0.0.1:${port}`;
  await until("the agent to listen", async () => ((await fetch(`${url}/healthz`)).ok ? true : undefined), 20_000);
  const reloads = () =>
    existsSync(`${dir}/reloads`) ? readFileSync(`${dir}/reloads`, "utf8").split("\n").filter(Boolean).length : 0;
  return { url, dir, child, reloads };
}

const agentStatus = async () =>
  (await fetch(`${agent.url}/v1/status`, { headers: { Authorization: `Bearer ${AGENT_TOKEN}` } })).json() as Promise<{
    version: number | null;
  }>;

const staging = () => readdirSync(agent.dir).some((name) => name.startsWith(".staging-"));
/** Whether the agent's push log (written before each reload) has a push reloading. */
const reloading = () => {
  try {
    const log = JSON.parse(readFileSync(path.join(agent.dir, ".agent-pushes.json"), "utf8")) as { state: string }[];
    return log.some((record) => record.state === "reloading");
  } catch {
    return false;
  }
};
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  requireBinary("haproxy");
  agent = await startSlowAgent();
  // Nothing listens there: a slave that is down.
  deadSlave = `http://127.0.0.1:${await freePort()}`;
  const ports = { http: await freePort(), https: await freePort() };
  server = await startWranglerDev(
    proxyVars(agent, ports, {
      SLAVE_AGENT_URLS: deadSlave,
      HAPROXY_AGENT_TIMEOUT: "7s",
      HAPROXY_AGENT_QUERY_TIMEOUT: "2s",
    }),
  );
});

afterAll(async () => {
  await server?.stop();
  if (agent) {
    agent.child.kill("SIGCONT");
    agent.child.kill("SIGTERM");
    rmSync(agent.dir, { recursive: true, force: true });
  }
});

describe("pushes whose answer is lost, against the real agent", () => {
  it("a push the control plane gave up is dropped by the agent, never reloaded, and rejected", async () => {
    const before = (await agentStatus()).version;
    const reloads = agent.reloads();
    const pending = api(server.url, "/admin/gensynchaprx");
    await until("the push to reach the agent", async () => (staging() ? true : undefined), 20_000);
    agent.child.kill("SIGSTOP");
    // Past the push's 7 s, within the question's 2 s that follow.
    await sleep(7800);
    agent.child.kill("SIGCONT");
    const response = await pending;
    expect(response.status).toBe(500);
    const version = Number(/version (\d+)/.exec(response.body.payload)![1]);
    // Whichever the agent noticed first: the client gone, the abandon that followed, or its own deadline.
    expect(response.body.payload).toMatch(
      new RegExp(
        `^Unable to reload and sync of HAProxy: agent ${agent.url} is unreachable: no answer within 7000 ms; asked, ` +
          `it dropped version ${version} before reloading: .+\\. The previous configuration is still active\\.$`,
      ),
    );
    const versions = await api(server.url, "/admin/haproxy/versions");
    expect(versions.body[0]).toMatchObject({ version, status: "rejected" });
    // The agent's slow check ends: it still does not reload.
    await until("the push to end", async () => (staging() ? undefined : true), 20_000);
    await sleep(500);
    expect(agent.reloads()).toBe(reloads);
    expect((await agentStatus()).version).toBe(before);
  });

  it("an agent paused mid-push leaves the version unknown; resumed, the status poll settles it", async () => {
    const before = (await agentStatus()).version;
    const reloads = agent.reloads();
    const pending = api(server.url, "/admin/gensynchaprx");
    await until("the push to reach the agent", async () => (staging() ? true : undefined), 20_000);
    agent.child.kill("SIGSTOP");
    const response = await pending;
    expect(response.status).toBe(500);
    const version = Number(/version (\d+)/.exec(response.body.payload)![1]);
    expect(response.body.payload).toBe(
      `Unable to reload and sync of HAProxy: agent ${agent.url} is unreachable: no answer within 7000 ms; asked ` +
        `what became of version ${version}: agent ${agent.url} is unreachable: no answer within 2000 ms: whether it ` +
        `took the version is unknown. Version ${version} is recorded as unknown. Whether the load balancer took it ` +
        "is unknown until GET /admin/haproxy/status reads the agent again.",
    );
    expect((await api(server.url, "/admin/haproxy/versions")).body[0]).toMatchObject({ version, status: "unknown" });

    agent.child.kill("SIGCONT");
    const statuses = await api(server.url, "/admin/haproxy/status");
    expect(statuses.status).toBe(200);
    expect(statuses.body[0]).toMatchObject({ role: "master", unknownVersions: [], version: before });
    const [settled] = (await api(server.url, "/admin/haproxy/versions")).body;
    expect(settled).toMatchObject({ version, status: "rejected" });
    expect(settled.error).toMatch(/; settled later: it dropped version \d+ before reloading: /);
    await until("the push to end", async () => (staging() ? undefined : true), 20_000);
    await sleep(500);
    expect(agent.reloads()).toBe(reloads);
    expect((await agentStatus()).version).toBe(before);
  });
});

describe("a push paused during its reload, against the real agent", () => {
  it("is unknown while the agent is paused; resumed, it reloads and the status poll makes it the version in force", async () => {
    const reloads = agent.reloads();
    writeFileSync(path.join(agent.dir, "slow-reload"), "");
    try {
      const pending = api(server.url, "/admin/gensynchaprx");
      await until("the reload to start", async () => (reloading() ? true : undefined), 20_000);
      agent.child.kill("SIGSTOP");
      const response = await pending;
      expect(response.status).toBe(500);
      const version = Number(/version (\d+)/.exec(response.body.payload)![1]);
      expect(response.body.payload).toMatch(/Version \d+ is recorded as unknown\. /);
      expect((await api(server.url, "/admin/haproxy/versions")).body[0]).toMatchObject({ version, status: "unknown" });

      agent.child.kill("SIGCONT");
      // Its reload's end written by the agent, not merely by the reload command (which ran on while the agent was
      // paused): from then on the agent answers the push as applied.
      await until(
        "the agent to run the version",
        async () => (await agentStatus()).version === version || undefined,
        20_000,
      );
      const statuses = await api(server.url, "/admin/haproxy/status");
      expect(statuses.body[0]).toMatchObject({
        role: "master",
        state: "in-sync",
        version,
        expectedVersion: version,
        unknownVersions: [],
      });
      expect((await api(server.url, "/admin/haproxy/versions")).body[0]).toMatchObject({ version, status: "active" });
      expect(agent.reloads()).toBe(reloads + 1);
      const run = await api(server.url, `/admin/jobs/${response.headers.get("X-Job-Id")}`);
      expect(run.body.warnings).toContain(
        `INFO: version ${version} was settled as applied: it is the version in force`,
      );
    } finally {
      rmSync(path.join(agent.dir, "slow-reload"), { force: true });
    }
  });
});

describe("a dead slave, against the real queue", () => {
  it("shows on the parent run and the status page from the first failed attempt, with the next retry", async () => {
    const response = await api(server.url, "/admin/gensynchaprx");
    expect(response.status).toBe(200);
    const runId = Number(response.headers.get("X-Job-Id"));
    const warning = await until(
      "the slave's first failed attempt on the parent run",
      async () => {
        const run = await api(server.url, `/admin/jobs/${runId}`);
        return (run.body.warnings as string[]).find((text) => text.startsWith(`WARN: slave ${deadSlave}`));
      },
      60_000,
    );
    expect(warning).toMatch(
      new RegExp(
        `^WARN: slave ${deadSlave} could not be synced to version \\d+ \\(attempt 1 of 6\\): agent ${deadSlave} is ` +
          `unreachable: .*; next attempt at \\d{4}-\\d\\d-\\d\\dT`,
      ),
    );
    const statuses = await api(server.url, "/admin/haproxy/status");
    expect(statuses.body[1]).toMatchObject({
      role: "slave",
      agentUrl: deadSlave,
      state: "unreachable",
      sync: { state: "retrying", attempts: 1, nextRetryAt: expect.stringMatching(/^\d{4}-/) },
    });
    expect(Date.parse(statuses.body[1].sync.nextRetryAt) - Date.now()).toBeGreaterThan(0);
  });
});
