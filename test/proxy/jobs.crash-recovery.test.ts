// The proxy's jobs across crashes and redelivery: a writesshprx or slave sync delivered twice writes once, a
// redelivery after a crash fails the run instead of running it again, a running job's lock and run beat (so that a
// dead holder frees its lock within JOB_HEARTBEAT_TIMEOUT, not JOB_LOCK_TIMEOUT), and the minute sweep settles a
// version a dead run left pending by asking the master agent about its push.
import { createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import worker from "../../src/index";
import { createJobRun, finishJobRun, getJobRun, startJobRun } from "../../src/jobs/history";
import { claimJobRun, deadRunError } from "../../src/jobs/run-claims";
import { SWEEP_CRON } from "../../src/jobs/sweep";
import { storeVersion } from "../../src/proxy/haproxy/versions";
import { CONFIG_LOCK } from "../../src/proxy/jobs";
import { expectJson } from "../support/proxy-api";
import { deliverBatch } from "../support/jobs-queue";
import { createDeployedProject } from "../support/proxy-fixtures";
import {
  AGENT,
  agentEnv,
  agents,
  applied,
  callWith,
  db,
  fakeAgents,
  locks,
  record,
  withVars,
} from "../support/proxy-job-env";

const SLAVE = "http://slave-crash.test:9400";
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  await createDeployedProject("crashes");
});

beforeEach(() => {
  vi.spyOn(console, "log").mockImplementation(() => {});
  vi.spyOn(console, "error").mockImplementation(() => {});
});

afterEach(() => {
  vi.restoreAllMocks();
});

/** Runs the minute's sweep as its Cron Trigger does. */
async function sweep(workerEnv: Env) {
  const ctx = createExecutionContext();
  await worker.scheduled(createScheduledController({ scheduledTime: new Date(), cron: SWEEP_CRON }), workerEnv, ctx);
  await waitOnExecutionContext(ctx);
}

/** The number of stored SSH proxy versions. */
const sshVersionCount = async () =>
  (await env.DB.prepare("select count(*) as n from ssh_proxy_versions").first<{ n: number }>())!.n;

/** The number of stored HAProxy versions. */
const haproxyVersionCount = async () =>
  (await env.DB.prepare("select count(*) as n from haproxy_versions").first<{ n: number }>())!.n;

/** GET /admin/writesshprx with the queue's send captured: the message its run waits for. */
async function queuedWriteSshProxy(workerEnv: Env) {
  const send = vi.spyOn(env.JOBS, "send").mockResolvedValue(undefined as never);
  expect((await callWith(workerEnv, "/admin/writesshprx")).status).toBe(200);
  const message = send.mock.calls[0][0] as { kind: string; runId: number; lockHolder: string };
  send.mockRestore();
  return message;
}

describe("writesshprx delivered more than once", () => {
  it("twice in one batch: one SSH proxy version, one run outcome, and the lock freed", async () => {
    const message = await queuedWriteSshProxy(withVars());
    const before = await sshVersionCount();
    const { result } = await deliverBatch(
      [
        { id: "w", attempts: 1, body: message },
        { id: "w", attempts: 1, body: message },
      ],
      withVars(),
    );
    expect(result.explicitAcks).toEqual(["w", "w"]);
    expect(await sshVersionCount()).toBe(before + 1);
    const stored = await expectJson(callWith(withVars(), "/admin/sshproxy"), 200);
    expect(stored.jobId).toBe(message.runId);
    expect(await getJobRun(db(), message.runId)).toMatchObject({
      state: "succeeded",
      attempts: 1,
      warnings: [`INFO: SSH proxy version ${stored.version}: ${stored.accounts.length} accounts`, ...stored.warnings],
    });
    expect(await locks().inspect(CONFIG_LOCK)).toBeNull();
  });

  it("again after its worker died: 423 only until its lock's heartbeat runs out, then the run fails with the cause and nothing is written", async () => {
    const fast = withVars({ JOB_HEARTBEAT_TIMEOUT: "1s" });
    const message = await queuedWriteSshProxy(fast);
    // What a consumer killed mid-run leaves: the run claimed, the lock taken over with a one-beat lease, no version.
    await claimJobRun(db(), { id: message.runId, now: new Date(), heartbeatTimeoutMs: 1_000 });
    const takenOver = await locks().acquire(CONFIG_LOCK, {
      holder: message.lockHolder,
      kind: "writesshprx",
      ttlMs: 1_000,
    });
    expect(takenOver.acquired).toBe(true);
    const before = await sshVersionCount();

    expect((await callWith(fast, "/admin/gensynchaprx")).status).toBe(423);
    const early = await deliverBatch([{ id: "early", attempts: 2, body: message }], fast);
    expect(early.result.explicitAcks).toEqual(["early"]);
    expect(await getJobRun(db(), message.runId)).toMatchObject({ state: "running", attempts: 1 });

    await sleep(1_100);
    const late = await deliverBatch([{ id: "late", attempts: 3, body: message }], fast);
    expect(late.result.explicitAcks).toEqual(["late"]);
    expect(late.result.retryMessages).toEqual([]);
    expect(await getJobRun(db(), message.runId)).toMatchObject({
      state: "failed",
      attempts: 1,
      error: "its worker stopped: no heartbeat for 1 s (a crash or a deploy); the run was not retried",
    });
    expect(await sshVersionCount()).toBe(before);
    expect((await callWith(fast, "/admin/gensynchaprx")).status).toBe(200);
  });
});

describe("slave sync delivered twice", () => {
  it("pushes once and reports once on the parent run", async () => {
    const sendBatch = vi.spyOn(env.JOBS, "sendBatch").mockResolvedValue(undefined as never);
    fakeAgents(applied);
    const response = await callWith(agentEnv({ SLAVE_AGENT_URLS: SLAVE }), "/admin/gensynchaprx");
    const warnings = await expectJson(response, 200);
    const parentRunId = Number(response.headers.get("X-Job-Id"));
    const body = [...sendBatch.mock.calls[0][0]][0].body as { version: number };
    vi.restoreAllMocks();

    const { calls } = fakeAgents(applied);
    const { result } = await deliverBatch(
      [
        { id: "s", attempts: 1, body },
        { id: "s", attempts: 1, body },
      ],
      agentEnv(),
    );
    expect(result.explicitAcks).toEqual(["s", "s"]);
    expect(calls.map((call) => call.url)).toEqual([`${SLAVE}/v1/config`]);
    expect((await getJobRun(db(), parentRunId))!.warnings).toEqual([
      ...warnings,
      `INFO: slave ${SLAVE} synced to version ${body.version}`,
    ]);
  });
});

describe("a queued gensynchaprx retried after its version shipped", () => {
  it("ships nothing again: no check, no push, no new version, the same notes", async () => {
    const runId = await createJobRun(db(), { kind: "gensynchaprx", trigger: "test" });
    const { calls, checks } = fakeAgents(applied);
    const first = await deliverBatch([{ id: "g1", attempts: 1, body: { kind: "gensynchaprx", runId } }], agentEnv());
    expect(first.result.explicitAcks).toEqual(["g1"]);
    const done = (await getJobRun(db(), runId))!;
    expect(done.state).toBe("succeeded");
    const versions = await haproxyVersionCount();
    const [pushes, checked] = [calls.length, checks.length];
    expect(pushes).toBe(1);

    // Its end was not recorded (a D1 write that failed, say): the queue retries a run that already shipped.
    await finishJobRun(db(), { id: runId, now: new Date(), state: "queued", error: "could not record the end" });
    const retry = await deliverBatch([{ id: "g2", attempts: 2, body: { kind: "gensynchaprx", runId } }], agentEnv());
    expect(retry.result.explicitAcks).toEqual(["g2"]);
    expect([calls.length, checks.length]).toEqual([pushes, checked]);
    expect(await haproxyVersionCount()).toBe(versions);
    expect(await getJobRun(db(), runId)).toMatchObject({ state: "succeeded", attempts: 2, error: null });
    expect((await expectJson(callWith(withVars(), "/admin/haproxy"), 200)).jobId).toBe(runId);
  });
});

describe("heartbeats of a running job", () => {
  it("renew the lock and the run while gensynchaprx waits on the agent: a lease of JOB_HEARTBEAT_TIMEOUT, never the 15 minutes of JOB_LOCK_TIMEOUT", async () => {
    // A one-second lease beats every 250 ms: a starved isolate has 750 ms before the lease or the run looks dead.
    const fast = agentEnv({ JOB_HEARTBEAT_TIMEOUT: "1s" });
    let releaseAgent!: () => void;
    const agentGate = new Promise<void>((resolve) => (releaseAgent = resolve));
    fakeAgents(async () => {
      await agentGate;
      return applied();
    });
    const { last } = (await env.DB.prepare("select coalesce(max(id), 0) as last from job_runs").first<{
      last: number;
    }>())!;
    const call = callWith(fast, "/admin/gensynchaprx");
    // The run has beaten for two leases' time: the lock and the run have been renewed several times.
    const running = await vi.waitUntil(
      async () => {
        const row = await env.DB.prepare(
          "select id from job_runs where kind = 'gensynchaprx' and id > ? order by id desc limit 1",
        )
          .bind(last)
          .first<{ id: number }>();
        const run = row && (await getJobRun(db(), row.id));
        if (!run?.startedAt || !run.heartbeatAt) return false;
        return run.heartbeatAt.getTime() - run.startedAt.getTime() >= 2_000 && run;
      },
      { timeout: 20_000, interval: 50 },
    );
    const runId = running.id;
    const lock = (await locks().inspect(CONFIG_LOCK))!;
    expect(lock.kind).toBe("gensynchaprx");
    expect(lock.expiresAt - Date.now()).toBeLessThanOrEqual(1_000);
    expect(lock.expiresAt - lock.acquiredAt).toBeGreaterThan(2_000);
    await sweep(fast);
    expect((await getJobRun(db(), runId))!.state).toBe("running");
    releaseAgent();
    const response = await call;
    expect(response.status).toBe(200);
    expect(Number(response.headers.get("X-Job-Id"))).toBe(runId);
    expect(await getJobRun(db(), runId)).toMatchObject({ state: "succeeded", error: null });
    expect(await locks().inspect(CONFIG_LOCK)).toBeNull();
  }, 30_000);
});

/** What a gensynchaprx killed between its push and the agent's answer leaves: its run running, its version pending. */
async function versionOfDeadRun(digest: string) {
  const runId = await startJobRun(db(), { kind: "gensynchaprx", trigger: "api (admin)", now: new Date() });
  const createdAt = new Date();
  const version = await storeVersion(db(), {
    digest,
    jobRunId: runId,
    files: { "haproxy.cfg": `# ${digest}\n` },
    certificateFiles: [],
    now: createdAt,
  });
  await env.DB.prepare("update job_runs set heartbeat_at = ? where id = ?")
    .bind(Date.now() - 61_000, runId)
    .run();
  return { runId, version, abandon: `${AGENT}/v1/pushes/v${version}-${createdAt.getTime()}/abandon` };
}

const versionRow = (version: number) =>
  env.DB.prepare("select status, error from haproxy_versions where id = ?").bind(version).first();

const DROPPED = "given up by the control plane before its reload";

describe("a version left pending by a run whose worker died", () => {
  it("is asked about by its push id; applied, it is made active, the slaves follow, and the run says so", async () => {
    const { runId, version, abandon } = await versionOfDeadRun("sha256:crash-applied");
    const sendBatch = vi.spyOn(env.JOBS, "sendBatch").mockResolvedValue(undefined as never);
    const seen = agents({ abandon: () => record("applied", version) });
    await sweep(agentEnv({ SLAVE_AGENT_URLS: SLAVE }));
    expect(seen.map((call) => [call.method, call.url])).toEqual([["POST", abandon]]);
    expect(await versionRow(version)).toEqual({ status: "active", error: null });
    const syncs = [...sendBatch.mock.calls[0][0]].map((message) => message.body as { runId: number });
    expect(syncs).toEqual([
      { kind: "haproxy-slave-sync", parentRunId: runId, version, agentUrl: SLAVE, runId: expect.any(Number) },
    ]);
    expect(await getJobRun(db(), runId)).toMatchObject({
      state: "failed",
      error: deadRunError(60_000),
      warnings: [
        `INFO: version ${version} was settled as applied: it is the version in force`,
        `INFO: sync of version ${version} to slave ${SLAVE} queued as job ${syncs[0].runId}`,
      ],
    });
    expect(await locks().inspect(CONFIG_LOCK)).toBeNull();
  });

  it("is rejected with the cause when the master agent dropped it (which also stops a push not yet reloading)", async () => {
    const { runId, version, abandon } = await versionOfDeadRun("sha256:crash-lost");
    const seen = agents({ abandon: () => record("abandoned", version, DROPPED) });
    await sweep(agentEnv());
    expect(seen.map((call) => [call.method, call.url])).toEqual([["POST", abandon]]);
    const why = `it dropped version ${version} before reloading: ${DROPPED}`;
    expect(await versionRow(version)).toEqual({
      status: "rejected",
      error: `run ${runId} stopped before the agent answered; settled later: ${why}`,
    });
    expect((await getJobRun(db(), runId))!.warnings).toEqual([
      `INFO: version ${version} was settled as rejected: ${why}`,
    ]);
  });

  it("stays pending while the master agent cannot tell or be asked, and while its run still beats", async () => {
    const dead = await versionOfDeadRun("sha256:crash-unknown");
    agents({ abandon: () => new Response("down", { status: 503 }) });
    await sweep(agentEnv());
    vi.mocked(globalThis.fetch).mockRestore();
    agents({ abandon: () => record("reloading", dead.version) });
    await sweep(agentEnv());
    vi.mocked(globalThis.fetch).mockRestore();
    expect(await versionRow(dead.version)).toEqual({ status: "pending", error: null });

    const liveRun = await startJobRun(db(), { kind: "gensynchaprx", trigger: "api (admin)", now: new Date() });
    const live = await storeVersion(db(), {
      digest: "sha256:live",
      jobRunId: liveRun,
      files: { "haproxy.cfg": "# live\n" },
      certificateFiles: [],
      now: new Date(),
    });
    const seen = agents({ abandon: () => record("abandoned", dead.version, DROPPED) });
    await sweep(agentEnv());
    expect(seen.map((call) => call.url)).toEqual([dead.abandon]);
    expect(await versionRow(live)).toEqual({ status: "pending", error: null });
    expect(await getJobRun(db(), liveRun)).toMatchObject({ state: "running", warnings: [] });
    expect(await versionRow(dead.version)).toMatchObject({ status: "rejected" });
  });
});
