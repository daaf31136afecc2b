// Slave syncs the queue refused to take after their version became the one in force: the call answers a warning, the
// parent run and the slaves' sync rows say so, and the minute sweep queues them again after the queue's retry delays,
// once, MAX_ATTEMPTS sends in all.
import { createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it, vi } from "vitest";
import worker from "../../src/index";
import { getJobRun } from "../../src/jobs/history";
import { recordAgentSync } from "../../src/proxy/haproxy/agent-syncs";
import { MAX_ATTEMPTS } from "../../src/jobs/retries";
import { SWEEP_CRON } from "../../src/jobs/sweep";
import { expectJson } from "../support/proxy-api";
import { agentEnv, agents, callWith, db, withVars } from "../support/proxy-job-env";
import { silenceConsoleAndRestoreMocks } from "../support/silent-console";
import { createJobsProject } from "./jobs-fixtures";

const SLAVE = "http://slave-unsent.test:9400";
const OTHER_SLAVE = "http://slave-unsent-2.test:9400";
const CAUSE = "queue unavailable";

beforeAll(async () => {
  await createJobsProject();
});

silenceConsoleAndRestoreMocks();

/** An env with these slave agents (SLAVE alone by default), whose queue refuses every message or takes it into `sent`. */
function queueEnv(sent: unknown[] | "refusing", slaves = SLAVE) {
  const sendBatch = async (messages: unknown[]) => {
    if (sent === "refusing") throw new Error(CAUSE);
    sent.push(...messages);
  };
  const send = (message: unknown) => sendBatch([{ body: message }]);
  return { ...agentEnv({ SLAVE_AGENT_URLS: slaves }), JOBS: { send, sendBatch } } as unknown as Env;
}

/** Runs the minute's sweep as its Cron Trigger does. */
async function sweep(workerEnv: Env) {
  const ctx = createExecutionContext();
  await worker.scheduled(createScheduledController({ scheduledTime: new Date(), cron: SWEEP_CRON }), workerEnv, ctx);
  await waitOnExecutionContext(ctx);
}

const syncRuns = async (parentRunId: number) =>
  (
    await env.DB.prepare(
      "select id, state, error, ended_at from job_runs where kind = 'haproxy-slave-sync' and \"trigger\" = ? order by id",
    )
      .bind(`gensynchaprx run ${parentRunId}`)
      .all<{ id: number; state: string; error: string | null; ended_at: number | null }>()
  ).results;

const syncRowOf = (agentUrl: string) =>
  env.DB.prepare(
    "select version, state, attempts, error, next_retry_at, parent_run_id from haproxy_agent_syncs where agent_url = ?",
  )
    .bind(agentUrl)
    .first();

/** A slave's sync row after the queue refused its sync: no attempt made, the queue's cause, and the sweep's next try. */
const owedRow = (row: {
  version: number;
  runId: number;
  state: "retrying" | "failed";
  nextRetryAt: number | null;
}) => ({
  version: row.version,
  state: row.state,
  attempts: 0,
  error: `its queue message could not be sent: ${CAUSE}`,
  next_retry_at: row.nextRetryAt,
  parent_run_id: row.runId,
});

/** Moves the ends of a run's refused sync runs back by `ms`, as if the sweep came that much later. */
const backdateSends = (parentRunId: number, ms: number) =>
  env.DB.prepare(
    "update job_runs set ended_at = ended_at - ? where kind = 'haproxy-slave-sync' and \"trigger\" = ? and started_at is null",
  )
    .bind(ms, `gensynchaprx run ${parentRunId}`)
    .run();

/** GET /admin/gensynchaprx whose master agent applies the version and whose queue refuses or takes the slave syncs. */
async function genSync(workerEnv = queueEnv("refusing")) {
  agents({ push: (call) => Response.json({ outcome: "applied", version: call.body.version }) });
  const response = await callWith(workerEnv, "/admin/gensynchaprx");
  vi.mocked(globalThis.fetch).mockRestore();
  const runId = Number(response.headers.get("X-Job-Id"));
  const version = (await expectJson(callWith(withVars(), "/admin/haproxy"), 200)).version as number;
  return { response, runId, version };
}

/** genSync, whose queue refused the slave sync: the version is in force all the same, and the call says so. */
async function genSyncWithQueueRefused() {
  const { response, runId, version } = await genSync();
  const warnings = (await expectJson(response, 200)) as string[];
  return { runId, version, warnings };
}

describe("slave syncs the queue refused", () => {
  it("are owed on the run and the sync row, and the sweep queues them once after the retry delay", async () => {
    const { runId, version, warnings } = await genSyncWithQueueRefused();
    const [unsent] = await syncRuns(runId);
    expect(unsent).toMatchObject({ state: "failed", error: `its queue message could not be sent: ${CAUSE}` });
    const nextAt = unsent.ended_at! + 30_000;
    const owed =
      `WARN: the syncs of version ${version} to the slaves could not be queued (send 1 of ${MAX_ATTEMPTS}): ${CAUSE}; ` +
      `the first sweep from ${new Date(nextAt).toISOString()} queues them again`;
    expect(warnings.filter((warning) => warning.includes("slave"))).toEqual([owed]);
    expect(await getJobRun(db(), runId)).toMatchObject({ state: "succeeded", error: null });
    expect((await getJobRun(db(), runId))!.warnings.filter((warning) => warning.includes("slave"))).toEqual([owed]);
    expect(await syncRowOf(SLAVE)).toEqual(owedRow({ version, runId, state: "retrying", nextRetryAt: nextAt }));

    const sent: unknown[] = [];
    await sweep(queueEnv(sent));
    expect(sent).toEqual([]);

    await backdateSends(runId, 30_000);
    await sweep(queueEnv(sent));
    const runs = await syncRuns(runId);
    expect(runs.map((run) => run.state)).toEqual(["failed", "queued"]);
    const queued = runs[1].id;
    expect(sent).toEqual([
      { body: { kind: "haproxy-slave-sync", parentRunId: runId, version, agentUrl: SLAVE, runId: queued } },
    ]);
    expect((await getJobRun(db(), runId))!.warnings).toContain(
      `INFO: sync of version ${version} to slave ${SLAVE} queued as job ${queued}`,
    );

    await sweep(queueEnv(sent));
    expect(sent).toHaveLength(1);
    expect(await syncRuns(runId)).toEqual(runs);
  });
});

describe("slave syncs the queue keeps refusing", () => {
  it("are sent MAX_ATTEMPTS times in all, then left failed for the next gensynchaprx", async () => {
    const { runId, version } = await genSyncWithQueueRefused();
    const refusing = vi.fn(async () => {
      throw new Error(CAUSE);
    });
    const refusingEnv = { ...queueEnv("refusing"), JOBS: { send: refusing, sendBatch: refusing } } as unknown as Env;
    // One sweep past each retry delay: the first MAX_ATTEMPTS - 1 send again, the last sends nothing.
    for (let sweeps = 0; sweeps < MAX_ATTEMPTS; sweeps++) {
      await backdateSends(runId, 3_600_000);
      await sweep(refusingEnv);
    }
    expect(refusing).toHaveBeenCalledTimes(MAX_ATTEMPTS - 1);
    expect((await syncRuns(runId)).map((run) => run.state)).toEqual(Array(MAX_ATTEMPTS).fill("failed"));
    expect((await getJobRun(db(), runId))!.warnings).toContain(
      `WARN: the syncs of version ${version} to the slaves could not be queued after ${MAX_ATTEMPTS} sends: ` +
        `${CAUSE}; they wait for the next gensynchaprx`,
    );
    expect(await syncRowOf(SLAVE)).toEqual(owedRow({ version, runId, state: "failed", nextRetryAt: null }));
  });
});

describe("a failure other than the queue's", () => {
  it("is not reported as a refused send: D1 failing to record the syncs answers 500 as before", async () => {
    // The first insert of the sync runs (one statement for all, over json_each) fails; every other query passes.
    let failures = 1;
    const failingDb = new Proxy(env.DB, {
      get(target, property) {
        if (property !== "prepare") return Reflect.get(target, property, target).bind(target);
        return (query: string) => {
          if (failures > 0 && /insert into "job_runs"/i.test(query) && query.includes("json_each")) {
            failures--;
            throw new Error("D1_ERROR: Network connection lost.");
          }
          return target.prepare(query);
        };
      },
    });
    const { response, runId } = await genSync({ ...queueEnv([]), DB: failingDb } as Env);
    expect(response.status).toBe(500);
    expect(failures).toBe(0);
    expect(
      (await getJobRun(db(), runId))!.warnings.filter((warning) => warning.includes("could not be queued")),
    ).toEqual([]);
    expect(await syncRuns(runId)).toEqual([]);
  });
});

describe("a slave already synced", () => {
  it("keeps its synced row when the sweep re-sends every slave's sync and the queue refuses", async () => {
    const sent: unknown[] = [];
    const { runId, version } = await genSync(queueEnv(sent, `${SLAVE},${OTHER_SLAVE}`));
    const [first, second] = await syncRuns(runId);
    expect(sent).toHaveLength(2);
    // OTHER_SLAVE's sync ran; SLAVE's message was lost, and the platform's sweep failed its run unstarted.
    await recordAgentSync(db(), {
      agentUrl: OTHER_SLAVE,
      version,
      state: "synced",
      attempts: 1,
      error: null,
      nextRetryAt: null,
      parentRunId: runId,
      agentVersion: version,
      now: new Date(),
    });
    await env.DB.batch([
      env.DB.prepare("update job_runs set state = 'succeeded', started_at = ?, ended_at = ? where id = ?").bind(
        Date.now(),
        Date.now(),
        second.id,
      ),
      env.DB.prepare(
        "update job_runs set state = 'failed', error = 'its message was lost', ended_at = ? where id = ?",
      ).bind(Date.now() - 60_000, first.id),
    ]);

    await sweep(queueEnv("refusing", `${SLAVE},${OTHER_SLAVE}`));
    expect(await syncRowOf(OTHER_SLAVE)).toMatchObject({ version, state: "synced", attempts: 1, error: null });
    expect(await syncRowOf(SLAVE)).toMatchObject({
      version,
      state: "retrying",
      attempts: 0,
      error: `its queue message could not be sent: ${CAUSE}`,
    });
  });
});
