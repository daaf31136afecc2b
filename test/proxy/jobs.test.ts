// The configuration jobs through the Worker: gensynchaprx (stored versions, the master agent, its refusals), slave
// syncs on the queue (retries, outcomes on the parent run), writesshprx, /maintenance/start and the daily cron, the
// locks (423), slaves (405), the ACME challenge route and the job history.
import { createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import worker from "../../src/index";
import { getJobRun } from "../../src/jobs/history";
import { MAX_ATTEMPTS } from "../../src/jobs/queue";
import { CONFIG_LOCK, MAINTENANCE_LOCK } from "../../src/proxy/jobs";
import { asAdmin, createApiUser, createBackend, errorBody, expectJson } from "../support/proxy-api";
import { deliverBatch, type QueuedMessage } from "../support/jobs-queue";
import { AGENT_FILES, createDeployedProject, createProjectWithContainers } from "../support/proxy-fixtures";
import {
  AGENT,
  agentEnv,
  applied,
  callWith,
  db,
  fakeAgents,
  KEY_ANNA,
  KEY_BEN,
  locks,
  withVars,
} from "../support/proxy-job-env";

const SLAVE_1 = "http://slave-1.test:9400";
const SLAVE_2 = "http://slave-2.test:9400";

let apiUser: string;
beforeAll(async () => {
  await createDeployedProject("jobs", "backup");
  await expectJson(asAdmin("/admin/users", "POST", { email: "carl@example.com" }), 200);
  await expectJson(
    asAdmin("/admin/containers/jobs/web1/permissions", "PUT", [
      { permission: "www-data", userEmail: "ben@example.com" },
      { permission: "www-data", userEmail: "anna@example.com" },
      { permission: "root", userEmail: "anna@example.com" },
      { permission: "root", userEmail: "carl@example.com" },
    ]),
    200,
  );
  apiUser = await createApiUser("jobrunner", ["jobs"]);
});

beforeEach(() => {
  vi.spyOn(console, "log").mockImplementation(() => {});
  vi.spyOn(console, "error").mockImplementation(() => {});
});

afterEach(() => {
  vi.restoreAllMocks();
});

describe("gensynchaprx without an agent", () => {
  it("stores the bundle as the active version and warns that no load balancer was updated", async () => {
    const response = await callWith(withVars(), "/admin/gensynchaprx");
    const warnings = await expectJson(response, 200);
    const version = (await expectJson(callWith(withVars(), "/admin/haproxy/versions"), 200))[0].version;
    expect(warnings).toEqual([
      `WARN: HAPROXY_AGENT_URL is not set: version ${version} is stored but no load balancer was updated`,
    ]);
    const runId = Number(response.headers.get("X-Job-Id"));
    expect(await expectJson(callWith(withVars(), `/admin/jobs/${runId}`), 200)).toMatchObject({
      id: runId,
      kind: "gensynchaprx",
      state: "succeeded",
      trigger: "api (admin)",
      attempts: 1,
      warnings,
      startedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      endedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    const active = await expectJson(callWith(withVars(), "/admin/haproxy"), 200);
    expect(active).toMatchObject({
      version,
      status: "active",
      jobId: runId,
      certificates: [{ file: "fallback.pem", name: "fallback" }],
    });
    expect(Object.keys(active.files)).toEqual([
      "crt-list.txt",
      "domain2backend.map",
      "domain2cert.map",
      "domain2prefix.map",
      "domain2redirect.map",
      "haproxy.cfg",
    ]);
    const backendId = (await expectJson(asAdmin("/projects/jobs"), 200)).backends.find(
      (b: { label: string }) => b.label === "www",
    ).FQLabel;
    expect(active.files["domain2backend.map"]).toBe(
      `# host name -> backend (generated, DO NOT EDIT)\n# jobs: permredirect\nold.jobs.example permprefix\n# jobs: www\nshop.jobs.example ${backendId}\nwww.jobs.example ${backendId}\n`,
    );
    expect(active.files["domain2prefix.map"]).toContain("old.jobs.example https://www.jobs.example\n");
    expect(active.files["haproxy.cfg"]).toContain(
      `backend ${backendId}\n    server node1.example.net_jobs-web1 [2001:db8::11]:8080\n    server node1.example.net_jobs-web2 [2001:db8::12]:8080 backup\n`,
    );
  });

  it("gives the same bytes for the same database, as a new version, and keeps the older one as previous", async () => {
    await expectJson(callWith(withVars(), "/admin/gensynchaprx"), 200);
    await expectJson(callWith(withVars(), "/admin/gensynchaprx"), 200);
    const [newest, older] = await expectJson(callWith(withVars(), "/admin/haproxy/versions"), 200);
    expect(newest.version).toBe(older.version + 1);
    expect(newest.digest).toBe(older.digest);
    expect([newest.status, older.status]).toEqual(["active", "previous"]);
    const [a, b] = await Promise.all(
      [newest, older].map(
        async ({ version }) =>
          (await expectJson(callWith(withVars(), `/admin/haproxy/versions/${version}`), 200)).files,
      ),
    );
    expect(a).toEqual(b);
  });

  it("keeps HAPROXY_VERSIONS_KEPT versions", async () => {
    // Three versions of its own, whatever other tests stored before: the first of them is the one dropped.
    const vars = { HAPROXY_VERSIONS_KEPT: "2" };
    for (let run = 0; run < 3; run++) await expectJson(callWith(withVars(vars), "/admin/gensynchaprx"), 200);
    const versions = await expectJson(callWith(withVars(vars), "/admin/haproxy/versions"), 200);
    expect(versions.map((v: { status: string }) => v.status)).toEqual(["active", "previous"]);
    const dropped = versions[1].version - 1;
    expect(await expectJson(callWith(withVars(), `/admin/haproxy/versions/${dropped}`), 404)).toEqual(
      errorBody(`Invalid version: ${dropped} not existing`),
    );
  });

  it("may be started by any API user, whose history and versions stay administrator-only", async () => {
    expect((await callWith(withVars(), "/admin/gensynchaprx", apiUser)).status).toBe(200);
    expect((await callWith(withVars(), "/admin/haproxy", apiUser)).status).toBe(403);
    expect((await callWith(withVars(), "/admin/jobs", apiUser)).status).toBe(403);
    expect((await callWith(withVars(), "/admin/gensynchaprx", null)).status).toBe(401);
  });
});

describe("gensynchaprx with the master agent", () => {
  it("pushes every file with the token and activates the version the agent applied", async () => {
    const { calls } = fakeAgents(applied);
    expect(await expectJson(callWith(agentEnv(), "/admin/gensynchaprx"), 200)).toEqual([]);
    expect(calls).toHaveLength(1);
    const [call] = calls;
    expect(call.url).toBe(`${AGENT}/v1/config`);
    expect(call.authorization).toBe("Bearer agent-token");
    expect(call.body.onlyIfNewer).toBe(false);
    expect(Object.keys(call.body.files).sort()).toEqual(AGENT_FILES);
    expect(call.body.files["fallback.pem"]).toMatch(
      /^-----BEGIN CERTIFICATE-----\n[\s\S]+-----END CERTIFICATE-----\n-----BEGIN PRIVATE KEY-----\n/,
    );
    const active = await expectJson(callWith(withVars(), "/admin/haproxy"), 200);
    expect(active).toMatchObject({ version: call.body.version, digest: call.body.digest, status: "active" });
    expect(active.files["haproxy.cfg"]).toBe(call.body.files["haproxy.cfg"]);
  });

  it("answers 500 when the agent's check refuses for a reason no tenant backend explains; the previous version stays active", async () => {
    await expectJson(callWith(withVars(), "/admin/gensynchaprx"), 200);
    const before = await expectJson(callWith(withVars(), "/admin/haproxy"), 200);
    const output = "haproxy -c failed (exit 1): [ALERT] unknown keyword 'bogus'.";
    // Line 5 of haproxy.cfg is in the global section: nothing a tenant wrote.
    const { calls, checks } = fakeAgents(applied, () =>
      Response.json({
        valid: false,
        error: output,
        alerts: [
          "config : parsing [/etc/haproxy/.check-1a2b/haproxy.cfg:5] : unknown keyword 'bogus' in 'global' section",
          "config : Fatal errors found in configuration.",
        ],
      }),
    );
    const response = await callWith(agentEnv(), "/admin/gensynchaprx");
    const refused = `agent ${AGENT} refused version ${before.version + 1}: ${output}`;
    expect(await expectJson(response, 500)).toEqual(
      errorBody(`Unable to reload and sync of HAProxy: ${refused} The previous configuration is still active.`),
    );
    expect(checks).toHaveLength(1);
    expect(calls).toEqual([]);
    expect(await expectJson(callWith(withVars(), "/admin/haproxy"), 200)).toEqual(before);
    const [rejected] = await expectJson(callWith(withVars(), "/admin/haproxy/versions"), 200);
    expect(rejected).toMatchObject({ version: before.version + 1, status: "rejected", error: refused });
    expect(rejected.jobId).toBe(Number(response.headers.get("X-Job-Id")));
    expect(await getJobRun(db(), rejected.jobId)).toMatchObject({
      state: "failed",
      error: `Unable to reload and sync of HAProxy: ${refused} The previous configuration is still active.`,
    });
  });

  it("answers 500 when the agent refuses the push its check accepted (a failed reload); the previous version stays active", async () => {
    await expectJson(callWith(withVars(), "/admin/gensynchaprx"), 200);
    const before = await expectJson(callWith(withVars(), "/admin/haproxy"), 200);
    fakeAgents(() =>
      Response.json({ error: "reload failed (exit 1): no; the previous configuration was restored" }, { status: 500 }),
    );
    const response = await callWith(agentEnv(), "/admin/gensynchaprx");
    const refused = `agent ${AGENT} refused version ${before.version + 1} (HTTP 500): reload failed (exit 1): no; the previous configuration was restored`;
    expect(await expectJson(response, 500)).toEqual(
      errorBody(`Unable to reload and sync of HAProxy: ${refused}. The previous configuration is still active.`),
    );
    expect(await expectJson(callWith(withVars(), "/admin/haproxy"), 200)).toEqual(before);
    const [rejected] = await expectJson(callWith(withVars(), "/admin/haproxy/versions"), 200);
    expect(rejected).toMatchObject({ version: before.version + 1, status: "rejected", error: refused });
  });

  it("answers 500 when the agent cannot be reached or no token is set", async () => {
    vi.spyOn(globalThis, "fetch").mockRejectedValue(new TypeError("connection refused"));
    expect((await expectJson(callWith(agentEnv(), "/admin/gensynchaprx"), 500)).payload).toBe(
      `Unable to reload and sync of HAProxy: agent ${AGENT} is unreachable: connection refused. The previous configuration is still active.`,
    );
    expect(await expectJson(callWith(agentEnv({ HAPROXY_AGENT_TOKEN: "" }), "/admin/gensynchaprx"), 500)).toEqual(
      errorBody("Unable to reload and sync of HAProxy: HAPROXY_AGENT_TOKEN is not set"),
    );
  });

  it("checks the bundle before anything is stored or pushed", async () => {
    const { calls } = fakeAgents(applied);
    const versionsBefore = await expectJson(callWith(withVars(), "/admin/haproxy/versions"), 200);
    // A redirect URL the API would refuse, written to D1: the generator refuses the whole bundle.
    const setRedirect = (url: string) =>
      env.DB.prepare("update domains set redirect_to_url = ? where domain_name = 'old.jobs.example'").bind(url).run();
    await setRedirect("https://www.jobs.example/a b");
    expect(await expectJson(callWith(agentEnv(), "/admin/gensynchaprx"), 500)).toEqual(
      errorBody(
        "Unable to reload and sync of HAProxy: invalid configuration: old.jobs.example: invalid redirect URL https://www.jobs.example/a b",
      ),
    );
    expect(calls).toEqual([]);
    expect(await expectJson(callWith(withVars(), "/admin/haproxy/versions"), 200)).toEqual(versionsBefore);
    await setRedirect("https://www.jobs.example/*");
  });
});

describe("gensynchaprx failures as callers other than the administrator read them", () => {
  // What haproxy -c printed: expanded configuration text, which only the administrator may read.
  const CHECK_OUTPUT =
    "haproxy -c failed (exit 1): [ALERT] parsing [haproxy.cfg:4] : error opening file '/x/s3cr3t-from-env'";
  // Line 4 of haproxy.cfg is in the global section: the refusal cannot be confined to a tenant's backend.
  const refusedCheck = () =>
    Response.json({
      valid: false,
      error: CHECK_OUTPUT,
      alerts: ["config : parsing [/etc/haproxy/haproxy.cfg:4] : error opening file '/x/s3cr3t-from-env'"],
    });
  const forTenant = (runId: number, summary: string) =>
    errorBody(
      `Unable to reload and sync of HAProxy: ${summary} (job run ${runId}; an administrator can read GET /admin/jobs/${runId}). ` +
        "The previous configuration is still active.",
    );

  // Each case starts from an active version it must leave active.
  beforeEach(async () => {
    await expectJson(callWith(withVars(), "/admin/gensynchaprx"), 200);
  });

  /** Calls gensynchaprx as the API user; returns the run id the answer names in X-Job-Id and its body. */
  async function failAsTenant(workerEnv: Env) {
    const response = await callWith(workerEnv, "/admin/gensynchaprx", apiUser);
    const body = await expectJson(response, 500);
    return { runId: Number(response.headers.get("X-Job-Id")), body };
  }

  it("a refusal by the agent: the tenant gets the run id, never the agent's output; the run keeps it for the administrator", async () => {
    const before = await expectJson(callWith(withVars(), "/admin/haproxy"), 200);
    fakeAgents(applied, refusedCheck);
    const { runId, body } = await failAsTenant(agentEnv());
    expect(runId).toBeGreaterThan(0);
    expect(body).toEqual(forTenant(runId, "the load balancer refused the configuration"));
    expect(JSON.stringify(body)).not.toContain("s3cr3t");
    expect(JSON.stringify(body)).not.toContain("haproxy -c");

    const detail = `Unable to reload and sync of HAProxy: agent ${AGENT} refused version ${before.version + 1}: ${CHECK_OUTPUT}. The previous configuration is still active.`;
    expect(await expectJson(callWith(withVars(), `/admin/jobs/${runId}`), 200)).toMatchObject({
      id: runId,
      kind: "gensynchaprx",
      state: "failed",
      trigger: "api (jobrunner)",
      error: detail,
    });
    expect(await expectJson(callWith(withVars(), `/admin/jobs/${runId}`, apiUser), 403)).toEqual(
      errorBody("Administrator access required"),
    );
    // Nothing was applied: the previous version stays active, the new one is rejected.
    expect(await expectJson(callWith(withVars(), "/admin/haproxy"), 200)).toEqual(before);
    const [rejected] = await expectJson(callWith(withVars(), "/admin/haproxy/versions"), 200);
    expect(rejected).toMatchObject({ version: before.version + 1, status: "rejected", jobId: runId });
  });

  it("the administrator still reads the agent's output in the answer, and the run id in X-Job-Id", async () => {
    const before = await expectJson(callWith(withVars(), "/admin/haproxy"), 200);
    fakeAgents(applied, refusedCheck);
    const response = await callWith(agentEnv(), "/admin/gensynchaprx");
    expect(await expectJson(response, 500)).toEqual(
      errorBody(
        `Unable to reload and sync of HAProxy: agent ${AGENT} refused version ${before.version + 1}: ${CHECK_OUTPUT}. The previous configuration is still active.`,
      ),
    );
    const runId = Number(response.headers.get("X-Job-Id"));
    expect(await getJobRun(db(), runId)).toMatchObject({
      kind: "gensynchaprx",
      state: "failed",
      trigger: "api (admin)",
    });
  });

  it("an unreachable agent or a missing token: the tenant reads which, not the detail", async () => {
    vi.spyOn(globalThis, "fetch").mockRejectedValue(new TypeError("connect ECONNREFUSED 10.0.0.7:9400"));
    const unreachable = await failAsTenant(agentEnv());
    expect(unreachable.body).toEqual(forTenant(unreachable.runId, "the load balancer could not be reached"));
    expect((await getJobRun(db(), unreachable.runId))!.error).toBe(
      `Unable to reload and sync of HAProxy: agent ${AGENT} is unreachable: connect ECONNREFUSED 10.0.0.7:9400. The previous configuration is still active.`,
    );

    const noToken = await failAsTenant(agentEnv({ HAPROXY_AGENT_TOKEN: "" }));
    expect(noToken.body).toEqual(forTenant(noToken.runId, "the load balancer's agent is not configured"));
    expect((await getJobRun(db(), noToken.runId))!.error).toBe(
      "Unable to reload and sync of HAProxy: HAPROXY_AGENT_TOKEN is not set",
    );
  });

  it("an invalid configuration: the tenant does not read other projects' backends or params", async () => {
    const { app } = await createProjectWithContainers("jobsother", "node1.example.net", { app: "2001:db8::21" });
    await createBackend("jobsother", { label: "api", backendContainers: [{ containerId: app }] });
    await createBackend("jobsother", {
      label: "permredirect",
      domainForwardings: [{ domainName: "old.jobsother.example", redirectToUrl: "https://x.example/" }],
    });
    // Written past the API: only the generation refuses it.
    await env.DB.prepare("update domains set redirect_to_url = ? where domain_name = 'old.jobsother.example'")
      .bind("https://jobsother.example/a b")
      .run();
    const { calls } = fakeAgents(applied);
    const versionsBefore = await expectJson(callWith(withVars(), "/admin/haproxy/versions"), 200);
    try {
      const { runId, body } = await failAsTenant(agentEnv());
      expect(body).toEqual(forTenant(runId, "the generated configuration is invalid"));
      expect((await getJobRun(db(), runId))!.error).toBe(
        "Unable to reload and sync of HAProxy: invalid configuration: old.jobsother.example: invalid redirect URL https://jobsother.example/a b",
      );
      expect(JSON.stringify(body)).not.toContain("jobsother");
      expect(calls).toEqual([]);
      expect(await expectJson(callWith(withVars(), "/admin/haproxy/versions"), 200)).toEqual(versionsBefore);
    } finally {
      await expectJson(asAdmin("/admin/projects/jobsother", "DELETE"), 200);
    }
  });
});

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
      call.url.startsWith(SLAVE_1) ? applied() : new Response("busy", { status: 503 }),
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
            `agent ${SLAVE_2} refused version ${version} \\(HTTP 503\\): busy; next attempt at \\d{4}-\\d\\d-\\d\\dT`,
        ),
      ),
    ]);
    expect(await getJobRun(db(), bodies[1].runId)).toMatchObject({
      state: "queued",
      attempts: 1,
      error: `agent ${SLAVE_2} refused version ${version} (HTTP 503): busy`,
    });

    // The last attempt still fails: acked, and the parent says so.
    const last = await runSync([{ id: "s2-last", attempts: MAX_ATTEMPTS, body: bodies[1] }]);
    expect(last.result.explicitAcks).toEqual(["s2-last"]);
    expect(last.result.retryMessages).toEqual([]);
    expect(await getJobRun(db(), bodies[1].runId)).toMatchObject({ state: "failed", attempts: 2 });
    expect((await getJobRun(db(), parentRunId))!.warnings).toEqual([
      ...firstFailure,
      `WARN: slave ${SLAVE_2} could not be synced to version ${version} after ${MAX_ATTEMPTS} attempts: agent ${SLAVE_2} refused version ${version} (HTTP 503): busy`,
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
    it(`${path} answers 405`, async () => {
      expect(await expectJson(callWith(withVars({ INSTANCE_ROLE: "slave" }), path), 405)).toEqual(
        errorBody("This is a slave instance: writes and jobs must go to the master instance"),
      );
    });
  }

  it("still reads the job history and answers ACME challenges", async () => {
    expect((await callWith(withVars({ INSTANCE_ROLE: "slave" }), "/admin/jobs")).status).toBe(200);
    expect(
      (await callWith(withVars({ INSTANCE_ROLE: "slave" }), "/.well-known/acme-challenge/none", null)).status,
    ).toBe(404);
  });
});

describe("writesshprx", () => {
  it("answers [] at once and stores the SSH proxy configuration from the queue", async () => {
    const send = vi.spyOn(env.JOBS, "send").mockResolvedValue(undefined as never);
    const response = await callWith(withVars(), "/admin/writesshprx");
    expect(await expectJson(response, 200)).toEqual([]);
    const message = send.mock.calls[0][0] as { runId: number };
    expect(Number(response.headers.get("X-Job-Id"))).toBe(message.runId);
    await deliverBatch(
      [{ id: "ssh", attempts: 1, body: message }],
      withVars({ SSH_PROXY_UPSTREAM_KEY_FILE: "/etc/sshpiperd/prx_key" }),
    );

    const stored = await expectJson(callWith(withVars(), "/admin/sshproxy"), 200);
    const warnings = [
      `INFO: SSH proxy version ${stored.version}: 2 accounts`,
      "WARN: carl@example.com has no SSH public key and cannot log in as jobs-web1_root",
    ];
    expect(await getJobRun(db(), message.runId)).toMatchObject({ kind: "writesshprx", state: "succeeded", warnings });
    expect(stored).toMatchObject({ jobId: message.runId, warnings: warnings.slice(1) });
    expect(stored.accounts).toEqual([
      {
        authorizedKeys: [KEY_ANNA],
        container: "jobs-web1",
        name: "jobs-web1_root",
        permission: "root",
        project: "jobs",
        target: { host: "2001:db8::11", port: 22, user: "root" },
        users: ["anna@example.com", "carl@example.com"],
      },
      {
        authorizedKeys: [KEY_ANNA, KEY_BEN],
        container: "jobs-web1",
        name: "jobs-web1_www-data",
        permission: "www-data",
        project: "jobs",
        target: { host: "2001:db8::11", port: 22, user: "www-data" },
        users: ["anna@example.com", "ben@example.com"],
      },
    ]);
    const b64 = (text: string) => btoa(text);
    expect(stored.yaml).toBe(
      [
        "# Generated by the proxy configuration API (/admin/writesshprx). DO NOT EDIT: the next generation replaces it.",
        'version: "1.0"',
        "pipes:",
        "  - from:",
        "      - username: jobs-web1_root",
        `        authorized_keys_data: ${b64(`${KEY_ANNA}\n`)}`,
        "    to:",
        '      host: "[2001:db8::11]:22"',
        "      username: root",
        "      private_key: /etc/sshpiperd/prx_key",
        "      known_hosts: /etc/sshpiperd/known_hosts",
        "  - from:",
        "      - username: jobs-web1_www-data",
        `        authorized_keys_data: ${b64(`${KEY_ANNA}\n${KEY_BEN}\n`)}`,
        "    to:",
        '      host: "[2001:db8::11]:22"',
        "      username: www-data",
        "      private_key: /etc/sshpiperd/prx_key",
        "      known_hosts: /etc/sshpiperd/known_hosts",
        "",
      ].join("\n"),
    );
  });

  it("is for the administrator only", async () => {
    expect((await callWith(withVars(), "/admin/sshproxy", apiUser)).status).toBe(403);
  });
});

describe("maintenance job and the daily cron", () => {
  it("/maintenance/start answers 200 with an empty body and queues the certificate job", async () => {
    const send = vi.spyOn(env.JOBS, "send").mockResolvedValue(undefined as never);
    const response = await callWith(withVars(), "/maintenance/start", apiUser);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe("");
    const message = send.mock.calls[0][0] as { kind: string; runId: number; lockHolder: string };
    expect(message).toEqual({
      kind: "certificates",
      runId: Number(response.headers.get("X-Job-Id")),
      lockHolder: expect.any(String),
    });
    expect(await getJobRun(db(), message.runId)).toMatchObject({
      kind: "certificates",
      state: "queued",
      trigger: "api (jobrunner)",
    });
    expect((await locks().inspect(MAINTENANCE_LOCK))!.holder).toBe(message.lockHolder);
    await locks().release(MAINTENANCE_LOCK, message.lockHolder);
  });

  it("the daily cron queues the certificate job and the audit log's pruning next to housekeeping", async () => {
    const send = vi.spyOn(env.JOBS, "send").mockResolvedValue(undefined as never);
    const sendBatch = vi.spyOn(env.JOBS, "sendBatch").mockResolvedValue(undefined as never);
    const ctx = createExecutionContext();
    await worker.scheduled(createScheduledController({ scheduledTime: new Date(), cron: "5 0 * * *" }), env, ctx);
    await waitOnExecutionContext(ctx);
    expect(send.mock.calls.map(([message]) => (message as { kind: string }).kind)).toEqual(["housekeeping"]);
    const batch = [...sendBatch.mock.calls[0][0]];
    expect(batch).toEqual([
      { body: { kind: "certificates", runId: expect.any(Number) } },
      { body: { kind: "audit-prune", runId: expect.any(Number) } },
    ]);
    const runId = (batch[0].body as { runId: number }).runId;
    expect(await getJobRun(db(), runId)).toMatchObject({ kind: "certificates", state: "queued", trigger: "5 0 * * *" });
  });

  it("a certificate run whose CA cannot be reached retries with backoff and charges no domain", async () => {
    // www.jobs.example asks for a certificate for this test only: the gensynchaprx tests read its bundle without one.
    const enableSSL = (on: boolean) =>
      expectJson(
        asAdmin("/domains/massupdate", "POST", {
          domainOperations: [
            {
              operation: "UPDATE",
              domainName: "www.jobs.example",
              projectLabel: "jobs",
              backendLabel: "www",
              enableSSL: on,
            },
          ],
        }),
        200,
      );
    await enableSSL(true);
    try {
      const fetchSpy = vi.spyOn(globalThis, "fetch").mockResolvedValue(new Response("down", { status: 500 }));
      const runId = (await db()
        .$client.prepare("insert into job_runs (kind, trigger) values ('certificates', 'test') returning id")
        .first<{ id: number }>())!.id;
      const {
        result,
        retries: [retry],
      } = await deliverBatch(
        [{ id: "c1", attempts: 1, body: { kind: "certificates", runId } }],
        withVars({ ACME_DIRECTORY_URL: "https://acme.test/directory" }),
      );
      expect(result.retryMessages).toEqual([{ msgId: "c1" }]);
      expect(retry).toHaveBeenCalledWith({ delaySeconds: 30 });
      expect(fetchSpy.mock.calls.map(([url]) => String(url))).toEqual(["https://acme.test/directory"]);
      expect(await getJobRun(db(), runId)).toMatchObject({
        state: "queued",
        error: "ACME directory https://acme.test/directory answered HTTP 500",
      });
      expect(await env.DB.prepare("select count(*) as n from certificate_attempts").first()).toEqual({ n: 0 });
      expect(await locks().inspect(MAINTENANCE_LOCK)).toBeNull();
    } finally {
      await enableSSL(false);
    }
  });
});

describe("ACME HTTP-01 challenges", () => {
  it("answers the key authorization of a pending token without authentication, and 404 otherwise", async () => {
    await env.DB.prepare(
      "insert into acme_challenges (token, key_authorization, domain_name, created_at) values (?, ?, ?, ?)",
    )
      .bind("tok-123", "tok-123.thumbprint", "www.jobs.example", Date.now())
      .run();
    const response = await callWith(withVars(), "/.well-known/acme-challenge/tok-123", null);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/plain/);
    expect(await response.text()).toBe("tok-123.thumbprint");
    expect(await expectJson(callWith(withVars(), "/.well-known/acme-challenge/other", null), 404)).toEqual(
      errorBody("Unknown ACME challenge token"),
    );
  });
});

/** The run id a job's answer names, once it succeeded. */
async function jobId(answer: Promise<Response>) {
  const response = await answer;
  await expectJson(response, 200);
  return Number(response.headers.get("X-Job-Id"));
}

/** A writesshprx run of the test's own, delivered from the queue so that its lock is released. */
async function writeSshProxy() {
  const send = vi.spyOn(env.JOBS, "send").mockResolvedValue(undefined as never);
  const runId = await jobId(callWith(withVars(), "/admin/writesshprx"));
  const message = send.mock.calls[0][0] as { runId: number };
  await deliverBatch(
    [{ id: "ssh", attempts: 1, body: message }],
    withVars({ SSH_PROXY_UPSTREAM_KEY_FILE: "/etc/sshpiperd/prx_key" }),
  );
  return runId;
}

describe("job history", () => {
  it("lists the proxy's runs newest first, by kind, and hides other services' runs", async () => {
    const ids = [await jobId(callWith(withVars(), "/admin/gensynchaprx")), await writeSshProxy()];
    const news = (await db()
      .$client.prepare("insert into job_runs (kind, trigger) values ('news-ingest', 'test') returning id")
      .first<{ id: number }>())!.id;
    const all = await expectJson(callWith(withVars(), "/admin/jobs?limit=500"), 200);
    expect(all.slice(0, 2).map(({ id, kind }: { id: number; kind: string }) => ({ id, kind }))).toEqual([
      { id: ids[1], kind: "writesshprx" },
      { id: ids[0], kind: "gensynchaprx" },
    ]);
    expect(all.map((run: { id: number }) => run.id)).toEqual(
      [...all.map((run: { id: number }) => run.id)].sort((a, b) => b - a),
    );
    expect(all.some((run: { kind: string }) => run.kind === "news-ingest")).toBe(false);
    const ssh = await expectJson(callWith(withVars(), "/admin/jobs?kind=writesshprx"), 200);
    expect(ssh[0].id).toBe(ids[1]);
    expect(new Set(ssh.map((run: { kind: string }) => run.kind))).toEqual(new Set(["writesshprx"]));
    expect(await expectJson(callWith(withVars(), "/admin/jobs?limit=1"), 200)).toHaveLength(1);
    expect((await callWith(withVars(), "/admin/jobs?limit=0")).status).toBe(400);
    expect((await callWith(withVars(), "/admin/jobs?kind=news-ingest")).status).toBe(400);
    expect(await expectJson(callWith(withVars(), `/admin/jobs/${news}`), 404)).toEqual(
      errorBody(`Invalid job: id ${news} not existing`),
    );
    expect((await callWith(withVars(), "/admin/jobs/abc")).status).toBe(404);
  });
});
