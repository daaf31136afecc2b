// What the audit log records: tenant and administrator writes with their exact fields and never a secret, one entry
// per project a mass update changed, jobs started; and nothing for refused writes and dry runs.
import { createExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import worker from "../../../src/index";
import { MAINTENANCE_LOCK } from "../../../src/proxy/jobs";
import providedCertificate from "../fixtures/provided-rsa.cert.pem?raw";
import providedKey from "../fixtures/provided-rsa.key.pem?raw";
import {
  ADMIN_AUTH,
  as,
  asAdmin,
  basic,
  call,
  callJson,
  createBackend,
  createProject,
  expectJson,
} from "../../support/proxy-api";
import { createAuditProjects } from "./log-fixtures";

const KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGF1ZGl0= audit@laptop";

let tenant: string;
let projectIds: Record<string, number>;

const auditRows = async () => (await env.DB.prepare("select count(*) as n from audit_log").first<{ n: number }>())!.n;
const lastId = async () =>
  (await env.DB.prepare("select coalesce(max(id), 0) as id from audit_log").first<{ id: number }>())!.id;

/** Entries recorded after `afterId`, oldest first, as the API shows them. */
async function entriesAfter(afterId: number) {
  const page = await expectJson(asAdmin("/admin/audit?limit=500"), 200);
  return page.entries.filter((entry: { id: number }) => entry.id > afterId).reverse();
}

/** Runs the request and expects it to have recorded exactly the returned entries. */
async function recorded(request: () => Response | Promise<Response>, status = 200) {
  const before = await lastId();
  const start = Date.now();
  const response = await request();
  expect(response.status).toBe(status);
  const entries = await entriesAfter(before);
  for (const entry of entries) {
    expect(Date.parse(entry.at)).toBeGreaterThanOrEqual(start);
    expect(Date.parse(entry.at)).toBeLessThanOrEqual(Date.now());
  }
  return entries.map(({ id, at, ...rest }: { id: number; at: string }) => rest);
}

beforeAll(async () => {
  ({ tenant, projectIds } = await createAuditProjects());
});

afterEach(() => {
  vi.restoreAllMocks();
});

describe("accepted writes", () => {
  it("records a tenant's write: actor, role, method, path, status, project and what changed", async () => {
    const entries = await recorded(() =>
      as(tenant, "/backends/au", "POST", { label: "web", domainForwardings: [{ domainName: "a.au.example" }] }),
    );
    const backendId = (await env.DB.prepare("select id from backends where label = 'web' and project_id = ?")
      .bind(projectIds.au)
      .first<{ id: number }>())!.id;
    expect(entries).toEqual([
      {
        actor: "aut",
        role: "tenant",
        method: "POST",
        path: "/backends/au",
        status: 200,
        projectLabel: "au",
        summary: {
          action: "create",
          backendLabel: "web",
          backendId,
          fields: [],
          domains: { added: ["a.au.example"], removed: [] },
        },
      },
    ]);
  });

  it("records an administrator's write, naming the user and its patterns but never the password or its hash", async () => {
    const entries = await recorded(() =>
      asAdmin("/admin/apiusers", "POST", {
        username: "au-bot",
        password: "very-secret-password",
        projectPatterns: ["au"],
      }),
    );
    expect(entries).toEqual([
      {
        actor: "admin",
        role: "admin",
        method: "POST",
        path: "/admin/apiusers",
        status: 200,
        summary: { action: "create", username: "au-bot", projectPatterns: ["au"] },
      },
    ]);
    const hash = (await env.DB.prepare("select password_hash from api_users where username = 'au-bot'").first<{
      password_hash: string;
    }>())!.password_hash;
    const log = JSON.stringify((await env.DB.prepare("select * from audit_log").all()).results);
    expect(log).not.toContain("very-secret-password");
    expect(log).not.toContain(hash);
  });

  it("names the fields of a user it changed, never the SSH key", async () => {
    const entries = await recorded(() =>
      asAdmin("/admin/users", "POST", { email: "key@au.example", sshPublicKey: KEY, role: "USER" }),
    );
    const userId = (await env.DB.prepare("select id from users where email = 'key@au.example'").first<{
      id: number;
    }>())!.id;
    expect(entries).toEqual([
      {
        actor: "admin",
        role: "admin",
        method: "POST",
        path: "/admin/users",
        status: 200,
        summary: { action: "create", email: "key@au.example", userId, fields: ["sshPublicKey", "role"] },
      },
    ]);
    expect(JSON.stringify((await env.DB.prepare("select * from audit_log").all()).results)).not.toContain("AAAAC3");
  });

  it("records a certificate upload by name and details, never the key", async () => {
    const entries = await recorded(() =>
      asAdmin("/admin/certificates/au-cert", "PUT", {
        certificatePem: providedCertificate,
        privateKeyPem: providedKey,
      }),
    );
    expect(entries).toEqual([
      {
        actor: "admin",
        role: "admin",
        method: "PUT",
        path: "/admin/certificates/au-cert",
        status: 200,
        summary: {
          name: "au-cert",
          domainNames: ["www.example.org", "*.shop.example.org"],
          serialNumber: expect.any(String),
          notAfter: "2126-10-29T01:23:58.000Z",
        },
      },
    ]);
    expect(JSON.stringify((await env.DB.prepare("select * from audit_log").all()).results)).not.toContain("PRIVATE");
  });

  it("records a mass update once per project it changed, with that project's changes", async () => {
    // The domain it deletes is its own, not the one the tenant's-write test creates.
    await createBackend("au", { label: "mass", domainForwardings: [{ domainName: "m.au.example" }] });
    const entries = await recorded(() =>
      as(tenant, "/domains/massupdate", "POST", {
        domainOperations: [
          { operation: "CREATE", domainName: "b.au.example", projectLabel: "au", backendLabel: "api" },
          { operation: "UPDATE", domainName: "two.au.example", projectLabel: "au", backendLabel: "api" },
          { operation: "DELETE", domainName: "m.au.example", projectLabel: "au", backendLabel: "mass" },
        ],
      }),
    );
    const entry = { actor: "aut", role: "tenant", method: "POST", path: "/domains/massupdate", status: 200 };
    expect(entries).toEqual([
      {
        ...entry,
        projectLabel: "au",
        summary: {
          fullSync: false,
          operations: 3,
          created: ["b.au.example"],
          movedIn: ["two.au.example"],
          deleted: ["m.au.example"],
        },
      },
      { ...entry, projectLabel: "au2", summary: { fullSync: false, operations: 0, movedOut: ["two.au.example"] } },
    ]);
  });

  it("records the deletion of a project under its label", async () => {
    await createProject("audel");
    const entries = await recorded(() => asAdmin("/admin/projects/audel", "DELETE"));
    expect(entries).toEqual([
      {
        actor: "admin",
        role: "admin",
        method: "DELETE",
        path: "/admin/projects/audel",
        status: 200,
        projectLabel: "audel",
        summary: { projectId: expect.any(Number) },
      },
    ]);
  });

  it("records a job a tenant started, with its kind and run", async () => {
    const send = vi.spyOn(env.JOBS, "send").mockResolvedValue(undefined as never);
    const entries = await recorded(() =>
      worker.fetch(
        new Request("http://example.com/maintenance/start", { headers: { Authorization: tenant } }),
        env,
        createExecutionContext(),
      ),
    );
    const message = send.mock.calls[0][0] as { runId: number; lockHolder: string };
    expect(entries).toEqual([
      {
        actor: "aut",
        role: "tenant",
        method: "GET",
        path: "/maintenance/start",
        status: 200,
        summary: { kind: "certificates", runId: message.runId },
      },
    ]);
    await env.JOB_LOCK.get(env.JOB_LOCK.idFromName("proxy-jobs")).release(MAINTENANCE_LOCK, message.lockHolder);
  });
});

describe("refused writes and dry runs", () => {
  const slave = { ...env, INSTANCE_ROLE: "slave" } as unknown as Env;
  for (const [what, request, status] of [
    ["no credentials", () => callJson("/backends/au", "POST", { label: "x1" }), 401],
    ["a wrong password", () => as(basic("aut", "wrong-password"), "/backends/au", "POST", { label: "x1" }), 401],
    ["a tenant on an administrator's route", () => as(tenant, "/admin/projects", "POST", { label: "x1" }), 403],
    ["a body failing the schema", () => as(tenant, "/backends/au", "POST", { label: "X" }), 400],
    ["a project the tenant cannot see", () => as(tenant, "/backends/other", "POST", { label: "x1" }), 500],
    [
      "a stale If-Match",
      () =>
        call("/backends/au", {
          method: "POST",
          headers: { Authorization: tenant, "If-Match": `"p${projectIds.au}.r0"` },
          body: JSON.stringify({ label: "x1" }),
        }),
      412,
    ],
    [
      "a change that cannot be processed",
      () => as(tenant, "/backends/au", "POST", { label: "x1", backendContainers: [{ containerId: 999 }] }),
      500,
    ],
    [
      "an address in use",
      async () => {
        await expectJson(
          as(tenant, "/containers/au", "POST", { label: "c1", hostname: "au-host.example", ipv6: "2001:db8::c1" }),
          200,
        );
        return as(tenant, "/containers/au", "POST", { label: "c2", hostname: "au-host.example", ipv6: "2001:db8::c1" });
      },
      409,
    ],
    ["a dry run", () => as(tenant, "/backends/au?dryRun=true", "POST", { label: "x1" }), 200],
    ["an administrator's dry run", () => asAdmin("/admin/projects/au?dryRun=true", "DELETE"), 200],
    [
      "a write on a slave",
      () =>
        worker.fetch(
          new Request("http://example.com/admin/projects", {
            method: "POST",
            headers: { Authorization: ADMIN_AUTH },
            body: JSON.stringify({ label: "x1" }),
          }),
          slave,
          createExecutionContext(),
        ),
      405,
    ],
  ] as const) {
    it(`records nothing for ${what} (${status})`, async () => {
      const before = await auditRows();
      const setupRows = what === "an address in use" ? 1 : 0;
      expect((await request()).status).toBe(status);
      expect(await auditRows()).toBe(before + setupRows);
    });
  }
});
