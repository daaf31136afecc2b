// A slave sync's report is one write: its sync row and the parent run's warning are stored together or not at all,
// so GET /admin/haproxy/status never shows an outcome that the run's warnings do not.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createJobRun, getJobRun } from "../../../src/jobs/history";
import { reportUnsentSyncs, syncSlave } from "../../../src/proxy/haproxy/slave-sync";
import { agentEnv, db } from "../../support/proxy-job-env";

const syncRowOf = (agentUrl: string) =>
  env.DB.prepare("select version, state from haproxy_agent_syncs where agent_url = ?").bind(agentUrl).first();

/** Runs `write` while D1 refuses to change the run's warnings, then lets it again: answers whether it was refused. */
async function withWarningsRefused(runId: number, write: () => Promise<unknown>) {
  const trigger = `refuse_warnings_of_run_${runId}`;
  await env.DB.exec(
    `create trigger ${trigger} before update of warnings on job_runs when new.id = ${runId} ` +
      `begin select raise(abort, 'warnings refused'); end`,
  );
  try {
    // drizzle wraps the error of a single statement, and leaves a batch's alone.
    return await write().then(
      () => "written",
      (error: Error) =>
        `${error.message} ${(error.cause as Error | undefined)?.message}`.includes("warnings refused")
          ? "refused"
          : error.message,
    );
  } finally {
    await env.DB.exec(`drop trigger ${trigger}`);
  }
}

describe("slave sync reports", () => {
  it("write no sync row when the warning of a refused send cannot be written", async () => {
    const parentRunId = await createJobRun(db(), { kind: "gensynchaprx", trigger: "test: unsent report" });
    const agentUrls = ["http://report-unsent-1.test:9400", "http://report-unsent-2.test:9400"];
    const report = { parentRunId, version: 41, agentUrls, unsent: [new Date()], cause: "queue unavailable" };

    const outcome = await withWarningsRefused(parentRunId, () => reportUnsentSyncs(db(), report));

    expect(outcome).toBe("refused");
    expect(await Promise.all(agentUrls.map(syncRowOf))).toEqual([null, null]);
    expect((await getJobRun(db(), parentRunId))!.warnings).toEqual([]);
    // Once D1 takes writes again, the same report writes both.
    const warning = await reportUnsentSyncs(db(), report);
    expect(await Promise.all(agentUrls.map(syncRowOf))).toEqual([
      { version: 41, state: "retrying" },
      { version: 41, state: "retrying" },
    ]);
    expect((await getJobRun(db(), parentRunId))!.warnings).toEqual([warning]);
  });

  it("write no sync row when the warning of an attempt cannot be written", async () => {
    const parentRunId = await createJobRun(db(), { kind: "gensynchaprx", trigger: "test: attempt report" });
    const agentUrl = "http://report-attempt.test:9400";
    // No such version: the attempt is superseded without a push, and that outcome is reported.
    const sync = { parentRunId, version: 2_000_000_001, agentUrl, attempts: 1, lastAttempt: false };

    const outcome = await withWarningsRefused(parentRunId, () => syncSlave(agentEnv(), sync));

    expect(outcome).toBe("refused");
    expect(await syncRowOf(agentUrl)).toBeNull();
    expect((await getJobRun(db(), parentRunId))!.warnings).toEqual([]);
    expect(await syncSlave(agentEnv(), sync)).toEqual({
      warnings: [`INFO: slave ${agentUrl} not synced to version 2000000001: it is no longer the active version`],
    });
    expect(await syncRowOf(agentUrl)).toEqual({ version: 2_000_000_001, state: "superseded" });
  });
});
