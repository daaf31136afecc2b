// The slave agents' sync rows in the Workers runtime with D1: a row follows the newest version synced to its agent,
// and a late sync of an older version (a retry delivered after a newer version's sync) leaves it alone.
import { env } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createJobRun, getJobRun } from "../../../src/jobs/history";
import { agentSyncs, recordAgentSync } from "../../../src/proxy/haproxy/agent-syncs";
import { deliverBatch } from "../../support/jobs-queue";
import { agentEnv, db } from "../../support/proxy-job-env";

beforeEach(() => {
  vi.spyOn(console, "log").mockImplementation(() => {});
  vi.spyOn(console, "error").mockImplementation(() => {});
});
afterEach(() => vi.restoreAllMocks());

const SLAVE = "http://slave-rows.test:9400";
/** Versions no test stores: none of them is the active one. */
const V = 900_000;
const error = `agent ${SLAVE} could not be reached`;

describe("a slave agent's sync row", () => {
  it("keeps the newer version's sync when an older version's late sync reports, and follows a newer one", async () => {
    const parent = await createJobRun(db(), { kind: "gensynchaprx", trigger: "test" });
    const nextRetryAt = new Date(Date.now() + 60_000);
    const now = new Date();
    const retrying = { agentUrl: SLAVE, version: V + 7, state: "retrying" as const, attempts: 2, parentRunId: parent };
    await recordAgentSync(db(), { ...retrying, error, nextRetryAt, agentVersion: null, now });
    const before = (await agentSyncs(db())).get(SLAVE);
    expect(before).toMatchObject({ ...retrying, error, nextRetryAt, agentVersion: null });

    // Version V + 6 is not the active one: its late retry is superseded, reported on its run, and leaves the row alone.
    const runId = await createJobRun(db(), { kind: "haproxy-slave-sync", trigger: "test" });
    const body = { kind: "haproxy-slave-sync", runId, parentRunId: parent, version: V + 6, agentUrl: SLAVE };
    const late = await deliverBatch([{ id: "late", attempts: 3, body }], agentEnv({ SLAVE_AGENT_URLS: SLAVE }));
    expect(late.result.explicitAcks).toEqual(["late"]);
    expect((await getJobRun(db(), parent))!.warnings).toEqual([
      `INFO: slave ${SLAVE} not synced to version ${V + 6}: it is no longer the active version`,
    ]);
    expect((await agentSyncs(db())).get(SLAVE)).toEqual(before);

    const later = new Date(now.getTime() + 1_000);
    const synced = { ...retrying, state: "synced" as const, attempts: 3, error: null, nextRetryAt: null };
    await recordAgentSync(db(), { ...synced, agentVersion: V + 7, now: later });
    expect((await agentSyncs(db())).get(SLAVE)).toEqual({ ...synced, agentVersion: V + 7, updatedAt: later });
    await recordAgentSync(db(), { ...synced, version: V + 8, attempts: 1, agentVersion: V + 8, now: later });
    expect((await agentSyncs(db())).get(SLAVE)).toMatchObject({ version: V + 8, attempts: 1, agentVersion: V + 8 });
  });
});
