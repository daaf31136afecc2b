// Jobs end to end: cron triggers queue runs, master-only jobs stay off slaves, the queue consumer runs and retries.
import { createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { vi, describe, expect, it } from "vitest";
import worker from "../src/index";
import { createJobRun, finishJobRun, getJobRun } from "../src/jobs/history";
import { MAX_ATTEMPTS, retryDelaySeconds } from "../src/jobs/retries";
import { database } from "../src/shared/db";
import { deliverBatch } from "./support/jobs-queue";

const db = () => database(env.DB);

/** Records a queued run of `body.kind` and delivers its first message (`id`) on `workerEnv`. */
async function deliverNewRun(body: { kind: string }, workerEnv: Env, id = "m1", trigger = "test") {
  const runId = await createJobRun(db(), { kind: body.kind, trigger });
  const { result } = await deliverBatch([{ id, attempts: 1, body: { ...body, runId } }], workerEnv);
  return { runId, result };
}

describe("cron triggers", () => {
  it("the daily schedule queues a housekeeping run", async () => {
    const send = vi.spyOn(env.JOBS, "send");
    const controller = createScheduledController({ scheduledTime: new Date(1_700_000_000_000), cron: "5 0 * * *" });
    const ctx = createExecutionContext();
    await worker.scheduled(controller, env, ctx);
    await waitOnExecutionContext(ctx);
    expect(send).toHaveBeenCalledTimes(1);
    const message = send.mock.calls[0][0] as { kind: string; runId: number };
    expect(message.kind).toBe("housekeeping");
    expect(await getJobRun(db(), message.runId)).toMatchObject({
      kind: "housekeeping",
      state: "queued",
      trigger: "5 0 * * *",
    });
    send.mockRestore();
  });

  it("refuses a cron expression that wrangler.toml does not schedule", async () => {
    const controller = createScheduledController({ scheduledTime: new Date(), cron: "*/7 * * * *" });
    await expect(worker.scheduled(controller, env, createExecutionContext())).rejects.toThrow(
      'no jobs are scheduled for cron "*/7 * * * *"',
    );
  });
});

/** The test Worker's env as another instance (a fresh object, so that settings are parsed again). */
const asInstance = (vars: Record<string, string>) => ({ ...env, ...vars }) as unknown as Env;

/** The runs recorded after `afterId`, as [kind, state] pairs. */
async function runsAfter(afterId: number) {
  const { results } = await env.DB.prepare("select kind, state from job_runs where id > ? order by id")
    .bind(afterId)
    .all();
  return results.map((row) => [row.kind, row.state]);
}
const lastRunId = async () =>
  (await env.DB.prepare("select coalesce(max(id), 0) as id from job_runs").first<{ id: number }>())!.id;

describe("master-only jobs and the instance role", () => {
  async function dailyCron(workerEnv: Env) {
    const send = vi.spyOn(env.JOBS, "send").mockResolvedValue(undefined as never);
    const sendBatch = vi.spyOn(env.JOBS, "sendBatch").mockResolvedValue(undefined as never);
    const before = await lastRunId();
    const ctx = createExecutionContext();
    await worker.scheduled(createScheduledController({ scheduledTime: new Date(), cron: "5 0 * * *" }), workerEnv, ctx);
    await waitOnExecutionContext(ctx);
    const queued = [
      ...send.mock.calls.map(([message]) => (message as { kind: string }).kind),
      ...sendBatch.mock.calls.flatMap(([messages]) =>
        [...messages].map((message) => (message.body as { kind: string }).kind),
      ),
    ];
    send.mockRestore();
    sendBatch.mockRestore();
    return { queued, runs: await runsAfter(before) };
  }

  it("on a slave, the daily cron queues housekeeping and no proxy job, and records no run for them", async () => {
    expect(await dailyCron(asInstance({ INSTANCE_ROLE: "slave" }))).toEqual({
      queued: ["housekeeping"],
      runs: [["housekeeping", "queued"]],
    });
  });

  it("on the master, the daily cron queues housekeeping, the certificate job and the audit log's pruning", async () => {
    expect(await dailyCron(asInstance({ INSTANCE_ROLE: "master" }))).toEqual({
      queued: ["housekeeping", "certificates", "audit-prune"],
      runs: [
        ["housekeeping", "queued"],
        ["certificates", "queued"],
        ["audit-prune", "queued"],
      ],
    });
  });

  it("with an INSTANCE_ROLE that cannot be read, the daily cron leaves the certificate job out", async () => {
    expect(await dailyCron(asInstance({ INSTANCE_ROLE: "primary" }))).toEqual({
      queued: ["housekeeping"],
      runs: [["housekeeping", "queued"]],
    });
  });

  for (const body of [
    { kind: "certificates" },
    { kind: "audit-prune" },
    { kind: "gensynchaprx" },
    { kind: "writesshprx" },
    { kind: "haproxy-slave-sync", parentRunId: 1, version: 1, agentUrl: "http://slave.test:9400" },
  ]) {
    it(`a slave refuses a ${body.kind} message: acked, its run failed and never started, nothing fetched or stored`, async () => {
      const fetchSpy = vi.spyOn(globalThis, "fetch");
      const versions = await env.DB.prepare("select count(*) as n from haproxy_versions").first();
      const sshVersions = await env.DB.prepare("select count(*) as n from ssh_proxy_versions").first();
      const { runId, result } = await deliverNewRun(body, asInstance({ INSTANCE_ROLE: "slave" }));
      fetchSpy.mockRestore();
      expect(result.explicitAcks).toEqual(["m1"]);
      expect(result.retryMessages).toEqual([]);
      expect(await getJobRun(db(), runId)).toMatchObject({
        kind: body.kind,
        state: "failed",
        attempts: 0,
        startedAt: null,
        warnings: [],
        error: `This is a slave instance: the ${body.kind} job runs only on the master instance`,
      });
      expect(fetchSpy).not.toHaveBeenCalled();
      expect(await env.DB.prepare("select count(*) as n from haproxy_versions").first()).toEqual(versions);
      expect(await env.DB.prepare("select count(*) as n from ssh_proxy_versions").first()).toEqual(sshVersions);
      expect(await env.DB.prepare("select count(*) as n from certificate_attempts").first()).toEqual({ n: 0 });
    });
  }

  it("with an INSTANCE_ROLE that cannot be read, a certificate message is refused and says why", async () => {
    const { runId, result } = await deliverNewRun({ kind: "certificates" }, asInstance({ INSTANCE_ROLE: "primary" }));
    expect(result.explicitAcks).toEqual(["m1"]);
    const run = await getJobRun(db(), runId);
    expect(run).toMatchObject({ state: "failed", attempts: 0 });
    expect(run!.error).toMatch(
      /^The certificates job runs only on the master instance, and this instance's role cannot be read: proxy settings are invalid: INSTANCE_ROLE: /,
    );
  });

  it("a slave still runs housekeeping from the queue", async () => {
    const { runId, result } = await deliverNewRun(
      { kind: "housekeeping" },
      asInstance({ INSTANCE_ROLE: "slave" }),
      "h1",
    );
    expect(result.explicitAcks).toEqual(["h1"]);
    expect(await getJobRun(db(), runId)).toMatchObject({ state: "succeeded", attempts: 1, error: null });
  });
});

describe("queue consumer", () => {
  it("runs housekeeping, prunes old finished runs and records the outcome", async () => {
    const old = await createJobRun(db(), { kind: "housekeeping", trigger: "api" });
    await finishJobRun(db(), { id: old, now: new Date("2020-01-01T00:00:00Z"), state: "succeeded" });
    const recent = await createJobRun(db(), { kind: "housekeeping", trigger: "api" });
    await finishJobRun(db(), { id: recent, now: new Date(), state: "succeeded" });

    const { runId, result } = await deliverNewRun({ kind: "housekeeping" }, env, "m1", "api");
    expect(result.explicitAcks).toEqual(["m1"]);
    expect(result.retryMessages).toEqual([]);
    expect(await getJobRun(db(), old)).toBeUndefined();
    expect(await getJobRun(db(), recent)).toBeDefined();
    expect(await getJobRun(db(), runId)).toMatchObject({
      state: "succeeded",
      attempts: 1,
      warnings: ["INFO: removed 1 job runs older than 30 days"],
      error: null,
    });
  });

  it("acks a malformed message instead of retrying it forever", async () => {
    const { result } = await deliverBatch([{ id: "bad", attempts: 1, body: { kind: "unknown-job" } }], env);
    expect(result.explicitAcks).toEqual(["bad"]);
    expect(result.retryMessages).toEqual([]);
  });

  it("retries a failing run with backoff and records the failure on the last attempt", async () => {
    const runId = await createJobRun(db(), { kind: "housekeeping", trigger: "api" });
    const failing = { ...env, DB: env.DB, JOB_HISTORY_DAYS: "not-a-number" } as unknown as Env;
    const {
      result,
      retries: [retry],
    } = await deliverBatch([{ id: "r1", attempts: 2, body: { kind: "housekeeping", runId } }], failing);
    expect(result.retryMessages).toEqual([{ msgId: "r1" }]);
    expect(retry).toHaveBeenCalledWith({ delaySeconds: 60 });
    expect(await getJobRun(db(), runId)).toMatchObject({ state: "queued", attempts: 1 });

    const { result: lastResult } = await deliverBatch(
      [{ id: "r2", attempts: MAX_ATTEMPTS, body: { kind: "housekeeping", runId } }],
      failing,
    );
    expect(lastResult.explicitAcks).toEqual(["r2"]);
    expect(lastResult.retryMessages).toEqual([]);
    const run = await getJobRun(db(), runId);
    expect(run).toMatchObject({ state: "failed", attempts: 2 });
    expect(run!.error).toMatch(/^jobs settings are invalid: JOB_HISTORY_DAYS/);
  });

  it("backs off exponentially up to an hour", () => {
    expect([1, 2, 3, 4, 10].map(retryDelaySeconds)).toEqual([30, 60, 120, 240, 3600]);
  });

  it("delivers a message from the real producer to the real consumer", async () => {
    const runId = await createJobRun(db(), { kind: "housekeeping", trigger: "api" });
    await env.JOBS.send({ kind: "housekeeping", runId });
    await vi.waitUntil(async () => (await getJobRun(db(), runId))?.state === "succeeded", {
      timeout: 10_000,
      interval: 100,
    });
    expect(await getJobRun(db(), runId)).toMatchObject({ state: "succeeded", attempts: 1 });
  });
});
