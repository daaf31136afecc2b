// What the administrator watches, agents answered by a stand-in for outbound fetch: each load balancer's state in
// GET /admin/haproxy/status (in sync, edited by hand, outdated, unreachable, no agent) and the metrics page (exact
// text, its bearer token and who else may read it).
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it, vi } from "vitest";
import providedCertificate from "../fixtures/provided-rsa.cert.pem?raw";
import providedKey from "../fixtures/provided-rsa.key.pem?raw";
import { ADMIN_AUTH, asAdmin, errorBody, expectJson } from "../../support/proxy-api";
import { AGENT, agentEnv, withVars } from "../../support/proxy-job-env";
import { silenceConsoleAndRestoreMocks } from "../../support/silent-console";
import {
  applied,
  callWith,
  createOpsProject,
  fakeAgents,
  forgetGenerations,
  generate,
  SLAVE,
} from "./operations-helpers";
import { CHALLENGE, FORBIDDEN, REALM } from "./refusals-fixtures";

const METRICS_TOKEN = "test-metrics-token";
/** The last lines of every metrics page here: the counts of the one project this file builds. */
const INVENTORY_METRICS = [
  "# HELP proxy_projects Projects.",
  "# TYPE proxy_projects gauge",
  "proxy_projects 1",
  "# HELP proxy_domains Domains of every project.",
  "# TYPE proxy_domains gauge",
  "proxy_domains 3",
  "# HELP proxy_containers Containers of every project.",
  "# TYPE proxy_containers gauge",
  "proxy_containers 2",
  "",
];

/** What an agent answers to GET /v1/status. */
const agentState = (state: Partial<Record<string, unknown>>) =>
  Response.json({ version: null, digest: null, appliedAt: null, diskDigest: null, lastError: null, ...state });

let apiUser: string;
beforeAll(async () => {
  ({ apiUser } = await createOpsProject());
});

silenceConsoleAndRestoreMocks();

describe("GET /admin/haproxy/status", () => {
  it("says so when no agent is configured", async () => {
    const version = (await generate()).version;
    expect(await expectJson(callWith(withVars(), "/admin/haproxy/status"), 200)).toEqual([
      {
        role: "master",
        agentUrl: null,
        state: "not-configured",
        inSync: false,
        version: null,
        digest: null,
        expectedVersion: version,
        expectedDigest: expect.stringMatching(/^sha256:/),
        lastAppliedAt: null,
        lastError: "HAPROXY_AGENT_URL is not set: no agent to ask",
        lastErrorAt: null,
        unknownVersions: [],
        sync: null,
      },
    ]);
  });

  it("tells each load balancer's state: in sync, edited by hand, running another version, unreachable", async () => {
    fakeAgents(applied);
    const active = await generate(agentEnv());
    const SLAVE_2 = "http://slave-2.test:9400";
    const SLAVE_3 = "http://slave-3.test:9400";
    const calls = fakeAgents((call) => {
      if (call.url.startsWith(AGENT))
        return agentState({
          version: active.version,
          digest: active.digest,
          diskDigest: active.digest,
          appliedAt: "2030-01-01T00:00:00.000Z",
        });
      if (call.url.startsWith(SLAVE))
        return agentState({
          version: active.version,
          digest: active.digest,
          diskDigest: "sha256:edited",
          appliedAt: "2030-01-01T00:00:01.000Z",
        });
      if (call.url.startsWith(SLAVE_2))
        return agentState({
          version: active.version - 1,
          digest: "sha256:old",
          diskDigest: "sha256:old",
          appliedAt: "2029-12-31T00:00:00.000Z",
          lastError: { at: "2030-01-01T00:00:02.000Z", version: active.version, message: "reload failed (exit 1)" },
        });
      throw new TypeError("connection refused");
    });
    const statuses = await expectJson(
      callWith(agentEnv({ SLAVE_AGENT_URLS: `${SLAVE} ${SLAVE_2} ${SLAVE_3}` }), "/admin/haproxy/status"),
      200,
    );
    const expected = { expectedVersion: active.version, expectedDigest: active.digest };
    expect(statuses).toEqual([
      {
        role: "master",
        agentUrl: AGENT,
        state: "in-sync",
        inSync: true,
        version: active.version,
        digest: active.digest,
        ...expected,
        lastAppliedAt: "2030-01-01T00:00:00.000Z",
        lastError: null,
        lastErrorAt: null,
        unknownVersions: [],
        sync: null,
      },
      {
        role: "slave",
        agentUrl: SLAVE,
        state: "modified",
        inSync: false,
        version: active.version,
        digest: "sha256:edited",
        ...expected,
        lastAppliedAt: "2030-01-01T00:00:01.000Z",
        lastError: null,
        lastErrorAt: null,
        unknownVersions: [],
        sync: null,
      },
      {
        role: "slave",
        agentUrl: SLAVE_2,
        state: "outdated",
        inSync: false,
        version: active.version - 1,
        digest: "sha256:old",
        ...expected,
        lastAppliedAt: "2029-12-31T00:00:00.000Z",
        lastError: "reload failed (exit 1)",
        lastErrorAt: "2030-01-01T00:00:02.000Z",
        unknownVersions: [],
        sync: null,
      },
      {
        role: "slave",
        agentUrl: SLAVE_3,
        state: "unreachable",
        inSync: false,
        version: null,
        digest: null,
        ...expected,
        lastAppliedAt: null,
        lastError: `agent ${SLAVE_3} is unreachable: connection refused`,
        lastErrorAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        unknownVersions: [],
        sync: null,
      },
    ]);
    expect(calls.map((call) => [call.method, call.url, call.authorization])).toEqual(
      [AGENT, SLAVE, SLAVE_2, SLAVE_3].map((url) => ["GET", `${url}/v1/status`, "Bearer agent-token"]),
    );
  });

  it("is for the administrator only", async () => {
    expect((await callWith(withVars(), "/admin/haproxy/status", { auth: apiUser })).status).toBe(403);
  });
});

describe("GET /admin/metrics", () => {
  const T0 = Date.parse("2030-01-01T00:00:00Z");
  const seconds = (ms: number) => ms / 1000;

  it("answers exactly the known state", async () => {
    await forgetGenerations();
    vi.useFakeTimers({ toFake: ["Date"], now: T0 });
    await expectJson(
      asAdmin("/admin/certificates/example-org", "PUT", {
        certificatePem: providedCertificate,
        privateKeyPem: providedKey,
      }),
      200,
    );
    fakeAgents(applied);
    const active = await generate(agentEnv());
    const failedAt = T0 - 3_600_000;
    await env.DB.prepare(
      "insert into job_runs (kind, trigger, state, attempts, created_at, started_at, ended_at, error) values ('certificates', 'test', 'failed', 3, ?1, ?1, ?1, 'down')",
    )
      .bind(failedAt)
      .run();
    vi.setSystemTime(T0 + 90_000);
    vi.mocked(globalThis.fetch).mockImplementation(async (input) => {
      if (String(input).startsWith(AGENT))
        return agentState({ version: active.version, digest: active.digest, diskDigest: active.digest });
      throw new TypeError("connection refused");
    });

    const response = await callWith(
      agentEnv({ SLAVE_AGENT_URLS: SLAVE, PROXY_METRICS_TOKEN: METRICS_TOKEN }),
      "/admin/metrics",
      { auth: `Bearer ${METRICS_TOKEN}` },
    );
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
    expect(await response.text()).toBe(
      [
        "# HELP proxy_certificate_not_after_timestamp_seconds When each stored certificate ends (Unix time).",
        "# TYPE proxy_certificate_not_after_timestamp_seconds gauge",
        `proxy_certificate_not_after_timestamp_seconds{name="example-org",source="provided"} ${seconds(Date.parse("2126-10-29T01:23:58Z"))}`,
        `proxy_certificate_not_after_timestamp_seconds{name="fallback",source="fallback"} ${seconds(T0) + 3650 * 86400}`,
        "# HELP proxy_haproxy_version_in_force The number of the HAProxy version in force (GET /admin/haproxy).",
        "# TYPE proxy_haproxy_version_in_force gauge",
        `proxy_haproxy_version_in_force ${active.version}`,
        "# HELP proxy_haproxy_last_apply_timestamp_seconds When the HAProxy version in force was applied (Unix time).",
        "# TYPE proxy_haproxy_last_apply_timestamp_seconds gauge",
        `proxy_haproxy_last_apply_timestamp_seconds ${seconds(T0)}`,
        "# HELP proxy_haproxy_seconds_since_last_apply Seconds since the HAProxy version in force was applied.",
        "# TYPE proxy_haproxy_seconds_since_last_apply gauge",
        "proxy_haproxy_seconds_since_last_apply 90",
        "# HELP proxy_job_last_success_timestamp_seconds When a run of the job kind last succeeded (Unix time).",
        "# TYPE proxy_job_last_success_timestamp_seconds gauge",
        `proxy_job_last_success_timestamp_seconds{kind="gensynchaprx"} ${seconds(T0)}`,
        "# HELP proxy_job_last_failure_timestamp_seconds When a run of the job kind last failed (Unix time).",
        "# TYPE proxy_job_last_failure_timestamp_seconds gauge",
        `proxy_job_last_failure_timestamp_seconds{kind="certificates"} ${seconds(failedAt)}`,
        "# HELP proxy_haproxy_load_balancer_up 1 when the load balancer's agent answered GET /v1/status.",
        "# TYPE proxy_haproxy_load_balancer_up gauge",
        `proxy_haproxy_load_balancer_up{agent="${AGENT}",role="master"} 1`,
        `proxy_haproxy_load_balancer_up{agent="${SLAVE}",role="slave"} 0`,
        "# HELP proxy_haproxy_load_balancer_in_sync 1 when the files on the load balancer's disk are the HAProxy version in force, 0 when they drifted.",
        "# TYPE proxy_haproxy_load_balancer_in_sync gauge",
        `proxy_haproxy_load_balancer_in_sync{agent="${AGENT}",role="master"} 1`,
        `proxy_haproxy_load_balancer_in_sync{agent="${SLAVE}",role="slave"} 0`,
        ...INVENTORY_METRICS,
      ].join("\n"),
    );
  });

  it("leaves out what does not exist yet", async () => {
    await forgetGenerations();
    expect(await (await callWith(withVars(), "/admin/metrics")).text()).toBe(INVENTORY_METRICS.join("\n"));
  });

  it("takes the administrator or the PROXY_METRICS_TOKEN bearer; 401 and 403 for anyone else", async () => {
    const configured = withVars({ PROXY_METRICS_TOKEN: METRICS_TOKEN });
    const get = (auth: string | null, workerEnv = configured) => callWith(workerEnv, "/admin/metrics", { auth });
    expect((await get(ADMIN_AUTH)).status).toBe(200);
    expect((await get(`Bearer ${METRICS_TOKEN}`)).status).toBe(200);
    const refused = await get(`Bearer ${METRICS_TOKEN}x`);
    expect(await expectJson(refused, 401)).toEqual(
      errorBody("Authentication required: the PROXY_METRICS_TOKEN bearer or the administrator's credentials"),
    );
    expect(refused.headers.get("WWW-Authenticate")).toBe(`${CHALLENGE}, Bearer realm="${REALM}"`);
    // Without a configured token no bearer is accepted.
    expect((await get(`Bearer ${METRICS_TOKEN}`, withVars())).status).toBe(401);
    expect((await get(null)).status).toBe(401);
    expect(await expectJson(get(apiUser), 403)).toEqual(FORBIDDEN);
    // The token reads the metrics and nothing else.
    expect((await callWith(configured, "/admin/haproxy/status", { auth: `Bearer ${METRICS_TOKEN}` })).status).toBe(401);
  });
});
