// A kill -9 of wrangler dev (and its workerd) in the middle of gensynchaprx, as an operator meets it: the agent got the
// push and applied it, the control plane died before the answer. After a restart on the same state, 423 lasts only
// until the dead run's lock lease (JOB_HEARTBEAT_TIMEOUT) runs out, the minute sweep fails the run with its cause, and
// the version it left pending is settled as active by asking the agent about its push.
import { createServer, type IncomingMessage, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { api, jobEnded, proxyVars, until } from "../support/proxy-haproxy-agent";
import { freePort, tempDir } from "../support/processes.mjs";
import { startWranglerDev, type DevServer } from "../support/wrangler-dev.mjs";

/**
 * Short enough for a test, long enough that the restart (wrangler dev and its D1 migrations, under load) ends well
 * before it: the 423 that shows the dead run's lock is held can be seen only until the lease ends.
 */
const HEARTBEAT_TIMEOUT_MS = 30_000;
/** How late the lock may be seen free: polling and requests on a loaded machine, far below JOB_LOCK_TIMEOUT's 15 min. */
const FREED_SLACK_MS = 10_000;

interface Pushed {
  version: number;
  digest: string;
}

/**
 * An agent that checks every bundle valid, applies a push but never answers it, and reports what it applied (asked
 * about the push by its id: applied).
 */
async function startSilentAgent() {
  let pushed: Pushed | undefined;
  const held: { end(): void }[] = [];
  const body = async (request: IncomingMessage) => {
    let text = "";
    for await (const chunk of request) text += chunk;
    return JSON.parse(text) as Pushed;
  };
  const server: Server = createServer(async (request, response) => {
    const json = (value: unknown) =>
      response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(value));
    if (request.url === "/v1/check") {
      await body(request);
      return json({ valid: true });
    }
    if (request.url === "/v1/config") {
      const { version, digest } = await body(request);
      pushed = { version, digest };
      held.push(response);
      return;
    }
    const abandon = /^\/v1\/pushes\/([^/]+)\/abandon$/.exec(request.url ?? "");
    if (abandon && pushed) {
      await body(request).catch(() => undefined);
      const at = new Date().toISOString();
      return json({ pushId: abandon[1], version: pushed.version, state: "applied", error: null, at });
    }
    if (request.url === "/v1/status") {
      const digest = pushed?.digest ?? null;
      return json({
        version: pushed?.version ?? null,
        digest,
        diskDigest: digest,
        appliedAt: new Date().toISOString(),
      });
    }
    response.writeHead(404).end();
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${port}`,
    pushed: () => pushed,
    close: () => {
      for (const response of held) response.end();
      server.close();
    },
  };
}

/**
 * Runs the minute sweep until run `id` is no longer running, and returns the run: its own heartbeat may be a little
 * younger than its lock's last renewal, so the first sweep after the lock ended may still find it alive.
 */
function sweptRun(url: string, id: number) {
  return until(
    "the sweep to fail the dead run",
    async () => {
      const sweep = await fetch(`${url}/__scheduled?cron=${encodeURIComponent("* * * * *")}`);
      expect(sweep.status).toBe(200);
      const run = (await api(url, `/admin/jobs/${id}`)).body;
      return run.state === "running" ? undefined : run;
    },
    FREED_SLACK_MS,
  );
}

let agent: Awaited<ReturnType<typeof startSilentAgent>>;
let state: { dir: string; remove: () => void };
let server: DevServer | undefined;

beforeAll(async () => {
  agent = await startSilentAgent();
  state = tempDir("jobs-crash-state-");
});

afterAll(async () => {
  await server?.stop();
  agent?.close();
  state?.remove();
});

describe("gensynchaprx killed between the push and the agent's answer", () => {
  it("frees its lock within JOB_HEARTBEAT_TIMEOUT, and the sweep fails its run and settles its version", async () => {
    const vars = proxyVars(
      agent,
      { http: 18080, https: 18443 },
      { JOB_HEARTBEAT_TIMEOUT: `${HEARTBEAT_TIMEOUT_MS}ms` },
    );
    server = await startWranglerDev(vars, { persistTo: state.dir });
    const call = api(server.url, "/admin/gensynchaprx").catch(() => undefined);
    const pushed = await until("the push", async () => agent.pushed());
    const killedAt = Date.now();
    process.kill(-server.pgid, "SIGKILL");
    await call;
    await server.stop();

    server = await startWranglerDev(vars, { persistTo: state.dir });
    const restartedAfterMs = Date.now() - killedAt;
    // A restart slower than this leaves too little of the lease to see it held: say so rather than fail on the 423.
    expect(restartedAfterMs, "the restart took too long to observe the held lock").toBeLessThan(
      HEARTBEAT_TIMEOUT_MS - 10_000,
    );
    // writesshprx shares the lock; a gensynchaprx that got it would push to the silent agent and wait on it.
    const first = await api(server.url, "/admin/writesshprx");
    expect(first.status).toBe(423);
    expect(first.body.payload).toMatch(/^Job is already running \(gensynchaprx since /);
    // Once writesshprx gets the lock it runs at once from the local queue and lets it go.
    const probe = await until(
      "the dead run's lock to end",
      async () => {
        const answer = await api(server!.url, "/admin/writesshprx");
        return answer.status === 423 ? undefined : answer;
      },
      HEARTBEAT_TIMEOUT_MS + FREED_SLACK_MS,
    );
    const freedAfterMs = Date.now() - killedAt;
    expect(probe.status).toBe(200);
    expect(freedAfterMs).toBeLessThanOrEqual(HEARTBEAT_TIMEOUT_MS + FREED_SLACK_MS);
    await jobEnded(server.url, Number(probe.headers.get("X-Job-Id")));

    const jobs = await api(server.url, "/admin/jobs?kind=gensynchaprx");
    const dead = jobs.body.find((run: { state: string }) => run.state === "running");
    expect(dead).toMatchObject({ kind: "gensynchaprx", state: "running" });
    expect(await sweptRun(server.url, dead.id)).toMatchObject({
      state: "failed",
      error: "its worker stopped: no heartbeat for 30 s (a crash or a deploy); the run was not retried",
      warnings: [`INFO: version ${pushed.version} was settled as applied: it is the version in force`],
    });
    const version = await api(server.url, `/admin/haproxy/versions/${pushed.version}`);
    expect(version.body).toMatchObject({ version: pushed.version, status: "active", digest: pushed.digest });
    console.log(
      `jobs-crash: restarted ${restartedAfterMs} ms after the kill, lock free ${freedAfterMs} ms after it (lease ${HEARTBEAT_TIMEOUT_MS} ms)`,
    );
  }, 240_000);
});
