// The truth about a push, through the Worker with the agents faked at the fetch edge: a push whose answer is lost is
// settled by asking the agent (applied, refused, or unknown), GET /admin/haproxy/status settles unknown versions, a
// slave's failed attempt shows at once with its next retry, and version numbers adopt what the agents run.
import { env } from "cloudflare:workers";
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { getJobRun } from "../../src/jobs/history";
import { MAX_ATTEMPTS } from "../../src/jobs/retries";
import { CONFIG_LOCK } from "../../src/proxy/jobs";
import { createApiUser, errorBody, expectJson } from "../support/proxy-api";
import { deliverBatch } from "../support/jobs-queue";
import { callWith as post } from "./routes/operations-helpers";
import { createDeployedProject } from "../support/proxy-fixtures";
import {
  AGENT,
  agentEnv,
  agents,
  callWith,
  db as database,
  locks,
  record,
  timedOut,
  withVars,
} from "../support/proxy-job-env";

const SLAVE = "http://slave-outcome.test:9400";
/** Settles the unknown versions other tests left (the agent dropped them all), so that a test starts without any. */
async function settleLeftovers() {
  agents({
    abandon: () => record("abandoned", null, "given up by the control plane before its reload"),
    status: () => Response.json({ version: null, digest: null, diskDigest: null, appliedAt: null, lastError: null }),
  });
  const statuses = await expectJson(callWith(agentEnv(), "/admin/haproxy/status"), 200);
  expect(statuses[0].unknownVersions).toEqual([]);
  vi.mocked(globalThis.fetch).mockRestore();
}

const versions = async () => expectJson(callWith(withVars(), "/admin/haproxy/versions"), 200);
const activeVersion = async () => (await expectJson(callWith(withVars(), "/admin/haproxy"), 200)).version as number;

let tenantAuth: string;
beforeAll(async () => {
  await createDeployedProject("outcome");
  tenantAuth = await createApiUser("outcometenant", ["outcome"]);
});

beforeEach(() => {
  vi.spyOn(console, "log").mockImplementation(() => {});
  vi.spyOn(console, "error").mockImplementation(() => {});
});

afterEach(() => {
  vi.restoreAllMocks();
});

describe("a master push whose answer is lost", () => {
  it("asks the agent; dropped before its reload, the version is rejected and the previous one stays", async () => {
    await expectJson(callWith(withVars(), "/admin/gensynchaprx"), 200);
    const before = await activeVersion();
    const seen = agents({
      push: () => {
        throw timedOut();
      },
      abandon: () =>
        record("abandoned", before + 1, `version ${before + 1} was not applied: the control plane went away`),
    });
    const response = await callWith(agentEnv(), "/admin/gensynchaprx");
    const cause =
      `agent ${AGENT} is unreachable: no answer within 60000 ms; asked, it dropped version ${before + 1} before ` +
      `reloading: version ${before + 1} was not applied: the control plane went away`;
    expect(await expectJson(response, 500)).toEqual(
      errorBody(`Unable to reload and sync of HAProxy: ${cause}. The previous configuration is still active.`),
    );
    const push = seen.find((call) => call.method === "PUT")!;
    expect(push.body).toMatchObject({ version: before + 1, timeoutMs: 60_000, onlyIfNewer: true });
    expect(push.body.pushId).toMatch(new RegExp(`^v${before + 1}-\\d+$`));
    expect(seen.map((call) => [call.method, call.url])).toEqual([
      ["POST", `${AGENT}/v1/check`],
      ["PUT", `${AGENT}/v1/config`],
      ["POST", `${AGENT}/v1/pushes/${push.body.pushId}/abandon`],
    ]);
    expect(await activeVersion()).toBe(before);
    expect((await versions())[0]).toMatchObject({ version: before + 1, status: "rejected", error: cause });
  });

  it("asks the agent; applied after all, the version is the one in force and the run succeeds", async () => {
    const seen = agents({
      push: () => {
        throw new TypeError("Network connection lost.");
      },
      abandon: (call) => record("applied", Number(/pushes\/v(\d+)-/.exec(call.url)![1])),
    });
    const response = await callWith(agentEnv(), "/admin/gensynchaprx");
    expect(await expectJson(response, 200)).toEqual([]);
    const pushed = seen.find((call) => call.method === "PUT")!.body.version;
    expect(await activeVersion()).toBe(pushed);
  });

  it("asks the agent when a proxy in front of it answers 502, 503 or 504 for it", async () => {
    for (const status of [502, 503, 504]) {
      const seen = agents({
        push: () => new Response("<html>Bad Gateway</html>", { status, headers: { "Content-Type": "text/html" } }),
        abandon: (call) => record("applied", Number(/pushes\/v(\d+)-/.exec(call.url)![1])),
      });
      expect(await expectJson(callWith(agentEnv(), "/admin/gensynchaprx"), 200)).toEqual([]);
      const pushed = seen.find((call) => call.method === "PUT")!;
      expect(seen.map((call) => call.method)).toEqual(["POST", "PUT", "POST"]);
      expect(seen[2].url).toBe(`${AGENT}/v1/pushes/${pushed.body.pushId}/abandon`);
      expect(await activeVersion()).toBe(pushed.body.version);
      vi.mocked(globalThis.fetch).mockRestore();
    }
  });

  it("records unknown when the agent cannot tell; the status poll settles it as applied and queues the slaves", async () => {
    await settleLeftovers();
    const sendBatch = vi.spyOn(env.JOBS, "sendBatch").mockResolvedValue(undefined as never);
    await expectJson(callWith(withVars(), "/admin/gensynchaprx"), 200);
    const before = await activeVersion();
    const version = before + 1;
    agents({
      push: () => {
        throw timedOut();
      },
      abandon: () => {
        throw timedOut();
      },
    });
    const withSlave = agentEnv({ SLAVE_AGENT_URLS: SLAVE });
    const response = await callWith(withSlave, "/admin/gensynchaprx");
    const runId = Number(response.headers.get("X-Job-Id"));
    const cause =
      `agent ${AGENT} is unreachable: no answer within 60000 ms; asked what became of version ${version}: agent ` +
      `${AGENT} is unreachable: no answer within 10000 ms: whether it took the version is unknown`;
    const outcome =
      "Whether the load balancer took it is unknown until GET /admin/haproxy/status reads the agent again.";
    expect(await expectJson(response, 500)).toEqual(
      errorBody(
        `Unable to reload and sync of HAProxy: ${cause}. Version ${version} is recorded as unknown. ${outcome}`,
      ),
    );
    expect((await versions())[0]).toMatchObject({ version, status: "unknown", error: cause });
    expect(await activeVersion()).toBe(before);
    expect(sendBatch).not.toHaveBeenCalled();

    // The agent is still silent: the status shows the version as unknown and changes nothing.
    const silent = await expectJson(callWith(withSlave, "/admin/haproxy/status"), 200);
    expect(silent[0]).toMatchObject({ role: "master", state: "unreachable", unknownVersions: [version], sync: null });
    expect((await versions())[0]).toMatchObject({ version, status: "unknown" });

    // It answers: it applied the version. The status settles it, makes it the one in force and queues the slave.
    vi.mocked(globalThis.fetch).mockRestore();
    const settled = agents({
      abandon: () => record("applied", version),
      status: () =>
        Response.json({ version, digest: "sha256:x", diskDigest: "sha256:x", appliedAt: null, lastError: null }),
    });
    const statuses = await expectJson(callWith(withSlave, "/admin/haproxy/status"), 200);
    expect(statuses[0]).toMatchObject({ role: "master", expectedVersion: version, unknownVersions: [] });
    expect(settled.filter((call) => call.method === "POST").map((call) => call.url)).toEqual([
      expect.stringMatching(new RegExp(`^${AGENT}/v1/pushes/v${version}-\\d+/abandon$`)),
    ]);
    expect((await versions())[0]).toMatchObject({ version, status: "active" });
    expect((await versions())[0].error ?? null).toBeNull();
    expect(sendBatch).toHaveBeenCalledTimes(1);
    const [message] = [...sendBatch.mock.calls[0][0]].map((sent) => sent.body as { runId: number });
    expect(message).toEqual({
      kind: "haproxy-slave-sync",
      parentRunId: runId,
      version,
      agentUrl: SLAVE,
      runId: expect.any(Number),
    });
    expect((await getJobRun(database(), runId))!.warnings).toEqual([
      `INFO: version ${version} was settled as applied: it is the version in force`,
      `INFO: sync of version ${version} to slave ${SLAVE} queued as job ${message.runId}`,
    ]);
  });

  it("the status poll settles an unknown version the agent dropped as rejected", async () => {
    await settleLeftovers();
    await expectJson(callWith(withVars(), "/admin/gensynchaprx"), 200);
    const before = await activeVersion();
    agents({
      push: () => {
        throw timedOut();
      },
      abandon: () => new Response("not found", { status: 404 }),
    });
    await expectJson(callWith(agentEnv(), "/admin/gensynchaprx"), 500);
    expect((await versions())[0]).toMatchObject({ version: before + 1, status: "unknown" });
    vi.mocked(globalThis.fetch).mockRestore();
    agents({
      abandon: () => record("abandoned", null, "given up by the control plane before its reload"),
      status: () =>
        Response.json({ version: before, digest: null, diskDigest: null, appliedAt: null, lastError: null }),
    });
    const statuses = await expectJson(callWith(agentEnv(), "/admin/haproxy/status"), 200);
    expect(statuses[0].unknownVersions).toEqual([]);
    const [rejected] = await versions();
    expect(rejected).toMatchObject({ version: before + 1, status: "rejected" });
    expect(rejected.error).toMatch(
      new RegExp(
        `; settled later: it dropped version ${before + 1} before reloading: given up by the control plane before its reload$`,
      ),
    );
    expect(await activeVersion()).toBe(before);
  });

  it("the status poll leaves unknown versions alone while a run holds the lock, and on a slave instance", async () => {
    await settleLeftovers();
    agents({
      push: () => {
        throw timedOut();
      },
      abandon: () => {
        throw timedOut();
      },
    });
    await expectJson(callWith(agentEnv(), "/admin/gensynchaprx"), 500);
    const [unknown] = await versions();
    expect(unknown).toMatchObject({ status: "unknown" });
    vi.mocked(globalThis.fetch).mockRestore();
    const seen = agents({
      abandon: () => record("applied", unknown.version),
      status: () => Response.json({ version: null, digest: null, diskDigest: null, appliedAt: null, lastError: null }),
    });
    await locks().acquire(CONFIG_LOCK, { holder: "someone-else", kind: "gensynchaprx", ttlMs: 60_000 });
    try {
      const statuses = await expectJson(callWith(agentEnv(), "/admin/haproxy/status"), 200);
      expect(statuses[0].unknownVersions).toEqual([unknown.version]);
    } finally {
      await locks().release(CONFIG_LOCK, "someone-else");
    }
    const onSlave = await expectJson(callWith(agentEnv({ INSTANCE_ROLE: "slave" }), "/admin/haproxy/status"), 200);
    expect(onSlave[0].unknownVersions).toEqual([unknown.version]);
    expect(seen.map((call) => call.method)).toEqual(["GET", "GET"]);
    expect((await versions())[0]).toMatchObject({ version: unknown.version, status: "unknown" });
  });

  it("a refusal the agent answers is not asked about again", async () => {
    const seen = agents({ push: () => Response.json({ error: "reload failed (exit 1): no" }, { status: 500 }) });
    await expectJson(callWith(agentEnv(), "/admin/gensynchaprx"), 500);
    expect(seen.map((call) => call.method)).toEqual(["POST", "PUT"]);
    expect((await versions())[0]).toMatchObject({ status: "rejected" });
  });

  it("a haproxy -c the agent could not finish in time is no refusal, at the check or the push", async () => {
    const unfinished = (error: string) => Response.json({ error, checkTimedOut: true }, { status: 504 });
    const atCheck = agents({ check: () => unfinished("haproxy -c did not finish within 25000 ms") });
    const response = await callWith(agentEnv(), "/admin/gensynchaprx", tenantAuth);
    const runId = Number(response.headers.get("X-Job-Id"));
    expect(await expectJson(response, 500)).toEqual(
      errorBody(
        "Unable to reload and sync of HAProxy: the load balancer could not check the configuration in time " +
          `(job run ${runId}; an administrator can read GET /admin/jobs/${runId}). The previous configuration is ` +
          "still active.",
      ),
    );
    expect(atCheck.map((call) => call.method)).toEqual(["POST"]);
    vi.mocked(globalThis.fetch).mockRestore();

    // A version of its own in force, whichever tests ran before.
    await expectJson(callWith(withVars(), "/admin/gensynchaprx"), 200);
    const before = await activeVersion();
    // Numbered past every stored version, the check's rejected candidate and other tests' included.
    const next = (await versions())[0].version + 1;
    const notApplied = `version ${next} was not applied: haproxy -c did not finish within 25000 ms`;
    const atPush = agents({ push: () => unfinished(notApplied) });
    expect(await expectJson(callWith(agentEnv(), "/admin/gensynchaprx"), 500)).toEqual(
      errorBody(
        `Unable to reload and sync of HAProxy: agent ${AGENT} could not check version ${next} (HTTP 504): ` +
          `${notApplied}. The previous configuration is still active.`,
      ),
    );
    // The agent answered: it is not asked what became of the push.
    expect(atPush.map((call) => call.method)).toEqual(["POST", "PUT"]);
    expect((await versions())[0]).toMatchObject({ version: next, status: "rejected" });
    expect(await activeVersion()).toBe(before);
  });

  it("a reload the agent could not finish in time is no refusal: unknown, settled by the status poll", async () => {
    await settleLeftovers();
    await expectJson(callWith(withVars(), "/admin/gensynchaprx"), 200);
    const before = await activeVersion();
    const version = before + 1;
    const timedOutReload =
      `the reload of version ${version} did not finish within 25000 ms and was killed: its files are in place, ` +
      "and whether HAProxy runs them is unknown until a later reload";
    const pushed = agents({
      push: () => Response.json({ error: timedOutReload, reloadTimedOut: true }, { status: 504 }),
    });
    const cause = `agent ${AGENT} could not tell whether HAProxy took version ${version} (HTTP 504): ${timedOutReload}`;
    expect(await expectJson(callWith(agentEnv(), "/admin/gensynchaprx"), 500)).toEqual(
      errorBody(
        `Unable to reload and sync of HAProxy: ${cause}. Version ${version} is recorded as unknown. ` +
          "Whether the load balancer took it is unknown until GET /admin/haproxy/status reads the agent again.",
      ),
    );
    // The agent answered: it is not asked what became of the push.
    expect(pushed.map((call) => call.method)).toEqual(["POST", "PUT"]);
    expect((await versions())[0]).toMatchObject({ version, status: "unknown", error: cause });
    expect(await activeVersion()).toBe(before);

    // A later reload took its files: the agent settled the push as applied, and the status poll makes it active.
    vi.mocked(globalThis.fetch).mockRestore();
    agents({
      abandon: () => record("applied", version),
      status: () =>
        Response.json({ version, digest: "sha256:x", diskDigest: "sha256:x", appliedAt: null, lastError: null }),
    });
    const statuses = await expectJson(callWith(agentEnv(), "/admin/haproxy/status"), 200);
    expect(statuses[0]).toMatchObject({ expectedVersion: version, unknownVersions: [] });
    expect((await versions())[0]).toMatchObject({ version, status: "active" });
  });

  it("a tenant is told the outcome is unknown, without the agent's words", async () => {
    agents({
      push: () => {
        throw timedOut();
      },
      abandon: () => {
        throw timedOut();
      },
    });
    const response = await callWith(agentEnv(), "/admin/gensynchaprx", tenantAuth);
    const runId = Number(response.headers.get("X-Job-Id"));
    expect(await expectJson(response, 500)).toEqual(
      errorBody(
        "Unable to reload and sync of HAProxy: the load balancer did not answer in time and could not tell what it " +
          `did (job run ${runId}; an administrator can read GET /admin/jobs/${runId}). Whether the load balancer ` +
          "took it is unknown until GET /admin/haproxy/status reads the agent again.",
      ),
    );
  });
});

describe("slave syncs: failures at once, numbers that never go backwards", () => {
  async function queuedSync() {
    const sendBatch = vi.spyOn(env.JOBS, "sendBatch").mockResolvedValue(undefined as never);
    agents({ push: (call) => Response.json({ outcome: "applied", version: call.body.version }) });
    const response = await callWith(agentEnv({ SLAVE_AGENT_URLS: SLAVE }), "/admin/gensynchaprx");
    await expectJson(response, 200);
    const [body] = [...sendBatch.mock.calls[0][0]].map((message) => message.body as { runId: number; version: number });
    vi.restoreAllMocks();
    return { parentRunId: Number(response.headers.get("X-Job-Id")), body };
  }

  it("shows the first failed attempt on the parent run and the status, with the next retry; then the last", async () => {
    const { parentRunId, body } = await queuedSync();
    agents({
      push: () => {
        throw new TypeError("connection refused");
      },
      abandon: () => {
        throw new TypeError("connection refused");
      },
      status: () => {
        throw new TypeError("connection refused");
      },
    });
    const startedAt = Date.now();
    await deliverBatch([{ id: "first", attempts: 1, body }], agentEnv({ SLAVE_AGENT_URLS: SLAVE }));
    const cause =
      `agent ${SLAVE} is unreachable: connection refused; asked what became of version ${body.version}: agent ` +
      `${SLAVE} is unreachable: connection refused: whether it took the version is unknown`;
    const warnings = (await getJobRun(database(), parentRunId))!.warnings;
    const warning = warnings.at(-1)!;
    expect(
      warning.startsWith(
        `WARN: slave ${SLAVE} could not be synced to version ${body.version} (attempt 1 of ${MAX_ATTEMPTS}): ${cause}; next attempt at `,
      ),
    ).toBe(true);
    const nextAt = Date.parse(warning.slice(warning.lastIndexOf(" ") + 1));
    expect(nextAt - startedAt).toBeGreaterThanOrEqual(30_000);
    expect(nextAt - Date.now()).toBeLessThanOrEqual(30_000);

    const statuses = await expectJson(callWith(agentEnv({ SLAVE_AGENT_URLS: SLAVE }), "/admin/haproxy/status"), 200);
    expect(statuses[1]).toMatchObject({
      role: "slave",
      agentUrl: SLAVE,
      state: "unreachable",
      unknownVersions: [],
      sync: {
        version: body.version,
        state: "retrying",
        attempts: 1,
        error: cause,
        nextRetryAt: new Date(nextAt).toISOString(),
        at: expect.stringMatching(/^\d{4}-/),
      },
    });

    await deliverBatch([{ id: "last", attempts: MAX_ATTEMPTS, body }], agentEnv({ SLAVE_AGENT_URLS: SLAVE }));
    const last = await expectJson(callWith(agentEnv({ SLAVE_AGENT_URLS: SLAVE }), "/admin/haproxy/status"), 200);
    expect(last[1].sync).toMatchObject({ state: "failed", attempts: MAX_ATTEMPTS, error: cause, nextRetryAt: null });
    expect((await getJobRun(database(), parentRunId))!.warnings.at(-1)).toBe(
      `WARN: slave ${SLAVE} could not be synced to version ${body.version} after ${MAX_ATTEMPTS} attempts: ${cause}`,
    );
  });

  it("numbers the next version past what the master's check says it runs", async () => {
    await expectJson(callWith(withVars(), "/admin/gensynchaprx"), 200);
    const before = await activeVersion();
    const runs = before + 500;
    agents({
      check: () => Response.json({ valid: true, version: runs }),
      push: (call) => Response.json({ outcome: "applied", version: call.body.version }),
    });
    await expectJson(callWith(agentEnv(), "/admin/gensynchaprx"), 200);
    expect(await activeVersion()).toBe(runs + 1);
  });

  it("numbers the next version past what a slave said it runs (after a D1 reset)", async () => {
    const { parentRunId, body } = await queuedSync();
    const runs = body.version + 700;
    agents({ push: () => Response.json({ error: "newer", version: runs }, { status: 409 }) });
    await deliverBatch([{ id: "stale", attempts: 1, body }], agentEnv({ SLAVE_AGENT_URLS: SLAVE }));
    expect((await getJobRun(database(), parentRunId))!.warnings.slice(-2)).toEqual([
      `INFO: slave ${SLAVE} not synced to version ${body.version}: it already runs version ${runs}`,
      `WARN: slave ${SLAVE} runs version ${runs}, higher than any stored here (was D1 reset?): the next gensynchaprx numbers its version past it`,
    ]);
    vi.restoreAllMocks();
    agents({ push: (call) => Response.json({ outcome: "applied", version: call.body.version }) });
    await expectJson(callWith(agentEnv(), "/admin/gensynchaprx"), 200);
    expect(await activeVersion()).toBe(runs + 1);
  });

  it("numbers a restored version past what a slave said it runs, as a generated one", async () => {
    const { body } = await queuedSync();
    const runs = body.version + 900;
    agents({ push: () => Response.json({ error: "newer", version: runs }, { status: 409 }) });
    await deliverBatch([{ id: "stale-restore", attempts: 1, body }], agentEnv({ SLAVE_AGENT_URLS: SLAVE }));
    vi.restoreAllMocks();
    agents({ push: (call) => Response.json({ outcome: "applied", version: call.body.version }) });
    const restore = await post(agentEnv(), `/admin/haproxy/versions/${body.version}/activate`, { method: "POST" });
    expect((await expectJson(restore, 200)).payload).toEqual({ key: "version", value: runs + 1 });
    expect((await versions())[0]).toMatchObject({ version: runs + 1, status: "active", restoredFrom: body.version });
  });

  it("numbers a restored version past what the master says it runs", async () => {
    await expectJson(callWith(withVars(), "/admin/gensynchaprx"), 200);
    const restored = await activeVersion();
    const runs = restored + 1100;
    agents({
      status: () => Response.json({ version: runs }),
      push: (call) => Response.json({ outcome: "applied", version: call.body.version }),
    });
    const restore = await post(agentEnv(), `/admin/haproxy/versions/${restored}/activate`, { method: "POST" });
    expect((await expectJson(restore, 200)).payload).toEqual({ key: "version", value: runs + 1 });
  });
});
