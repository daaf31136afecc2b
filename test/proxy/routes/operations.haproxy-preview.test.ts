// GET /admin/haproxy/preview, agents answered by a stand-in for outbound fetch: the exact diff against the version in
// force, the agent's check, the problems gensynchaprx then warns of, 422 and who may read it; nothing is stored.
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it, onTestFinished, vi } from "vitest";
import { errorBody, expectJson } from "../../support/proxy-api";
import { AGENT_FILES } from "../../support/proxy-fixtures";
import { AGENT, agentEnv, withVars } from "../../support/proxy-job-env";
import { silenceConsoleAndRestoreMocks } from "../../support/silent-console";
import {
  callWith,
  createOpsProject,
  fakeAgents,
  forgetGenerations,
  generate,
  massUpdate,
  removeDomain,
} from "./operations-helpers";

let apiUser: string;
let wwwFqLabel: string;
beforeAll(async () => {
  ({ apiUser, wwwFqLabel } = await createOpsProject());
});

silenceConsoleAndRestoreMocks();

const OLD_REDIRECT = "https://www.ops.example/*";
const setRedirect = (url: string) =>
  massUpdate({ operation: "UPDATE", domainName: "old.ops.example", backendLabel: "permredirect", redirectToUrl: url });

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

  it("lists the backends left out for their params, and the servers or certificates skipped", async () => {
    await givePreviewProblems();
    const preview = await expectJson(callWith(withVars(), "/admin/haproxy/preview"), 200);
    const paramsMessage = `backend ${wwwFqLabel} is left out: params line 1 refused (${preview.problems[0].message.match(/\((.*)\)/)[1]}); its domains answer 503`;
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
      `WARN: backend ${wwwFqLabel} is left out: params line 1 refused ${refused}; its domains answer 503`,
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
