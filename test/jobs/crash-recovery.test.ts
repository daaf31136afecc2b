// The jobs platform across crashes and the queue's at-least-once delivery: a delivery claims its run (a second one, or
// one whose run finished, does nothing), the minute sweep fails runs whose worker died or whose message was lost, and
// a send that fails leaves no queued run behind. Heartbeats of running jobs: test/proxy/jobs.crash-recovery.test.ts.
import { createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import worker from "../../src/index";
import { appendJobWarnings, createJobRun, finishJobRun, getJobRun } from "../../src/jobs/history";
import { claimJobRun, deadRunError, lostMessageError } from "../../src/jobs/run-claims";
import { SWEEP_CRON } from "../../src/jobs/sweep";
import { database } from "../../src/shared/db";
import { deliverBatch } from "../support/jobs-queue";

const db = () => database(env.DB);
const MINUTE = 60_000;

/** The test Worker's env with settings overridden (a fresh object, so that settings are parsed again). */
const withVars = (vars: Record<string, string> = {}) => ({ ...env, ...vars }) as unknown as Env;

/** Runs the minute's sweep as its Cron Trigger does. */
async function sweep(workerEnv: Env = env) {
  const ctx = createExecutionContext();
  await worker.scheduled(createScheduledController({ scheduledTime: new Date(), cron: SWEEP_CRON }), workerEnv, ctx);
  await waitOnExecutionContext(ctx);
}

/** Sets a run's clock columns as a run of that age would have them (milliseconds since the epoch). */
async function age(runId: number, columns: { created_at?: number; heartbeat_at?: number | null; started_at?: number }) {
  for (const [column, value] of Object.entries(columns)) {
    await env.DB.prepare(`update job_runs set ${column} = ? where id = ?`).bind(value, runId).run();
  }
}

/** A housekeeping run left `running` by a worker whose last heartbeat was `silentMs` ago. */
async function runningRun(silentMs: number) {
  const runId = await createJobRun(db(), { kind: "housekeeping", trigger: "test" });
  const then = new Date(Date.now() - silentMs);
  expect(await claimJobRun(db(), { id: runId, now: then, heartbeatTimeoutMs: MINUTE })).toBeNull();
  return runId;
}

beforeEach(() => {
  vi.spyOn(console, "log").mockImplementation(() => {});
  vi.spyOn(console, "error").mockImplementation(() => {});
});

afterEach(() => {
  vi.restoreAllMocks();
});

/** env.DB whose first statement recording a run's end fails, as a passing D1 error would; the rest go through. */
function dbLosingFirstRunEnd(): { db: D1Database; failures: () => number } {
  let failures = 0;
  const failing = () => Promise.reject(new Error("D1_ERROR: Network connection lost."));
  const db = new Proxy(env.DB, {
    get(target, key) {
      if (key !== "prepare") return Reflect.get(target, key).bind(target);
      return (query: string) => {
        if (failures > 0 || !/^update "job_runs" set "state" = \?, "warnings" = \(select json_group_array/.test(query))
          return target.prepare(query);
        failures += 1;
        const statement = { run: failing, all: failing, raw: failing, first: failing };
        return { ...statement, bind: () => statement };
      };
    },
  });
  return { db, failures: () => failures };
}

describe("recording a run's end", () => {
  it("tries again when D1 fails to record it, and the run succeeds as it did", async () => {
    const runId = await createJobRun(db(), { kind: "housekeeping", trigger: "test" });
    const flaky = dbLosingFirstRunEnd();
    const { result } = await deliverBatch([{ id: "end", attempts: 1, body: { kind: "housekeeping", runId } }], {
      ...env,
      DB: flaky.db,
    } as Env);
    expect(flaky.failures()).toBe(1);
    expect(result.explicitAcks).toEqual(["end"]);
    expect(result.retryMessages).toEqual([]);
    expect(await getJobRun(db(), runId)).toMatchObject({ state: "succeeded", attempts: 1, error: null });
  });
});

/** env.DB on which every write of a run's end fails, as an outage of D1 longer than its three tries would. */
function dbLosingRunEnds(): D1Database {
  const failing = () => Promise.reject(new Error("D1_ERROR: Network connection lost."));
  return new Proxy(env.DB, {
    get(target, key) {
      if (key !== "prepare") return Reflect.get(target, key).bind(target);
      return (query: string) => {
        if (!/^update "job_runs" set "state" = \?, "warnings" = /.test(query)) return target.prepare(query);
        const statement = { run: failing, all: failing, raw: failing, first: failing };
        return { ...statement, bind: () => statement };
      };
    },
  });
}

describe("an end D1 cannot record", () => {
  it("sends the run again, naming the attempt: its delivery claims the run still shown running, and retries it", async () => {
    const runId = await createJobRun(db(), { kind: "housekeeping", trigger: "test" });
    const sent: { body: unknown; options: unknown }[] = [];
    const jobs = { send: async (body: unknown, options: unknown) => void sent.push({ body, options }) };
    // The attempt fails (invalid settings, say, or the same outage), and its end cannot be recorded.
    const broken = { ...env, JOB_HISTORY_DAYS: "zero", DB: dbLosingRunEnds(), JOBS: jobs } as unknown as Env;
    const first = await deliverBatch([{ id: "m", attempts: 1, body: { kind: "housekeeping", runId } }], broken);
    expect(first.result.explicitAcks).toEqual(["m"]);
    expect(first.result.retryMessages).toEqual([]);
    const lost = (await getJobRun(db(), runId))!;
    expect(lost).toMatchObject({ state: "running", attempts: 1 });
    // Sent within half of JOB_HEARTBEAT_TIMEOUT (60 s): the sweep does not fail the silent run before it comes.
    expect(sent).toEqual([
      {
        body: { kind: "housekeeping", runId, lostEnd: { startedAt: lost.startedAt!.getTime(), attempt: 1 } },
        options: { delaySeconds: 30 },
      },
    ]);

    // Delivered twice, once D1 is back: one delivery retries the run, the other finds it running and does nothing.
    const message = { id: "again", attempts: 1, body: sent[0].body };
    const again = await deliverBatch([message, message], env);
    expect(again.result.explicitAcks).toEqual(["again", "again"]);
    expect(again.result.retryMessages).toEqual([]);
    expect(await getJobRun(db(), runId)).toMatchObject({ state: "succeeded", attempts: 2, error: null });
  });

  it("leaves a run running elsewhere alone, though a message names its attempt's start", async () => {
    const runId = await runningRun(5_000);
    const before = (await getJobRun(db(), runId))!;
    const lostEnd = { startedAt: before.startedAt!.getTime() - 1, attempt: 1 };
    const { result } = await deliverBatch(
      [{ id: "other", attempts: 1, body: { kind: "housekeeping", runId, lostEnd } }],
      env,
    );
    expect(result.explicitAcks).toEqual(["other"]);
    expect(await getJobRun(db(), runId)).toEqual(before);
  });
});

describe("idempotent deliveries", () => {
  it("runs a message delivered twice in one batch once: both acked, one attempt, one outcome", async () => {
    const runId = await createJobRun(db(), { kind: "housekeeping", trigger: "test" });
    const message = { kind: "housekeeping", runId };
    const { result } = await deliverBatch(
      [
        { id: "twice", attempts: 1, body: message },
        { id: "twice", attempts: 1, body: message },
      ],
      env,
    );
    expect(result.explicitAcks).toEqual(["twice", "twice"]);
    expect(result.retryMessages).toEqual([]);
    const run = await getJobRun(db(), runId);
    expect(run).toMatchObject({ state: "succeeded", attempts: 1, error: null });
    expect(run!.warnings).toHaveLength(1);
    expect(run!.warnings[0]).toMatch(/^INFO: removed \d+ job runs older than 30 days$/);
  });

  it("acks a message whose run already finished and changes nothing", async () => {
    const runId = await createJobRun(db(), { kind: "housekeeping", trigger: "test" });
    await claimJobRun(db(), { id: runId, now: new Date(), heartbeatTimeoutMs: MINUTE });
    await finishJobRun(db(), { id: runId, now: new Date("2026-01-02T00:00:00Z"), state: "failed", error: "given up" });
    const before = await getJobRun(db(), runId);
    const { result } = await deliverBatch([{ id: "late", attempts: 3, body: { kind: "housekeeping", runId } }], env);
    expect(result.explicitAcks).toEqual(["late"]);
    expect(result.retryMessages).toEqual([]);
    expect(await getJobRun(db(), runId)).toEqual(before);
  });

  it("acks a message whose run is running elsewhere (a recent heartbeat) and leaves that run alone", async () => {
    const runId = await runningRun(5_000);
    const before = await getJobRun(db(), runId);
    const { result } = await deliverBatch([{ id: "dup", attempts: 1, body: { kind: "housekeeping", runId } }], env);
    expect(result.explicitAcks).toEqual(["dup"]);
    expect(await getJobRun(db(), runId)).toEqual(before);
    expect(before).toMatchObject({ state: "running", attempts: 1 });
  });

  it("a redelivery after a crash (its run silent past JOB_HEARTBEAT_TIMEOUT) fails the run with the cause, runs nothing", async () => {
    const runId = await runningRun(MINUTE + 1_000);
    const { result } = await deliverBatch([{ id: "again", attempts: 2, body: { kind: "housekeeping", runId } }], env);
    expect(result.explicitAcks).toEqual(["again"]);
    expect(result.retryMessages).toEqual([]);
    expect(await getJobRun(db(), runId)).toMatchObject({
      state: "failed",
      attempts: 1,
      warnings: [],
      error: "its worker stopped: no heartbeat for 60 s (a crash or a deploy); the run was not retried",
      endedAt: expect.any(Date),
    });
  });

  it("a run whose failed attempt waits for its retry is claimed again by the retry", async () => {
    const runId = await createJobRun(db(), { kind: "housekeeping", trigger: "test" });
    await claimJobRun(db(), { id: runId, now: new Date(), heartbeatTimeoutMs: MINUTE });
    await finishJobRun(db(), { id: runId, now: new Date(), state: "queued", error: "first attempt failed" });
    const { result } = await deliverBatch([{ id: "retry", attempts: 2, body: { kind: "housekeeping", runId } }], env);
    expect(result.explicitAcks).toEqual(["retry"]);
    expect(await getJobRun(db(), runId)).toMatchObject({ state: "succeeded", attempts: 2, error: null });
  });

  it("a retry keeps the warnings added while it waited (a child's, a sweep's), once each", async () => {
    const runId = await createJobRun(db(), { kind: "housekeeping", trigger: "test" });
    await claimJobRun(db(), { id: runId, now: new Date(), heartbeatTimeoutMs: MINUTE });
    await finishJobRun(db(), { id: runId, now: new Date(), state: "queued", error: "first attempt failed" });
    const added = ["WARN: a child's outcome", "INFO: a sweep settled something"];
    await appendJobWarnings(db(), { id: runId, warnings: added });
    await deliverBatch([{ id: "retry", attempts: 2, body: { kind: "housekeeping", runId } }], env);
    const run = (await getJobRun(db(), runId))!;
    expect(run.state).toBe("succeeded");
    expect(run.warnings.slice(-2)).toEqual(added);
    expect(run.warnings.filter((warning) => added.includes(warning))).toEqual(added);

    await finishJobRun(db(), { id: runId, now: new Date(), state: "succeeded", warnings: [added[1]] });
    expect((await getJobRun(db(), runId))!.warnings).toEqual([added[1], ...run.warnings.filter((w) => w !== added[1])]);
  });
});

describe("the minute sweep", () => {
  it("fails a running run silent for JOB_HEARTBEAT_TIMEOUT with the cause, and not one that beat within it", async () => {
    const dead = await runningRun(MINUTE + 1_000);
    const alive = await runningRun(MINUTE - 10_000);
    await sweep();
    expect(await getJobRun(db(), dead)).toMatchObject({
      state: "failed",
      error: deadRunError(MINUTE),
      endedAt: expect.any(Date),
    });
    expect(await getJobRun(db(), alive)).toMatchObject({ state: "running", error: null, endedAt: null });
  });

  it("honours a shorter JOB_HEARTBEAT_TIMEOUT", async () => {
    const runId = await runningRun(11_000);
    await sweep(withVars({ JOB_HEARTBEAT_TIMEOUT: "10s" }));
    expect(await getJobRun(db(), runId)).toMatchObject({
      state: "failed",
      error: "its worker stopped: no heartbeat for 10 s (a crash or a deploy); the run was not retried",
    });
  });

  it("fails a queued run no delivery touched for JOB_QUEUED_TIMEOUT (its message was lost), not a younger one nor a waiting retry", async () => {
    const lost = await createJobRun(db(), { kind: "housekeeping", trigger: "test" });
    await age(lost, { created_at: Date.now() - 2 * 60 * MINUTE - 1_000 });
    const young = await createJobRun(db(), { kind: "housekeeping", trigger: "test" });
    await age(young, { created_at: Date.now() - 60 * MINUTE });
    const retrying = await createJobRun(db(), { kind: "housekeeping", trigger: "test" });
    await age(retrying, { created_at: Date.now() - 3 * 60 * MINUTE });
    await finishJobRun(db(), { id: retrying, now: new Date(Date.now() - 30 * MINUTE), state: "queued", error: "x" });
    await sweep();
    expect(await getJobRun(db(), lost)).toMatchObject({
      state: "failed",
      attempts: 0,
      startedAt: null,
      error: "its queue message was lost: no delivery for 120 min; the run was never started",
    });
    expect(lostMessageError(2 * 60 * MINUTE)).toBe((await getJobRun(db(), lost))!.error);
    expect(await getJobRun(db(), young)).toMatchObject({ state: "queued", error: null });
    expect(await getJobRun(db(), retrying)).toMatchObject({ state: "queued", error: "x" });
  });

  it("leaves finished runs alone, however old", async () => {
    const runId = await createJobRun(db(), { kind: "housekeeping", trigger: "test" });
    await claimJobRun(db(), { id: runId, now: new Date(Date.now() - 10 * MINUTE), heartbeatTimeoutMs: MINUTE });
    await finishJobRun(db(), { id: runId, now: new Date(Date.now() - 9 * MINUTE), state: "succeeded" });
    const before = await getJobRun(db(), runId);
    await sweep();
    expect(await getJobRun(db(), runId)).toEqual(before);
  });
});

describe("queuing", () => {
  it("a send that fails fails its run with the cause: no run stays queued without a message", async () => {
    const send = vi.spyOn(env.JOBS, "send").mockRejectedValue(new Error("Queue send failed: overloaded"));
    const sendBatch = vi.spyOn(env.JOBS, "sendBatch").mockRejectedValue(new Error("Queue sendBatch failed: gone"));
    const before = (await env.DB.prepare("select coalesce(max(id), 0) as id from job_runs").first<{ id: number }>())!;
    const ctx = createExecutionContext();
    const daily = createScheduledController({ scheduledTime: new Date(), cron: "5 0 * * *" });
    await expect(worker.scheduled(daily, env, ctx)).rejects.toThrow(/^Queue send(Batch)? failed/);
    await waitOnExecutionContext(ctx);
    expect(send).toHaveBeenCalledTimes(1);
    expect(sendBatch).toHaveBeenCalledTimes(1);
    const { results } = await env.DB.prepare("select kind, state, error from job_runs where id > ? order by id")
      .bind(before.id)
      .all();
    expect(results).toEqual([
      {
        kind: "housekeeping",
        state: "failed",
        error: "its queue message could not be sent: Queue send failed: overloaded",
      },
      {
        kind: "certificates",
        state: "failed",
        error: "its queue message could not be sent: Queue sendBatch failed: gone",
      },
      {
        kind: "audit-prune",
        state: "failed",
        error: "its queue message could not be sent: Queue sendBatch failed: gone",
      },
    ]);
  });
});
