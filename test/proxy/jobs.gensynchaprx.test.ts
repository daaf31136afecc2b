// gensynchaprx through the Worker: the versions it stores without an agent, the master agent's push, check and
// refusals (the previous version stays active), and what a tenant reads of a failure where the administrator reads all.
import { env } from "cloudflare:workers";
import { beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { getJobRun } from "../../src/jobs/history";
import { asAdmin, createBackend, errorBody, expectJson } from "../support/proxy-api";
import { AGENT_FILES, createProjectWithContainers } from "../support/proxy-fixtures";
import { AGENT, agentEnv, applied, callWith, db, fakeAgents, withVars } from "../support/proxy-job-env";
import { silenceConsoleAndRestoreMocks } from "../support/silent-console";
import { createJobsProject } from "./jobs-fixtures";

let apiUser: string;
beforeAll(async () => {
  apiUser = await createJobsProject();
});

silenceConsoleAndRestoreMocks();

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

  it("keeps HAPROXY_VERSIONS_KEPT versions while refusals pile up, and the one in force", async () => {
    const vars = { HAPROXY_VERSIONS_KEPT: "2" };
    await expectJson(callWith(withVars(vars), "/admin/gensynchaprx"), 200);
    const inForce = (await expectJson(callWith(withVars(vars), "/admin/haproxy"), 200)).version;
    fakeAgents(() => Response.json({ error: "reload failed (exit 1): no" }, { status: 500 }));
    for (let run = 0; run < 4; run++) await expectJson(callWith(agentEnv(vars), "/admin/gensynchaprx"), 500);
    const versions = await expectJson(callWith(withVars(vars), "/admin/haproxy/versions"), 200);
    expect(versions.map((v: { version: number; status: string }) => [v.version, v.status])).toEqual([
      [inForce + 4, "rejected"],
      [inForce + 3, "rejected"],
      [inForce, "active"],
    ]);
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
    expect(call.body.onlyIfNewer).toBe(true);
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
