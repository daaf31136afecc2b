// The slaves' syncs of a gensynchaprx, run from the queue: one per slave agent, retried with backoff, each outcome
// recorded on the parent run; a version no longer active is not pushed, and a slave already ahead is accepted.
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { getJobRun } from "../../src/jobs/history";
import { MAX_ATTEMPTS } from "../../src/jobs/retries";
import { expectJson } from "../support/proxy-api";
import { deliverBatch, type QueuedMessage } from "../support/jobs-queue";
import { agentEnv, applied, callWith, db, fakeAgents, withVars } from "../support/proxy-job-env";
import { silenceConsoleAndRestoreMocks } from "../support/silent-console";
import { createJobsProject } from "./jobs-fixtures";

const SLAVE_1 = "http://slave-1.test:9400";
const SLAVE_2 = "http://slave-2.test:9400";

beforeAll(async () => {
  await createJobsProject();
});

silenceConsoleAndRestoreMocks();

describe("slave sync on the queue", () => {
  async function generateWithSlaves() {
    const sendBatch = vi.spyOn(env.JOBS, "sendBatch").mockResolvedValue(undefined as never);
    fakeAgents(applied);
    const response = await callWith(agentEnv({ SLAVE_AGENT_URLS: `${SLAVE_1}, ${SLAVE_2}` }), "/admin/gensynchaprx");
    const warnings = await expectJson(response, 200);
    const bodies = [...sendBatch.mock.calls[0][0]].map((message) => message.body as { runId: number; version: number });
    sendBatch.mockRestore();
    vi.mocked(globalThis.fetch).mockRestore();
    return { parentRunId: Number(response.headers.get("X-Job-Id")), warnings, bodies };
  }

  const runSync = (messages: QueuedMessage[], workerEnv = agentEnv()) => deliverBatch(messages, workerEnv);

  it("queues one sync per slave agent and records each outcome on the gensynchaprx run", async () => {
    const { parentRunId, warnings, bodies } = await generateWithSlaves();
    const version = bodies[0].version;
    expect(bodies).toEqual([
      { kind: "haproxy-slave-sync", parentRunId, version, agentUrl: SLAVE_1, runId: expect.any(Number) },
      { kind: "haproxy-slave-sync", parentRunId, version, agentUrl: SLAVE_2, runId: expect.any(Number) },
    ]);
    expect(warnings).toEqual([
      `INFO: sync of version ${version} to slave ${SLAVE_1} queued as job ${bodies[0].runId}`,
      `INFO: sync of version ${version} to slave ${SLAVE_2} queued as job ${bodies[1].runId}`,
    ]);
    expect(await getJobRun(db(), bodies[0].runId)).toMatchObject({
      kind: "haproxy-slave-sync",
      state: "queued",
      trigger: `gensynchaprx run ${parentRunId}`,
    });

    const { calls } = fakeAgents((call) =>
      call.url.startsWith(SLAVE_1) ? applied() : new Response("busy", { status: 500 }),
    );
    const { result, retries } = await runSync([
      { id: "s1", attempts: 1, body: bodies[0] },
      { id: "s2", attempts: 1, body: bodies[1] },
    ]);
    expect(result.explicitAcks).toEqual(["s1"]);
    expect(result.retryMessages).toEqual([{ msgId: "s2" }]);
    expect(retries[1]).toHaveBeenCalledWith({ delaySeconds: 30 });
    expect(calls.map((call) => [call.url, call.body.version, call.body.onlyIfNewer, call.authorization])).toEqual([
      [`${SLAVE_1}/v1/config`, version, true, "Bearer agent-token"],
      [`${SLAVE_2}/v1/config`, version, true, "Bearer agent-token"],
    ]);
    const active = await expectJson(callWith(withVars(), "/admin/haproxy"), 200);
    expect(calls[0].body.digest).toBe(active.digest);
    expect(calls[0].body.files["haproxy.cfg"]).toBe(active.files["haproxy.cfg"]);
    // The failed attempt shows on the parent at once, with the time of the next one (30 s later).
    const firstFailure = (await getJobRun(db(), parentRunId))!.warnings;
    expect(firstFailure).toEqual([
      ...warnings,
      `INFO: slave ${SLAVE_1} synced to version ${version}`,
      expect.stringMatching(
        new RegExp(
          `^WARN: slave ${SLAVE_2} could not be synced to version ${version} \\(attempt 1 of ${MAX_ATTEMPTS}\\): ` +
            `agent ${SLAVE_2} refused version ${version} \\(HTTP 500\\): busy; next attempt at \\d{4}-\\d\\d-\\d\\dT`,
        ),
      ),
    ]);
    expect(await getJobRun(db(), bodies[1].runId)).toMatchObject({
      state: "queued",
      attempts: 1,
      error: `agent ${SLAVE_2} refused version ${version} (HTTP 500): busy`,
    });

    // The last attempt still fails: acked, and the parent says so.
    const last = await runSync([{ id: "s2-last", attempts: MAX_ATTEMPTS, body: bodies[1] }]);
    expect(last.result.explicitAcks).toEqual(["s2-last"]);
    expect(last.result.retryMessages).toEqual([]);
    expect(await getJobRun(db(), bodies[1].runId)).toMatchObject({ state: "failed", attempts: 2 });
    expect((await getJobRun(db(), parentRunId))!.warnings).toEqual([
      ...firstFailure,
      `WARN: slave ${SLAVE_2} could not be synced to version ${version} after ${MAX_ATTEMPTS} attempts: agent ${SLAVE_2} refused version ${version} (HTTP 500): busy`,
    ]);
  });

  it("does not push a version that is no longer active, and accepts a slave that already runs a newer one", async () => {
    const old = await generateWithSlaves();
    const newer = await generateWithSlaves();
    const { calls } = fakeAgents(() => Response.json({ error: "newer", version: 99 }, { status: 409 }));
    const { result } = await runSync([
      { id: "old", attempts: 1, body: old.bodies[0] },
      { id: "new", attempts: 1, body: newer.bodies[0] },
    ]);
    expect(result.explicitAcks).toEqual(["old", "new"]);
    expect(calls.map((call) => call.body.version)).toEqual([newer.bodies[0].version]);
    expect((await getJobRun(db(), old.parentRunId))!.warnings.at(-1)).toBe(
      `INFO: slave ${SLAVE_1} not synced to version ${old.bodies[0].version}: it is no longer the active version`,
    );
    expect((await getJobRun(db(), newer.parentRunId))!.warnings.slice(-2)).toEqual([
      `INFO: slave ${SLAVE_1} not synced to version ${newer.bodies[0].version}: it already runs version 99`,
      `WARN: slave ${SLAVE_1} runs version 99, higher than any stored here (was D1 reset?): the next gensynchaprx numbers its version past it`,
    ]);
  });
});
