// The certificate maintenance: /maintenance/start, the daily cron that queues it beside the audit log's pruning, a run
// whose CA cannot be reached, and the ACME HTTP-01 challenge route that answers the CA.
import { createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it, vi } from "vitest";
import worker from "../../src/index";
import { getJobRun } from "../../src/jobs/history";
import { MAINTENANCE_LOCK } from "../../src/proxy/jobs";
import { asAdmin, errorBody, expectJson } from "../support/proxy-api";
import { deliverBatch } from "../support/jobs-queue";
import { callWith, db, locks, withVars } from "../support/proxy-job-env";
import { silenceConsoleAndRestoreMocks } from "../support/silent-console";
import { createJobsProject } from "./jobs-fixtures";

let apiUser: string;
beforeAll(async () => {
  apiUser = await createJobsProject();
});

silenceConsoleAndRestoreMocks();

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
