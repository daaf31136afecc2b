// Debounced gensynchaprx (PROXY_GENERATION_DEBOUNCE): tenants' calls close together share one run, a call never
// joins a run that started before it, the administrator runs at once, and 0 keeps the old behaviour.
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { createJobRun, getJobRun } from "../../src/jobs/history";
import { CONFIG_LOCK } from "../../src/proxy/jobs";
import { createProjectOnHost } from "../support/proxy-fixtures";
import { as, createApiUser, createBackend, expectJson } from "../support/proxy-api";
import { deliverBatch } from "../support/jobs-queue";
import {
  agents,
  applied,
  callWith,
  db,
  fakeAgents,
  agentEnv,
  locks,
  record,
  timedOut,
  withVars,
} from "../support/proxy-job-env";

const WINDOW_MS = 1_500;
const debounced = (vars: Record<string, string> = {}) =>
  agentEnv({ PROXY_GENERATION_DEBOUNCE: `${WINDOW_MS}ms`, ...vars });

let tenant: string;
beforeAll(async () => {
  const { web } = await createProjectOnHost("debounce", {
    hostname: "node1.debounce.example",
    ipv6: "2001:db8:de::1",
    containers: { web: "2001:db8:de::10" },
  });
  await createBackend("debounce", {
    label: "site",
    backendContainers: [{ containerId: web }],
    domainForwardings: [{ domainName: "www.debounce.example" }],
  });
  tenant = await createApiUser("debouncer", ["debounce"]);
});

beforeEach(() => {
  vi.spyOn(console, "error").mockImplementation(() => {});
  vi.spyOn(console, "warn").mockImplementation(() => {});
});
afterEach(() => vi.restoreAllMocks());

const startedAt = async (response: Response) =>
  (await getJobRun(db(), Number(response.headers.get("X-Job-Id"))))!.startedAt!.getTime();

describe("a tenant's gensynchaprx", () => {
  it("waits out the window after the last run, then runs once, after every change it made", async () => {
    const { calls } = fakeAgents(applied);
    const first = await callWith(debounced(), "/admin/gensynchaprx");
    await expectJson(first, 200);
    const balance = `balance ${calls.at(-1)!.body.files["haproxy.cfg"].includes("balance source") ? "first" : "source"}`;
    await expectJson(as(tenant, "/backends/debounce", "POST", { label: "site", params: balance }), 200);
    const second = await callWith(debounced(), "/admin/gensynchaprx", tenant);
    await expectJson(second, 200);
    expect(calls.at(-1)!.body.files["haproxy.cfg"]).toContain(`\n    ${balance}\n`);
    expect(Number(second.headers.get("X-Job-Id"))).toBeGreaterThan(Number(first.headers.get("X-Job-Id")));
    expect((await startedAt(second)) - (await startedAt(first))).toBeGreaterThanOrEqual(WINDOW_MS);
  });

  it("shares one run among calls made in the same window, each answered with it", async () => {
    const { calls } = fakeAgents(applied);
    await expectJson(callWith(debounced(), "/admin/gensynchaprx"), 200);
    const before = calls.length;
    const answers = await Promise.all([1, 2, 3].map(() => callWith(debounced(), "/admin/gensynchaprx", tenant)));
    const runIds = answers.map((answer) => answer.headers.get("X-Job-Id"));
    for (const answer of answers) expect(await expectJson(answer, 200)).toEqual([]);
    expect(new Set(runIds).size).toBe(1);
    expect(calls.length - before).toBe(1);
  });

  it("answers with the failure of the run it joined, naming the run and not the cause", async () => {
    fakeAgents(applied);
    await expectJson(callWith(debounced(), "/admin/gensynchaprx"), 200);
    vi.restoreAllMocks();
    vi.spyOn(console, "error").mockImplementation(() => {});
    fakeAgents(() => Response.json({ error: "reload failed (exit 1): secret detail" }, { status: 500 }));
    const answers = await Promise.all([1, 2].map(() => callWith(debounced(), "/admin/gensynchaprx", tenant)));
    const runId = Number(answers[0].headers.get("X-Job-Id"));
    expect(Number(answers[1].headers.get("X-Job-Id"))).toBe(runId);
    const bodies = await Promise.all(answers.map((answer) => expectJson(answer, 500)));
    const where = `(job run ${runId}; an administrator can read GET /admin/jobs/${runId})`;
    expect(bodies.map((body) => body.payload).sort()).toEqual([
      `Unable to reload and sync of HAProxy: the load balancer refused the configuration ${where}. The previous configuration is still active.`,
      `Unable to reload and sync of HAProxy: the run this call joined failed ${where}`,
    ]);
  });

  it("does not join a queued run's retry that ships a version generated before the call, and runs after it", async () => {
    // A queued gensynchaprx (as the certificate job queues it) whose first attempt's push answer is lost.
    const runId = await createJobRun(db(), { kind: "gensynchaprx", trigger: "test" });
    const first = agents({
      push: () => {
        throw timedOut();
      },
      abandon: (call) => record("reloading", Number(/pushes\/v(\d+)-/.exec(call.url)![1])),
    });
    await deliverBatch([{ id: "a1", attempts: 1, body: { kind: "gensynchaprx", runId } }], debounced());
    const stale = first.find((call) => call.method === "PUT")!.body;
    expect(await getJobRun(db(), runId)).toMatchObject({ state: "queued" });
    vi.mocked(globalThis.fetch).mockRestore();

    // The tenant changes its backend after that version was generated, and calls while the lock is held for the
    // queued run's retry (handed over to it): the tenant cannot run before the retry, which starts after it arrived.
    const balance = `balance ${stale.files["haproxy.cfg"].includes("balance source") ? "first" : "source"}`;
    await expectJson(as(tenant, "/backends/debounce", "POST", { label: "site", params: balance }), 200);
    const lock = { holder: `run-${runId}`, kind: "gensynchaprx", ttlMs: 60_000, forQueuedRun: true };
    await locks().acquire(CONFIG_LOCK, lock);
    const seen = agents({
      abandon: () => record("applied", stale.version),
      push: (call) => Response.json({ outcome: "applied", version: call.body.version }),
    });
    const call = callWith(debounced(), "/admin/gensynchaprx", tenant);
    await new Promise((resolve) => setTimeout(resolve, 300));
    // The queued run's retry, claimed after the tenant arrived, settles the earlier version and ships nothing.
    const retry = await deliverBatch([{ id: "a2", attempts: 2, body: { kind: "gensynchaprx", runId } }], debounced());
    expect(retry.result.explicitAcks).toEqual(["a2"]);
    expect(await getJobRun(db(), runId)).toMatchObject({ state: "succeeded", attempts: 2 });

    const answer = await call;
    expect(await expectJson(answer, 200)).toEqual([]);
    const own = Number(answer.headers.get("X-Job-Id"));
    expect(own).toBeGreaterThan(runId);
    const pushes = seen.filter((c) => c.method === "PUT");
    expect(pushes).toHaveLength(1);
    expect(pushes[0].body.version).toBeGreaterThan(stale.version);
    expect(pushes[0].body.files["haproxy.cfg"]).toContain(`\n    ${balance}\n`);
    expect((await startedAt(answer)) - (await getJobRun(db(), runId))!.startedAt!.getTime()).toBeGreaterThanOrEqual(
      WINDOW_MS,
    );
  });

  it("the administrator's call runs at once, whatever the window", async () => {
    // A window far longer than any run (and than the test's time limit): a second call that waited it out would
    // start a minute after the first, one that runs at once within the first's run time.
    const window = { PROXY_GENERATION_DEBOUNCE: "60s" };
    fakeAgents(applied);
    const first = await callWith(agentEnv(window), "/admin/gensynchaprx");
    await expectJson(first, 200);
    const second = await callWith(agentEnv(window), "/admin/gensynchaprx");
    await expectJson(second, 200);
    expect((await startedAt(second)) - (await startedAt(first))).toBeLessThan(60_000);
  });

  it("with PROXY_GENERATION_DEBOUNCE 0, answers 423 at once while another run holds the lock", async () => {
    await locks().acquire(CONFIG_LOCK, { holder: "someone", kind: "gensynchaprx", ttlMs: 60_000 });
    try {
      const answer = await expectJson(callWith(withVars(), "/admin/gensynchaprx", tenant), 423);
      expect(answer.payload).toMatch(/^Job is already running \(gensynchaprx since /);
    } finally {
      await locks().release(CONFIG_LOCK, "someone");
    }
  });
});
