// The SSH proxy's versions through the Worker: the preview of the next generation (exact diff, nothing stored), an
// older version activated again as a new one (restoredFrom, its run, the audit entry), 404 and 423.
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { createJobRun, getJobRun } from "../../../src/jobs/history";
import { CONFIG_LOCK } from "../../../src/proxy/jobs";
import { writeSshProxyConfiguration } from "../../../src/proxy/sshproxy/versions";
import { asAdmin, errorBody, expectJson } from "../../support/proxy-api";
import { db, KEY_ANNA, KEY_BEN, locks, withVars } from "../../support/proxy-job-env";
import { silenceConsoleAndRestoreMocks } from "../../support/silent-console";
import { callWith, createOpsProject } from "./operations-helpers";

beforeAll(async () => {
  await createOpsProject();
});

silenceConsoleAndRestoreMocks();

describe("the SSH proxy: versions, preview, activate", () => {
  const files = { upstreamKeyFile: "/etc/sshpiperd/upstream_key", knownHostsFile: "/etc/sshpiperd/known_hosts" };
  // Each call is a run of its own: a run stores one version at most.
  const write = async (upstreamKeyFile = files.upstreamKeyFile) => {
    const runId = await createJobRun(db(), { kind: "writesshprx", trigger: "test" });
    const written = { ...files, upstreamKeyFile };
    return writeSshProxyConfiguration(db(), {
      runId,
      files: written,
      kept: 20,
      addressExceptions: [],
      now: new Date(),
    });
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
    const audit = await env.DB.prepare("select path, summary from audit_log where path = ?")
      .bind(`/admin/sshproxy/versions/${first.version}/activate`)
      .all();
    expect(audit.results).toEqual([
      {
        path: `/admin/sshproxy/versions/${first.version}/activate`,
        summary: JSON.stringify({ sshProxyVersion: restored, restoredFrom: first.version, jobRunId: runId }),
      },
    ]);
  });

  it("restores only what the installation still grants: a revoked grant stays revoked", async () => {
    const grant = (emails: string[]) =>
      expectJson(
        asAdmin(
          "/admin/containers/ops/web1/permissions",
          "PUT",
          emails.map((userEmail) => ({ permission: "www-data", userEmail })),
        ),
        200,
      );
    await grant(["anna@example.com", "ben@example.com"]);
    const granted = await write();
    await grant(["anna@example.com"]);
    const response = await callWith(withVars(), `/admin/sshproxy/versions/${granted.version}/activate`, {
      method: "POST",
    });
    const body = await expectJson(response, 200);
    const restored = body.payload.value;
    const cut = "WARN: ops-web1_www-data keeps only the users and keys the installation still grants (2 left out)";
    expect(body.warnings).toEqual([`INFO: SSH proxy version ${restored} restores version ${granted.version}`, cut]);
    const inForce = await expectJson(callWith(withVars(), "/admin/sshproxy"), 200);
    const old = await expectJson(callWith(withVars(), `/admin/sshproxy/versions/${granted.version}`), 200);
    const account = inForce.accounts.find((a: { name: string }) => a.name === "ops-web1_www-data");
    expect([inForce.version, account.users, account.authorizedKeys]).toEqual([
      restored,
      ["anna@example.com"],
      [KEY_ANNA],
    ]);
    expect(old.yaml).toContain(btoa(`${KEY_ANNA}\n${KEY_BEN}\n`));
    expect(inForce.yaml).not.toContain(btoa(`${KEY_ANNA}\n${KEY_BEN}\n`));
    expect(inForce.yaml).toContain(btoa(`${KEY_ANNA}\n`));
    expect(inForce.warnings.at(-1)).toBe(cut);
    expect(inForce.digest).not.toBe(old.digest);
  });

  it("restores with the current key and known_hosts files: a rollback does not undo their rotation", async () => {
    const before = await write("/etc/sshpiperd/old_key");
    await write("/etc/sshpiperd/new_key");
    const rotated = withVars({ SSH_PROXY_UPSTREAM_KEY_FILE: "/etc/sshpiperd/new_key" });
    const response = await callWith(rotated, `/admin/sshproxy/versions/${before.version}/activate`, { method: "POST" });
    const restored = (await expectJson(response, 200)).payload.value;

    const inForce = await expectJson(callWith(rotated, "/admin/sshproxy"), 200);
    const old = await expectJson(callWith(withVars(), `/admin/sshproxy/versions/${before.version}`), 200);
    expect(old.yaml).toContain("private_key: /etc/sshpiperd/old_key\n");
    expect(inForce).toEqual({
      ...old,
      version: restored,
      jobId: Number(response.headers.get("X-Job-Id")),
      restoredFrom: before.version,
      createdAt: inForce.createdAt,
      digest: inForce.digest,
      yaml: old.yaml.replaceAll("private_key: /etc/sshpiperd/old_key\n", "private_key: /etc/sshpiperd/new_key\n"),
    });
    expect(inForce.yaml).not.toContain("old_key");
    expect(inForce.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(inForce.digest).not.toBe(old.digest);
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
