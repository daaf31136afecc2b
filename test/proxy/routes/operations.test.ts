// The "operations" routes in the Workers runtime, agents answered by a stand-in for outbound fetch: the previews
// (exact diffs, the agent's check, the problems, nothing stored), rollback of HAProxy and SSH proxy versions (new
// version, restoredFrom, lock, 404, audit entry), the load balancers' status (in sync, edited by hand, unreachable,
// no agent) and the metrics page (exact text, its bearer token and who else may read it).
import { createExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, beforeAll, beforeEach, describe, expect, it, onTestFinished, vi } from "vitest";
import worker from "../../../src/index";
import { createJobRun, getJobRun } from "../../../src/jobs/history";
import { CONFIG_LOCK } from "../../../src/proxy/jobs";
import { writeSshProxyConfiguration } from "../../../src/proxy/sshproxy/versions";
import providedCertificate from "../fixtures/provided-rsa.cert.pem?raw";
import providedKey from "../fixtures/provided-rsa.key.pem?raw";
import { ADMIN_AUTH, asAdmin, createApiUser, errorBody, expectJson } from "../../support/proxy-api";
import { AGENT_FILES, createDeployedProject } from "../../support/proxy-fixtures";
import { AGENT, agentEnv, db, KEY_ANNA, KEY_BEN, locks, withVars } from "../../support/proxy-job-env";

const SLAVE = "http://slave-1.test:9400";
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

async function callWith(
  workerEnv: Env,
  path: string,
  options: { auth?: string | null; method?: string } = {},
): Promise<Response> {
  const auth = options.auth === undefined ? ADMIN_AUTH : options.auth;
  const headers: Record<string, string> = auth ? { Authorization: auth } : {};
  return worker.fetch(
    new Request(`http://example.com${path}`, { method: options.method ?? "GET", headers }),
    workerEnv,
    createExecutionContext(),
  );
}

interface AgentCall {
  url: string;
  method: string;
  authorization: string | null;
  body?: { version?: number; digest: string; files: Record<string, string> };
}

/** Answers outbound fetches as the agents would; records each call. */
function fakeAgents(answer: (call: AgentCall) => Response | Promise<Response>) {
  const calls: AgentCall[] = [];
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const request = new Request(input as RequestInfo, init as RequestInit);
    const text = await request.text();
    const call: AgentCall = {
      url: request.url,
      method: request.method,
      authorization: request.headers.get("Authorization"),
      body: text ? JSON.parse(text) : undefined,
    };
    calls.push(call);
    return answer(call);
  });
  return calls;
}

/** An agent that accepts every check (POST /v1/check) and applies every push. */
const applied = (call: AgentCall) =>
  Response.json(call.url.endsWith("/v1/check") ? { valid: true } : { outcome: "applied", version: 1 });

/** What an agent answers to GET /v1/status. */
const agentState = (state: Partial<Record<string, unknown>>) =>
  Response.json({ version: null, digest: null, appliedAt: null, diskDigest: null, lastError: null, ...state });

let apiUser: string;
let wwwFqLabel: string;
beforeAll(async () => {
  await createDeployedProject("ops");
  await expectJson(
    asAdmin("/admin/containers/ops/web1/permissions", "PUT", [
      { permission: "www-data", userEmail: "anna@example.com" },
    ]),
    200,
  );
  apiUser = await createApiUser("opsuser", ["ops"]);
  wwwFqLabel = (await expectJson(asAdmin("/projects/ops"), 200)).backends.find(
    (backend: { label: string }) => backend.label === "www",
  ).FQLabel;
});

beforeEach(() => {
  vi.spyOn(console, "log").mockImplementation(() => {});
  vi.spyOn(console, "error").mockImplementation(() => {});
});

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

const generate = async (workerEnv = withVars()) => {
  const response = await callWith(workerEnv, "/admin/gensynchaprx");
  await expectJson(response, 200);
  return (await expectJson(callWith(withVars(), "/admin/haproxy"), 200)) as {
    version: number;
    digest: string;
    files: Record<string, string>;
  };
};

const massUpdate = (operation: Record<string, unknown>) =>
  expectJson(
    asAdmin("/domains/massupdate", "POST", { domainOperations: [{ projectLabel: "ops", ...operation }] }),
    200,
  );

/**
 * Storage is shared by the tests of a file: each puts back what it changed in the installation, and those that need
 * a clean slate (no version, no certificate, no run) make it with this.
 */
async function forgetGenerations() {
  await env.DB.batch(
    ["haproxy_version_files", "haproxy_versions", "certificates", "job_runs"].map((table) =>
      env.DB.prepare(`delete from ${table}`),
    ),
  );
}

const OLD_REDIRECT = "https://www.ops.example/*";
const setRedirect = (url: string) =>
  massUpdate({ operation: "UPDATE", domainName: "old.ops.example", backendLabel: "permredirect", redirectToUrl: url });
const removeDomain = (domainName: string) => massUpdate({ operation: "DELETE", domainName, backendLabel: "www" });

/**
 * Gives www params the API would refuse (written past it) and asks for a public CA certificate for shop.ops.example,
 * which none covers: the two problems a preview lists. Undone when the test finishes.
 */
async function givePreviewProblems() {
  await env.DB.prepare("update backends set params = 'bogus-directive on' where label = 'www'").run();
  await massUpdate({ operation: "UPDATE", domainName: "shop.ops.example", backendLabel: "www", enableSSL: true });
  onTestFinished(async () => {
    await env.DB.prepare("update backends set params = null where label = 'www'").run();
    await env.DB.prepare("update domains set public_ca_certificate = 0 where domain_name = 'shop.ops.example'").run();
  });
}

describe("GET /admin/haproxy/preview", () => {
  it("shows exactly a changed domain as a diff against the version in force, and stores nothing", async () => {
    const inForce = await generate();
    await setRedirect("https://shop.ops.example/*");
    onTestFinished(() => setRedirect(OLD_REDIRECT));
    const versions = await expectJson(callWith(withVars(), "/admin/haproxy/versions"), 200);

    const preview = await expectJson(callWith(withVars(), "/admin/haproxy/preview"), 200);
    expect(preview.diff).toBe(
      [
        "--- a/domain2prefix.map",
        "+++ b/domain2prefix.map",
        "@@ -1,2 +1,2 @@",
        " # host name -> redirect prefix (generated, DO NOT EDIT)",
        "-old.ops.example https://www.ops.example",
        "+old.ops.example https://shop.ops.example",
        "",
      ].join("\n"),
    );
    expect(preview).toMatchObject({
      version: inForce.version,
      changed: true,
      valid: null,
      validation: "HAPROXY_AGENT_URL is not set: no agent checked the bundle",
      problems: [],
      warnings: [],
      certificates: [{ file: "fallback.pem", name: "fallback" }],
    });
    expect(preview.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(preview.files).toEqual({
      ...inForce.files,
      "domain2prefix.map":
        "# host name -> redirect prefix (generated, DO NOT EDIT)\nold.ops.example https://shop.ops.example\n",
    });
    // Nothing stored: the versions are those of before.
    expect(await expectJson(callWith(withVars(), "/admin/haproxy/versions"), 200)).toEqual(versions);

    // What gensynchaprx then stores is what the preview showed.
    const next = await generate();
    expect(next.files).toEqual(preview.files);
    expect(next.digest).toBe(preview.digest);
    const none = await expectJson(callWith(withVars(), "/admin/haproxy/preview"), 200);
    expect(none).toMatchObject({ version: next.version, changed: false, diff: "" });
  });

  it("shows a new domain in the map, and against no version in force every file as new", async () => {
    await forgetGenerations();
    const first = await expectJson(callWith(withVars(), "/admin/haproxy/preview"), 200);
    expect(first.version).toBeNull();
    expect(first.diff).toContain("--- /dev/null\n+++ b/haproxy.cfg\n@@ -0,0 +1,");
    expect(first.diff).toContain(
      "--- /dev/null\n+++ b/crt-list.txt\n@@ -0,0 +1 @@\n+# certificate file, then the host names it is offered for (generated, DO NOT EDIT)\n",
    );
    expect(first.diff.match(/^--- \/dev\/null$/gm)).toHaveLength(6);

    await generate();
    await massUpdate({ operation: "CREATE", domainName: "new.ops.example", backendLabel: "www" });
    onTestFinished(() => removeDomain("new.ops.example"));
    const preview = await expectJson(callWith(withVars(), "/admin/haproxy/preview"), 200);
    expect(preview.diff).toBe(
      [
        "--- a/domain2backend.map",
        "+++ b/domain2backend.map",
        "@@ -2,5 +2,6 @@",
        " # ops: permredirect",
        " old.ops.example permprefix",
        " # ops: www",
        `+new.ops.example ${wwwFqLabel}`,
        ` shop.ops.example ${wwwFqLabel}`,
        ` www.ops.example ${wwwFqLabel}`,
        "",
      ].join("\n"),
    );
  });

  it("has the master agent check the bundle without applying it", async () => {
    await forgetGenerations();
    const calls = fakeAgents(() => Response.json({ valid: true }));
    const preview = await expectJson(callWith(agentEnv(), "/admin/haproxy/preview"), 200);
    expect(preview).toMatchObject({ valid: true, validation: null });
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ url: `${AGENT}/v1/check`, method: "POST", authorization: "Bearer agent-token" });
    expect(calls[0].body!.digest).toBe(preview.digest);
    expect(Object.keys(calls[0].body!.files).sort()).toEqual(AGENT_FILES);
    expect(calls[0].body!.files["haproxy.cfg"]).toBe(preview.files["haproxy.cfg"]);
    // The preview leaves no fallback certificate behind (gensynchaprx makes and stores it).
    expect(await expectJson(callWith(withVars(), "/admin/certificates"), 200)).toEqual([]);
  });

  it("reports haproxy's refusal, and an agent that cannot be asked, in validation", async () => {
    fakeAgents(() => Response.json({ valid: false, error: "haproxy -c failed (exit 1): [ALERT] bad" }));
    expect(await expectJson(callWith(agentEnv(), "/admin/haproxy/preview"), 200)).toMatchObject({
      valid: false,
      validation: "haproxy -c failed (exit 1): [ALERT] bad",
    });
    vi.mocked(globalThis.fetch).mockRejectedValue(new TypeError("connection refused"));
    expect(await expectJson(callWith(agentEnv(), "/admin/haproxy/preview"), 200)).toMatchObject({
      valid: null,
      validation: `agent ${AGENT} is unreachable: connection refused`,
    });
    expect(
      await expectJson(callWith(agentEnv({ HAPROXY_AGENT_TOKEN: "" }), "/admin/haproxy/preview"), 200),
    ).toMatchObject({ valid: null, validation: "HAPROXY_AGENT_TOKEN is not set: no agent checked the bundle" });
  });

  it("lists the backends whose params, servers or certificates were skipped", async () => {
    await givePreviewProblems();
    const preview = await expectJson(callWith(withVars(), "/admin/haproxy/preview"), 200);
    const paramsMessage = `backend ${wwwFqLabel}: params line 1 refused (${preview.problems[0].message.match(/\((.*)\)/)[1]}); the backend is written without its params`;
    expect(preview.problems).toEqual([
      { project: "ops", backend: "www", kind: "params", message: paramsMessage },
      {
        project: "ops",
        backend: "www",
        kind: "certificate",
        message: `shop.ops.example (backend ${wwwFqLabel}) asks for a public CA certificate, but none covers it: it is served over http only`,
      },
    ]);
    expect(preview.warnings).toEqual([`WARN: ${paramsMessage}`, `WARN: ${preview.problems[1].message}`]);
  });

  it("lists problems that gensynchaprx then warns of, to the administrator and to the project's tenant", async () => {
    await givePreviewProblems();
    const preview = await expectJson(callWith(withVars(), "/admin/haproxy/preview"), 200);
    const refused = `("bogus-directive" is not an allowed directive)`;
    const problems = [
      `WARN: backend ${wwwFqLabel}: params line 1 refused ${refused}; the backend is written without its params`,
      `WARN: shop.ops.example (backend ${wwwFqLabel}) asks for a public CA certificate, but none covers it: it is served over http only`,
    ];
    expect(preview.problems.map(({ message }: { message: string }) => `WARN: ${message}`)).toEqual(problems);

    const byAdmin = await expectJson(callWith(withVars(), "/admin/gensynchaprx"), 200);
    const { version } = await expectJson(callWith(withVars(), "/admin/haproxy"), 200);
    expect(byAdmin).toEqual([
      ...problems,
      `WARN: HAPROXY_AGENT_URL is not set: version ${version} is stored but no load balancer was updated`,
    ]);
    // The installation's own warning is not the tenant's; its project's problems are.
    expect(await expectJson(callWith(withVars(), "/admin/gensynchaprx", { auth: apiUser }), 200)).toEqual(problems);
  });

  it("answers 422 when the data cannot make a configuration", async () => {
    await env.DB.prepare("update domains set redirect_to_url = 'https://x.example/a b' where domain_name = ?")
      .bind("old.ops.example")
      .run();
    onTestFinished(() => setRedirect(OLD_REDIRECT));
    expect(await expectJson(callWith(withVars(), "/admin/haproxy/preview"), 422)).toEqual(
      errorBody("The configuration cannot be generated: old.ops.example: invalid redirect URL https://x.example/a b"),
    );
  });

  it("is for the administrator only", async () => {
    expect(await expectJson(callWith(withVars(), "/admin/haproxy/preview", { auth: apiUser }), 403)).toEqual(
      errorBody("Administrator access required"),
    );
    expect((await callWith(withVars(), "/admin/haproxy/preview", { auth: null })).status).toBe(401);
    expect((await callWith(withVars(), "/admin/sshproxy/preview", { auth: apiUser })).status).toBe(403);
  });
});

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

    // The master's agent got the old files under the new number.
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ url: `${AGENT}/v1/config`, method: "PUT" });
    expect(calls[0].body!.version).toBe(restored);
    expect(calls[0].body!.files["domain2backend.map"]).toBe(old.files["domain2backend.map"]);
    expect(calls[0].body!.digest).toBe(old.digest);

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
    expect(await expectJson(activate(withVars({ INSTANCE_ROLE: "slave" }), version), 405)).toEqual(
      errorBody("This is a slave instance: writes and jobs must go to the master instance"),
    );
    expect((await activate(withVars(), version, apiUser)).status).toBe(403);
    expect((await activate(withVars(), version, null)).status).toBe(401);
  });
});

describe("the SSH proxy: versions, preview, activate", () => {
  const files = { upstreamKeyFile: "/etc/sshpiperd/upstream_key", knownHostsFile: "/etc/sshpiperd/known_hosts" };
  // Each call is a run of its own: a run stores one version at most.
  const write = async () => {
    const runId = await createJobRun(db(), { kind: "writesshprx", trigger: "test" });
    return writeSshProxyConfiguration(db(), { runId, files, kept: 20, addressExceptions: [], now: new Date() });
  };

  it("previews the next generation against the one in force, stores nothing, and rolls back", async () => {
    const first = await write();
    const stored = await expectJson(callWith(withVars(), "/admin/sshproxy/versions"), 200);
    await expectJson(
      asAdmin("/admin/containers/ops/web1/permissions", "PUT", [
        { permission: "www-data", userEmail: "anna@example.com" },
        { permission: "www-data", userEmail: "ben@example.com" },
      ]),
      200,
    );
    onTestFinished(() =>
      expectJson(
        asAdmin("/admin/containers/ops/web1/permissions", "PUT", [
          { permission: "www-data", userEmail: "anna@example.com" },
        ]),
        200,
      ),
    );
    const preview = await expectJson(callWith(withVars(), "/admin/sshproxy/preview"), 200);
    expect(preview).toMatchObject({ version: first.version, changed: true, valid: null, problems: [] });
    expect(preview.diff).toBe(
      [
        "--- a/accounts.json",
        "+++ b/accounts.json",
        "@@ -10,10 +10,12 @@",
        '       "port": 22',
        "     },",
        '     "users": [',
        '-      "anna@example.com"',
        '+      "anna@example.com",',
        '+      "ben@example.com"',
        "     ],",
        '     "authorizedKeys": [',
        `-      "${KEY_ANNA}"`,
        `+      "${KEY_ANNA}",`,
        `+      "${KEY_BEN}"`,
        "     ]",
        "   }",
        " ]",
        "--- a/sshpiperd.yaml",
        "+++ b/sshpiperd.yaml",
        "@@ -3,7 +3,7 @@",
        " pipes:",
        "   - from:",
        "       - username: ops-web1_www-data",
        `-        authorized_keys_data: ${btoa(`${KEY_ANNA}\n`)}`,
        `+        authorized_keys_data: ${btoa(`${KEY_ANNA}\n${KEY_BEN}\n`)}`,
        "     to:",
        '       host: "[2001:db8::11]:22"',
        "       username: www-data",
        "",
      ].join("\n"),
    );
    expect(await expectJson(callWith(withVars(), "/admin/sshproxy/versions"), 200)).toEqual(stored);

    const second = await write();
    const response = await callWith(withVars(), `/admin/sshproxy/versions/${first.version}/activate`, {
      method: "POST",
    });
    const body = await expectJson(response, 200);
    const restored = second.version + 1;
    expect(body).toEqual({
      success: true,
      payload: { key: "version", value: restored },
      warnings: [`INFO: SSH proxy version ${restored} restores version ${first.version}`],
    });
    const runId = Number(response.headers.get("X-Job-Id"));
    expect(await getJobRun(db(), runId)).toMatchObject({
      kind: "writesshprx",
      state: "succeeded",
      trigger: `api (admin): activate version ${first.version}`,
    });
    const inForce = await expectJson(callWith(withVars(), "/admin/sshproxy"), 200);
    const original = await expectJson(callWith(withVars(), `/admin/sshproxy/versions/${first.version}`), 200);
    expect(inForce).toEqual({
      ...original,
      version: restored,
      jobId: runId,
      restoredFrom: first.version,
      createdAt: inForce.createdAt,
    });
    // The versions of this test: those another test wrote before are older than its first.
    expect(
      (await expectJson(callWith(withVars(), "/admin/sshproxy/versions"), 200))
        .filter((v: { version: number }) => v.version >= first.version)
        .map((v: { version: number; restoredFrom?: number }) => [v.version, v.restoredFrom]),
    ).toEqual([
      [restored, first.version],
      [second.version, undefined],
      [first.version, undefined],
    ]);
    const audit = await env.DB.prepare(
      "select path, summary from audit_log where path like '/admin/sshproxy/%/activate'",
    ).all();
    expect(audit.results).toEqual([
      {
        path: `/admin/sshproxy/versions/${first.version}/activate`,
        summary: JSON.stringify({ sshProxyVersion: restored, restoredFrom: first.version, jobRunId: runId }),
      },
    ]);
  });

  it("answers 404 for an unknown version and 423 while the lock is held", async () => {
    const { version } = await write();
    const activate = (v: number) => callWith(withVars(), `/admin/sshproxy/versions/${v}/activate`, { method: "POST" });
    expect(await expectJson(activate(version + 1), 404)).toEqual(
      errorBody(`Invalid version: ${version + 1} not existing`),
    );
    expect(await expectJson(callWith(withVars(), `/admin/sshproxy/versions/${version + 1}`), 404)).toEqual(
      errorBody(`Invalid version: ${version + 1} not existing`),
    );
    await locks().acquire(CONFIG_LOCK, { holder: "someone-else", kind: "writesshprx", ttlMs: 60_000 });
    try {
      expect((await expectJson(activate(version), 423)).payload).toMatch(
        /^Job is already running \(writesshprx since /,
      );
    } finally {
      await locks().release(CONFIG_LOCK, "someone-else");
    }
  });
});

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
    expect(refused.headers.get("WWW-Authenticate")).toBe('Basic realm="proxy", Bearer realm="proxy"');
    // Without a configured token no bearer is accepted.
    expect((await get(`Bearer ${METRICS_TOKEN}`, withVars())).status).toBe(401);
    expect((await get(null)).status).toBe(401);
    expect(await expectJson(get(apiUser), 403)).toEqual(errorBody("Administrator access required"));
    // The token reads the metrics and nothing else.
    expect((await callWith(configured, "/admin/haproxy/status", { auth: `Bearer ${METRICS_TOKEN}` })).status).toBe(401);
  });
});
