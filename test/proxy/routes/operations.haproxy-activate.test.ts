// POST /admin/haproxy/versions/{version}/activate, agents answered by a stand-in for outbound fetch: an older version
// shipped again as a new one (restoredFrom, slave syncs, audit entry), the agent's refusal, 404, 423, 405 and 403.
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it, onTestFinished, vi } from "vitest";
import { getJobRun } from "../../../src/jobs/history";
import { CONFIG_LOCK } from "../../../src/proxy/jobs";
import { errorBody, expectJson } from "../../support/proxy-api";
import { AGENT, agentEnv, db, locks, withVars } from "../../support/proxy-job-env";
import { silenceConsoleAndRestoreMocks } from "../../support/silent-console";
import {
  applied,
  callWith,
  createOpsProject,
  fakeAgents,
  generate,
  massUpdate,
  removeDomain,
  SLAVE,
} from "./operations-helpers";
import { SLAVE_WRITE } from "./refusals-fixtures";

let apiUser: string;
beforeAll(async () => {
  ({ apiUser } = await createOpsProject());
});

silenceConsoleAndRestoreMocks();

describe("POST /admin/haproxy/versions/{version}/activate", () => {
  const activate = (workerEnv: Env, version: number | string, auth?: string | null) =>
    callWith(workerEnv, `/admin/haproxy/versions/${version}/activate`, { method: "POST", auth });

  it("ships an older version again as a new one, noting where it came from, and records it in the audit log", async () => {
    const old = await generate();
    await massUpdate({ operation: "CREATE", domainName: "new.ops.example", backendLabel: "www" });
    onTestFinished(() => removeDomain("new.ops.example"));
    const newer = await generate();
    expect(newer.files["domain2backend.map"]).not.toBe(old.files["domain2backend.map"]);

    const calls = fakeAgents(applied);
    const sendBatch = vi.spyOn(env.JOBS, "sendBatch").mockResolvedValue(undefined as never);
    const response = await activate(agentEnv({ SLAVE_AGENT_URLS: SLAVE }), old.version);
    const body = await expectJson(response, 200);
    const restored = newer.version + 1;
    const runId = Number(response.headers.get("X-Job-Id"));
    const [sync] = [...sendBatch.mock.calls[0][0]].map((message) => message.body as { runId: number });
    expect(body).toEqual({
      success: true,
      payload: { key: "version", value: restored },
      warnings: [
        `INFO: version ${restored} restores version ${old.version}`,
        `INFO: sync of version ${restored} to slave ${SLAVE} queued as job ${sync.runId}`,
      ],
    });
    expect(sync).toMatchObject({ kind: "haproxy-slave-sync", parentRunId: runId, version: restored, agentUrl: SLAVE });

    // The master's agent was asked what it runs (the new number goes past it), then got the old files under it.
    expect(calls.map((call) => [call.method, call.url])).toEqual([
      ["GET", `${AGENT}/v1/status`],
      ["PUT", `${AGENT}/v1/config`],
    ]);
    expect(calls[1].body!.version).toBe(restored);
    expect(calls[1].body!.files["domain2backend.map"]).toBe(old.files["domain2backend.map"]);
    expect(calls[1].body!.digest).toBe(old.digest);

    const active = await expectJson(callWith(withVars(), "/admin/haproxy"), 200);
    expect(active).toMatchObject({ version: restored, status: "active", restoredFrom: old.version, jobId: runId });
    expect(active.files).toEqual(old.files);
    expect(active.digest).toBe(old.digest);
    const versions = await expectJson(callWith(withVars(), "/admin/haproxy/versions"), 200);
    expect(versions.slice(0, 3).map((v: { version: number; status: string }) => [v.version, v.status])).toEqual([
      [restored, "active"],
      [newer.version, "previous"],
      [old.version, "previous"],
    ]);
    expect(await getJobRun(db(), runId)).toMatchObject({
      kind: "gensynchaprx",
      state: "succeeded",
      trigger: `api (admin): activate version ${old.version}`,
    });

    const audit = await env.DB.prepare(
      "select actor, role, method, path, status, project_label, summary from audit_log where path like '/admin/haproxy/%/activate'",
    ).all();
    expect(audit.results).toEqual([
      {
        actor: "admin",
        role: "admin",
        method: "POST",
        path: `/admin/haproxy/versions/${old.version}/activate`,
        status: 200,
        project_label: null,
        summary: JSON.stringify({ haproxyVersion: restored, restoredFrom: old.version, jobRunId: runId }),
      },
    ]);
  });

  it("answers 500 when the agent refuses it, and the version in force stays; no audit entry", async () => {
    const old = await generate();
    const newer = await generate();
    fakeAgents(() => Response.json({ error: "haproxy -c failed (exit 1): [ALERT] no" }, { status: 422 }));
    const response = await activate(agentEnv(), old.version);
    expect(await expectJson(response, 500)).toEqual(
      errorBody(
        `Unable to reload and sync of HAProxy: agent ${AGENT} refused version ${newer.version + 1} (HTTP 422): haproxy -c failed (exit 1): [ALERT] no. The previous configuration is still active.`,
      ),
    );
    expect((await expectJson(callWith(withVars(), "/admin/haproxy"), 200)).version).toBe(newer.version);
    const [rejected] = await expectJson(callWith(withVars(), "/admin/haproxy/versions"), 200);
    expect(rejected).toMatchObject({ version: newer.version + 1, status: "rejected", restoredFrom: old.version });
    const audit = await env.DB.prepare("select count(*) as n from audit_log where path = ?")
      .bind(`/admin/haproxy/versions/${old.version}/activate`)
      .first();
    expect(audit).toEqual({ n: 0 });
  });

  it("answers 404 for a version that does not exist, 423 while the lock is held, 405 on a slave, 403 to others", async () => {
    const version = (await generate()).version;
    const versions = await expectJson(callWith(withVars(), "/admin/haproxy/versions"), 200);
    for (const unknown of [version + 1, "x", "0", "1e3"]) {
      expect(await expectJson(activate(withVars(), unknown), 404)).toEqual(
        errorBody(`Invalid version: ${unknown} not existing`),
      );
    }
    await locks().acquire(CONFIG_LOCK, { holder: "someone-else", kind: "gensynchaprx", ttlMs: 60_000 });
    try {
      expect((await expectJson(activate(withVars(), version), 423)).payload).toMatch(
        /^Job is already running \(gensynchaprx since /,
      );
    } finally {
      await locks().release(CONFIG_LOCK, "someone-else");
    }
    // Nothing was stored.
    expect(await expectJson(callWith(withVars(), "/admin/haproxy/versions"), 200)).toEqual(versions);
    expect(await expectJson(activate(withVars({ INSTANCE_ROLE: "slave" }), version), 405)).toEqual(SLAVE_WRITE);
    expect((await activate(withVars(), version, apiUser)).status).toBe(403);
    expect((await activate(withVars(), version, null)).status).toBe(401);
  });
});
