// When a configuration job may not run: the lock gensynchaprx and writesshprx share (423, one of two concurrent
// runs, held until a queued run ends, a queued run retried; a run that lost it never puts an older version back on
// the master), and a slave instance, which runs no job (405).
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { getJobRun } from "../../src/jobs/history";
import { GENSYNC_FAILED } from "../../src/proxy/haproxy/sync";
import { CONFIG_LOCK, MAINTENANCE_LOCK } from "../../src/proxy/jobs";
import { errorBody, expectJson } from "../support/proxy-api";
import { deliverBatch } from "../support/jobs-queue";
import {
  AGENT,
  agentEnv,
  applied,
  callWith,
  db,
  fakeAgents,
  locks,
  valid,
  withVars,
  type AgentCall,
} from "../support/proxy-job-env";
import { silenceConsoleAndRestoreMocks } from "../support/silent-console";
import { SLAVE_JOB } from "./routes/refusals-fixtures";
import { createJobsProject } from "./jobs-fixtures";

beforeAll(async () => {
  await createJobsProject();
});

silenceConsoleAndRestoreMocks();

describe("locks", () => {
  it("answers 423 to gensynchaprx and writesshprx while their shared lock is held, not to the maintenance job", async () => {
    await locks().acquire(CONFIG_LOCK, { holder: "someone-else", kind: "gensynchaprx", ttlMs: 60_000 });
    const send = vi.spyOn(env.JOBS, "send").mockResolvedValue(undefined as never);
    try {
      for (const path of ["/admin/gensynchaprx", "/admin/writesshprx"]) {
        const body = await expectJson(callWith(withVars(), path), 423);
        expect(body.payload).toMatch(/^Job is already running \(gensynchaprx since \d{4}-\d\d-\d\dT[\d:.]+Z\)$/);
      }
      expect(send).not.toHaveBeenCalled();
      expect((await callWith(withVars(), "/maintenance/start")).status).toBe(200);
      expect(await expectJson(callWith(withVars(), "/maintenance/start"), 423)).toMatchObject({
        payload: expect.stringMatching(/^Job is already running \(certificates since/),
      });
    } finally {
      await locks().release(CONFIG_LOCK, "someone-else");
      const maintenance = await locks().inspect(MAINTENANCE_LOCK);
      await locks().release(MAINTENANCE_LOCK, maintenance!.holder);
    }
    expect((await callWith(withVars(), "/admin/gensynchaprx")).status).toBe(200);
  });

  it("lets exactly one of two concurrent gensynchaprx run", async () => {
    let releaseAgent!: () => void;
    const agentGate = new Promise<void>((resolve) => (releaseAgent = resolve));
    fakeAgents(async () => {
      await agentGate;
      return applied();
    });
    const first = callWith(agentEnv(), "/admin/gensynchaprx");
    const second = callWith(agentEnv(), "/admin/gensynchaprx");
    const loser = await Promise.race([first, second]);
    expect(loser.status).toBe(423);
    releaseAgent();
    expect([(await first).status, (await second).status].sort()).toEqual([200, 423]);
  });

  /**
   * A master agent as the real one: it keeps the last version applied and refuses an older one when asked to
   * (onlyIfNewer). The first push waits for `gate` before it is applied, or, `answerLate`, after, before its answer.
   */
  function masterAgent(gate: Promise<void>, answerLate = false) {
    const agent = { runs: 0, calls: [] as AgentCall[] };
    agent.calls = fakeAgents(async (call) => {
      const held = call === agent.calls[0];
      if (held && !answerLate) await gate;
      const { version, onlyIfNewer } = call.body;
      if (onlyIfNewer && version < agent.runs) {
        const error = `this load balancer runs version ${agent.runs}, newer than ${version}`;
        return Response.json({ error, version: agent.runs }, { status: 409 });
      }
      agent.runs = version;
      if (held) await gate;
      return Response.json({ outcome: "applied", version });
    }).calls;
    return agent;
  }

  /** Starts a run, has it lose its lock once its push reached the agent, and a second run ship: both versions. */
  async function secondRunShipsWhileFirstPushes(agent: ReturnType<typeof masterAgent>) {
    const first = callWith(agentEnv(), "/admin/gensynchaprx");
    await vi.waitFor(() => expect(agent.calls).toHaveLength(1));
    // The first run's lease ends (its lock object unreachable for a while): a second run takes the lock and ships.
    const held = await locks().inspect(CONFIG_LOCK);
    expect(await locks().release(CONFIG_LOCK, held!.holder)).toBe(true);
    expect(await expectJson(callWith(agentEnv(), "/admin/gensynchaprx"), 200)).toEqual([]);
    const [older, newer] = agent.calls.map((call) => call.body.version as number);
    expect(newer).toBeGreaterThan(older);
    expect(agent.runs).toBe(newer);
    return { first, older, newer };
  }

  const statesOf = async (...ids: number[]) => {
    const versions = await expectJson(callWith(withVars(), "/admin/haproxy/versions"), 200);
    return versions.filter((row: any) => ids.includes(row.version)).map((row: any) => [row.status, row.error]);
  };

  it("keeps the master on the newer version when a run that lost its lock pushes its older one late", async () => {
    let releaseFirst!: () => void;
    const agent = masterAgent(new Promise<void>((resolve) => (releaseFirst = resolve)));
    const { first, older, newer } = await secondRunShipsWhileFirstPushes(agent);
    releaseFirst();
    const refusal = `agent ${AGENT} refused version ${older}: the load balancer runs ${newer}, a newer version`;
    expect(await expectJson(first, 500)).toEqual(
      errorBody(`${GENSYNC_FAILED}${refusal}. The newer version stays active.`),
    );
    expect(agent.runs).toBe(newer);
    expect(await statesOf(older, newer)).toEqual([
      ["active", undefined],
      ["rejected", refusal],
    ]);
  });

  it("keeps the newer version in force when a run that lost its lock has its own applied first, activated late", async () => {
    let answerFirst!: () => void;
    const agent = masterAgent(new Promise<void>((resolve) => (answerFirst = resolve)), true);
    const { first, older, newer } = await secondRunShipsWhileFirstPushes(agent);
    answerFirst();
    expect(await expectJson(first, 200)).toEqual([
      `WARN: version ${older} was applied, but a newer version is in force: it is kept as history`,
    ]);
    expect(agent.runs).toBe(newer);
    expect(await statesOf(older, newer)).toEqual([
      ["active", undefined],
      ["previous", undefined],
    ]);
  });

  it("pushes nothing when the run lost its lock before the master's push", async () => {
    let releaseCheck!: () => void;
    const checkGate = new Promise<void>((resolve) => (releaseCheck = resolve));
    const { calls, checks } = fakeAgents(applied, async () => {
      await checkGate;
      return valid();
    });
    const run = callWith(agentEnv(), "/admin/gensynchaprx");
    await vi.waitFor(() => expect(checks).toHaveLength(1));
    const held = await locks().inspect(CONFIG_LOCK);
    expect(await locks().release(CONFIG_LOCK, held!.holder)).toBe(true);
    releaseCheck();
    const body = await expectJson(run, 500);
    const version = Number(/version (\d+) was not pushed/.exec(body.payload)?.[1]);
    const lost = `version ${version} was not pushed: this run lost its job lock (a heartbeat came too late)`;
    expect(body).toEqual(errorBody(`${GENSYNC_FAILED}${lost}. Nothing was pushed to the load balancer.`));
    expect(calls).toEqual([]);
    const versions = await expectJson(callWith(withVars(), "/admin/haproxy/versions"), 200);
    expect(versions.find((row: any) => row.version === version)).toMatchObject({ status: "rejected", error: lost });
  });

  it("keeps writesshprx's lock until its queued run ends", async () => {
    const send = vi.spyOn(env.JOBS, "send").mockResolvedValue(undefined as never);
    const [a, b] = await Promise.all([
      callWith(withVars(), "/admin/writesshprx"),
      callWith(withVars(), "/admin/writesshprx"),
    ]);
    expect([a.status, b.status].sort()).toEqual([200, 423]);
    expect((await callWith(withVars(), "/admin/gensynchaprx")).status).toBe(423);
    const message = send.mock.calls[0][0] as { kind: string; runId: number; lockHolder: string };
    expect(message).toEqual({ kind: "writesshprx", runId: expect.any(Number), lockHolder: expect.any(String) });
    expect((await locks().inspect(CONFIG_LOCK))!.holder).toBe(message.lockHolder);

    const { result } = await deliverBatch([{ id: "w1", attempts: 1, body: message }], withVars());
    expect(result.explicitAcks).toEqual(["w1"]);
    expect(await locks().inspect(CONFIG_LOCK)).toBeNull();
    expect((await callWith(withVars(), "/admin/gensynchaprx")).status).toBe(200);
  });

  it("retries a queued gensynchaprx whose lock is held", async () => {
    await locks().acquire(CONFIG_LOCK, { holder: "api-call", kind: "gensynchaprx", ttlMs: 60_000 });
    try {
      const runId = (await db()
        .$client.prepare("insert into job_runs (kind, trigger) values ('gensynchaprx', 'test') returning id")
        .first<{ id: number }>())!.id;
      const { result } = await deliverBatch(
        [{ id: "g1", attempts: 1, body: { kind: "gensynchaprx", runId } }],
        withVars(),
      );
      expect(result.retryMessages).toEqual([{ msgId: "g1" }]);
      expect(await getJobRun(db(), runId)).toMatchObject({
        state: "queued",
        error: expect.stringMatching(/^Job is already running/),
      });
    } finally {
      await locks().release(CONFIG_LOCK, "api-call");
    }
  });
});

describe("on a slave instance", () => {
  for (const path of ["/admin/gensynchaprx", "/admin/writesshprx", "/maintenance/start"]) {
    it(`${path} answers 405 with the original's words`, async () => {
      expect(await expectJson(callWith(withVars({ INSTANCE_ROLE: "slave" }), path), 405)).toEqual(SLAVE_JOB);
    });
  }

  it("still reads the job history and answers ACME challenges", async () => {
    expect((await callWith(withVars({ INSTANCE_ROLE: "slave" }), "/admin/jobs")).status).toBe(200);
    expect(
      (await callWith(withVars({ INSTANCE_ROLE: "slave" }), "/.well-known/acme-challenge/none", null)).status,
    ).toBe(404);
  });
});
