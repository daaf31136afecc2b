// The retry of a queued gensynchaprx whose push's answer was lost: the version the earlier attempt stored is settled
// with the agent under its own push id before anything is generated again, so that a run never records success for
// a version nobody knows was applied, and never ships twice.
import { env } from "cloudflare:workers";
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { createJobRun, finishJobRun, getJobRun } from "../../src/jobs/history";
import { MAX_ATTEMPTS } from "../../src/jobs/retries";
import { deliverBatch } from "../support/jobs-queue";
import { expectJson } from "../support/proxy-api";
import { createDeployedProject } from "../support/proxy-fixtures";
import { AGENT, agentEnv, agents, callWith, db, record, timedOut, withVars } from "../support/proxy-job-env";

beforeAll(async () => {
  await createDeployedProject("retries");
});

beforeEach(() => {
  vi.spyOn(console, "log").mockImplementation(() => {});
  vi.spyOn(console, "error").mockImplementation(() => {});
  vi.spyOn(console, "warn").mockImplementation(() => {});
});

afterEach(() => {
  vi.restoreAllMocks();
});

const versionRow = (version: number) =>
  env.DB.prepare("select status, error from haproxy_versions where id = ?").bind(version).first();
const versionCount = async () =>
  (await env.DB.prepare("select count(*) as n from haproxy_versions").first<{ n: number }>())!.n;
const activeVersion = async () => (await expectJson(callWith(withVars(), "/admin/haproxy"), 200)).version as number;

/**
 * A queued gensynchaprx's first attempt whose push times out and whose agent, asked, is still reloading: the run
 * waits for its retry and its version is unknown. Answers the run, the version and its push id.
 */
async function attemptLeftUnknown() {
  const runId = await createJobRun(db(), { kind: "gensynchaprx", trigger: "test" });
  const seen = agents({
    push: () => {
      throw timedOut();
    },
    abandon: (call) => record("reloading", Number(/pushes\/v(\d+)-/.exec(call.url)![1])),
  });
  const first = await deliverBatch([{ id: "a1", attempts: 1, body: { kind: "gensynchaprx", runId } }], agentEnv());
  expect(first.result.retryMessages).toEqual([{ msgId: "a1" }]);
  vi.mocked(globalThis.fetch).mockRestore();
  const push = seen.find((call) => call.method === "PUT")!;
  const version = push.body.version as number;
  expect(await versionRow(version)).toMatchObject({ status: "unknown" });
  expect(await getJobRun(db(), runId)).toMatchObject({ state: "queued", attempts: 1 });
  return { runId, version, pushId: push.body.pushId as string };
}

const retry = (runId: number, attempts: number) =>
  deliverBatch([{ id: `r${attempts}`, attempts, body: { kind: "gensynchaprx", runId } }], agentEnv());

describe("a queued gensynchaprx retried after its push's answer was lost", () => {
  it("asks the agent under the same push id; applied, the version is in force and the run succeeds without a push", async () => {
    const { runId, version, pushId } = await attemptLeftUnknown();
    const versions = await versionCount();
    const seen = agents({ abandon: () => record("applied", version) });
    const second = await retry(runId, 2);
    expect(second.result.explicitAcks).toEqual(["r2"]);
    expect(seen.map((call) => [call.method, call.url])).toEqual([["POST", `${AGENT}/v1/pushes/${pushId}/abandon`]]);
    expect(await versionRow(version)).toEqual({ status: "active", error: null });
    expect(await versionCount()).toBe(versions);
    const run = (await getJobRun(db(), runId))!;
    expect(run).toMatchObject({ state: "succeeded", attempts: 2, error: null });
    expect(run.warnings).toContain(`INFO: version ${version} was settled as applied: it is the version in force`);
  });

  it("dropped by the agent, the version is rejected and the retry ships a new one", async () => {
    const { runId, version, pushId } = await attemptLeftUnknown();
    const seen = agents({
      abandon: () => record("abandoned", version, "given up by the control plane before its reload"),
      push: (call) => Response.json({ outcome: "applied", version: call.body.version }),
    });
    const second = await retry(runId, 2);
    expect(second.result.explicitAcks).toEqual(["r2"]);
    expect(seen.map((call) => [call.method, new URL(call.url).pathname])).toEqual([
      ["POST", `/v1/pushes/${pushId}/abandon`],
      ["POST", "/v1/check"],
      ["PUT", "/v1/config"],
    ]);
    expect(seen[2].body.version).toBe(version + 1);
    expect(await versionRow(version)).toEqual({
      status: "rejected",
      error: expect.stringMatching(/; settled later: it dropped version \d+ before reloading: given up by the/),
    });
    expect(await activeVersion()).toBe(version + 1);
    expect(await getJobRun(db(), runId)).toMatchObject({ state: "succeeded", attempts: 2, error: null });
  });

  it("while the agent still cannot tell: no push, no new version, the run retries and fails on its last attempt", async () => {
    const { runId, version, pushId } = await attemptLeftUnknown();
    const versions = await versionCount();
    const seen = agents({ abandon: () => record("reloading", version) });
    const second = await retry(runId, 2);
    expect(second.result.retryMessages).toEqual([{ msgId: "r2" }]);
    const last = await retry(runId, MAX_ATTEMPTS);
    expect(last.result.explicitAcks).toEqual([`r${MAX_ATTEMPTS}`]);
    expect(seen.map((call) => [call.method, call.url])).toEqual([
      ["POST", `${AGENT}/v1/pushes/${pushId}/abandon`],
      ["POST", `${AGENT}/v1/pushes/${pushId}/abandon`],
    ]);
    expect(await versionCount()).toBe(versions);
    expect(await versionRow(version)).toMatchObject({ status: "unknown" });
    expect(await getJobRun(db(), runId)).toMatchObject({
      state: "failed",
      attempts: 3,
      error:
        `Unable to reload and sync of HAProxy: an earlier attempt's push of version ${version} was lost, and it is ` +
        `still working on version ${version} (reloading). Whether the load balancer took it is unknown until GET ` +
        "/admin/haproxy/status reads the agent again.",
    });
  });
});

describe("a queued gensynchaprx whose slave syncs could not be queued after its version became active", () => {
  const SLAVE = "http://slave.test:9400";
  const syncRuns = async (runId: number) =>
    (
      await env.DB.prepare("select id, state from job_runs where kind = 'haproxy-slave-sync' and \"trigger\" = ?")
        .bind(`gensynchaprx run ${runId}`)
        .all()
    ).results;

  it("succeeds with a warning, and a retry (its end lost) queues them, once however often delivered", async () => {
    const sent: unknown[] = [];
    const send = async (messages: unknown[]) => void sent.push(...messages);
    const withQueue = (sendBatch: (messages: unknown[]) => Promise<void>) =>
      ({ ...agentEnv({ SLAVE_AGENT_URLS: SLAVE }), JOBS: { send, sendBatch } }) as unknown as Env;
    const refusing = withQueue(() => Promise.reject(new Error("queue unavailable")));
    const runId = await createJobRun(db(), { kind: "gensynchaprx", trigger: "test" });
    agents({ push: (call) => Response.json({ outcome: "applied", version: call.body.version }) });
    const first = await deliverBatch([{ id: "a1", attempts: 1, body: { kind: "gensynchaprx", runId } }], refusing);
    // The version is in force whatever the slaves' fate: the run succeeds and says what it owes them.
    expect(first.result.explicitAcks).toEqual(["a1"]);
    const version = await activeVersion();
    const [unsent] = await syncRuns(runId);
    expect(unsent).toMatchObject({ state: "failed" });
    expect(await getJobRun(db(), runId)).toMatchObject({ state: "succeeded", attempts: 1, error: null });
    expect((await getJobRun(db(), runId))!.warnings).toContainEqual(
      expect.stringMatching(
        `^WARN: the syncs of version ${version} to the slaves could not be queued \\(send 1 of 6\\)`,
      ),
    );

    // Its end lost, say: the retry finds the version in force, ships nothing, and queues the syncs that did not go out.
    await finishJobRun(db(), { id: runId, now: new Date(), state: "queued", error: "could not record the end" });
    const second = await deliverBatch(
      [{ id: "a2", attempts: 2, body: { kind: "gensynchaprx", runId } }],
      withQueue(send),
    );
    expect(second.result.explicitAcks).toEqual(["a2"]);
    const syncs = await syncRuns(runId);
    expect(syncs).toEqual([unsent, { id: expect.any(Number), state: "queued" }]);
    const queued = syncs[1].id as number;
    const sync = { kind: "haproxy-slave-sync", parentRunId: runId, version, agentUrl: SLAVE, runId: queued };
    expect(sent).toEqual([{ body: sync }]);
    const run = (await getJobRun(db(), runId))!;
    expect(run).toMatchObject({ state: "succeeded", attempts: 2, error: null });
    expect(run.warnings).toContain(`INFO: sync of version ${version} to slave ${SLAVE} queued as job ${queued}`);

    // The retry's end lost, say: another retry finds the syncs queued and queues none again.
    await finishJobRun(db(), { id: runId, now: new Date(), state: "queued", error: "could not record the end" });
    const third = await deliverBatch(
      [{ id: "a3", attempts: 3, body: { kind: "gensynchaprx", runId } }],
      withQueue(send),
    );
    expect(third.result.explicitAcks).toEqual(["a3"]);
    expect(await syncRuns(runId)).toEqual(syncs);
    expect(sent).toHaveLength(1);
    expect(await getJobRun(db(), runId)).toMatchObject({ state: "succeeded", attempts: 3, error: null });
  });
});
