// The audit log: what tenant and administrator writes record (exact fields, never secrets), what refused writes and dry
// runs do not, GET /admin/audit (who may read it, filters, pages) and the daily pruning in bounded batches.
import { createExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import worker from "../../../src/index";
import { pruneAudit } from "../../../src/proxy/audit/log";
import { auditPruneJob, MAINTENANCE_LOCK } from "../../../src/proxy/jobs";
import { ProxySettings } from "../../../src/proxy/settings";
import { database } from "../../../src/shared/db";
import providedCertificate from "../fixtures/provided-rsa.cert.pem?raw";
import providedKey from "../fixtures/provided-rsa.key.pem?raw";
import {
  ADMIN_AUTH,
  as,
  asAdmin,
  basic,
  call,
  callJson,
  createApiUser,
  createBackend,
  createHost,
  createProject,
  errorBody,
  expectJson,
} from "../../support/proxy-api";

const KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGF1ZGl0= audit@laptop";
const DAY_MS = 86_400_000;

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
  await createProject("au");
  await createProject("au2");
  await createHost("au-host.example", "2001:db8::c0");
  await createBackend("au", { label: "api" });
  await createBackend("au2", { label: "web", domainForwardings: [{ domainName: "two.au.example" }] });
  tenant = await createApiUser("aut", ["au", "au2"]);
  const rows = (await env.DB.prepare("select id, label from projects").all<{ id: number; label: string }>()).results;
  projectIds = Object.fromEntries(rows.map((row) => [row.label, row.id]));
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
    ["a project the tenant cannot see", () => as(tenant, "/backends/other", "POST", { label: "x1" }), 404],
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

describe("GET /admin/audit", () => {
  it("answers 401 without credentials and 403 to a tenant, even one matching every project", async () => {
    const anonymous = await call("/admin/audit");
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get("WWW-Authenticate")).toBe('Basic realm="proxy"');
    const everything = await createApiUser("aueverything", [".*"]);
    expect(await expectJson(as(everything, "/admin/audit"), 403)).toEqual(errorBody("Administrator access required"));
    expect(await expectJson(as(tenant, "/admin/audit?project=au"), 403)).toEqual(
      errorBody("Administrator access required"),
    );
  });

  describe("filters and pages", () => {
    let ids: number[];
    const t0 = Date.parse("2030-01-01T00:00:00Z");
    // Entries with known times, written as the repository writes them.
    const insert = () =>
      env.DB.prepare(
        "insert into audit_log (at, actor, role, method, path, status, project_label, summary) values (?, ?, ?, 'POST', ?, 200, ?, '{}') returning id",
      );
    beforeAll(async () => {
      ids = [];
      for (const [offset, actor, project] of [
        [0, "pager", "pa"],
        [1, "pager", "pb"],
        [2, "other", "pa"],
        [3, "pager", null],
        [4, "pager", "pa"],
      ] as const) {
        const row = await insert()
          .bind(t0 + offset * 60_000, actor, actor === "other" ? "admin" : "tenant", `/p/${offset}`, project)
          .first<{ id: number }>();
        ids.push(row!.id);
      }
    });

    const idsOf = (page: { entries: { id: number }[] }) => page.entries.map((entry) => entry.id);

    it("lists newest first, each entry in full", async () => {
      const page = await expectJson(asAdmin("/admin/audit?actor=pager&limit=1"), 200);
      expect(page).toEqual({
        entries: [
          {
            id: ids[4],
            at: "2030-01-01T00:04:00.000Z",
            actor: "pager",
            role: "tenant",
            method: "POST",
            path: "/p/4",
            status: 200,
            projectLabel: "pa",
            summary: {},
          },
        ],
        nextBefore: ids[4],
      });
    });

    it("filters by actor, project and since, combined", async () => {
      expect(idsOf(await expectJson(asAdmin("/admin/audit?actor=pager"), 200))).toEqual([
        ids[4],
        ids[3],
        ids[1],
        ids[0],
      ]);
      expect(idsOf(await expectJson(asAdmin("/admin/audit?project=pa"), 200))).toEqual([ids[4], ids[2], ids[0]]);
      expect(idsOf(await expectJson(asAdmin("/admin/audit?actor=pager&project=pa"), 200))).toEqual([ids[4], ids[0]]);
      const since = encodeURIComponent("2030-01-01T01:02:00+01:00");
      expect(idsOf(await expectJson(asAdmin(`/admin/audit?since=${since}&project=pa`), 200))).toEqual([ids[4], ids[2]]);
    });

    it("pages with limit and the cursor before, the last page without nextBefore", async () => {
      const first = await expectJson(asAdmin("/admin/audit?actor=pager&limit=2"), 200);
      expect(idsOf(first)).toEqual([ids[4], ids[3]]);
      expect(first.nextBefore).toBe(ids[3]);
      const second = await expectJson(asAdmin(`/admin/audit?actor=pager&limit=2&before=${first.nextBefore}`), 200);
      expect(idsOf(second)).toEqual([ids[1], ids[0]]);
      expect(second.nextBefore).toBeUndefined();
      expect(await expectJson(asAdmin(`/admin/audit?actor=pager&before=${ids[0]}`), 200)).toEqual({ entries: [] });
      const exact = await expectJson(asAdmin(`/admin/audit?actor=pager&limit=4`), 200);
      expect(idsOf(exact)).toHaveLength(4);
      expect(exact.nextBefore).toBeUndefined();
    });

    it("defaults to 100 entries per page", async () => {
      const page = await expectJson(asAdmin("/admin/audit"), 200);
      expect(page.entries.length).toBeLessThanOrEqual(100);
      expect(page.entries[0].id).toBe(Math.max(...page.entries.map((entry: { id: number }) => entry.id)));
      // One entry more than a page, so that only the default limit can cut it at 100.
      const seeded = await env.DB.batch(
        Array.from({ length: 101 }, (_, i) => insert().bind(t0 + i * 1000, "hundred", "tenant", `/h/${i}`, null)),
      );
      const hundredIds = seeded.map((result) => (result.results[0] as { id: number }).id).reverse();
      const full = await expectJson(asAdmin("/admin/audit?actor=hundred"), 200);
      expect(idsOf(full)).toEqual(hundredIds.slice(0, 100));
      expect(full.nextBefore).toBe(hundredIds[99]);
      expect((await expectJson(asAdmin("/admin/audit"), 200)).entries).toHaveLength(100);
    });

    for (const [query, message] of [
      ["limit=501", "limit: Too big: expected number to be <=500"],
      ["limit=0", "limit: Too small: expected number to be >=1"],
      ["since=yesterday", "since: Invalid ISO datetime"],
      ["since=1700000000000", "since: Invalid ISO datetime"],
      ["before=abc", "before: Invalid input: expected number, received NaN"],
    ]) {
      it(`answers 400 to ${query}`, async () => {
        expect(await expectJson(asAdmin(`/admin/audit?${query}`), 400)).toEqual(errorBody(message));
      });
    }
  });
});

describe("pruning", () => {
  const db = () => database(env.DB);
  async function oldEntries(count: number, at: number) {
    for (let i = 0; i < count; i++) {
      await env.DB.prepare(
        "insert into audit_log (at, actor, role, method, path, status, summary) values (?, 'old', 'admin', 'POST', '/x', 200, '{}')",
      )
        .bind(at)
        .run();
    }
  }
  const count = async (actor: string) =>
    (await env.DB.prepare("select count(*) as n from audit_log where actor = ?").bind(actor).first<{ n: number }>())!.n;

  it("removes entries older than the retention in bounded batches, the rest at the next run", async () => {
    // Every other entry of this file is newer than these.
    const now = Date.now();
    await oldEntries(5, now - 10 * DAY_MS);
    await env.DB.prepare(
      "insert into audit_log (at, actor, role, method, path, status, summary) values (?, 'recent', 'admin', 'POST', '/x', 200, '{}')",
    )
      .bind(now - 2 * DAY_MS)
      .run();
    const before = new Date(now - 5 * DAY_MS);
    expect(await pruneAudit(db(), { before, batchSize: 2, maxBatches: 2 })).toEqual({ removed: 4, more: true });
    expect(await count("old")).toBe(1);
    expect(await pruneAudit(db(), { before, batchSize: 2, maxBatches: 2 })).toEqual({ removed: 1, more: false });
    expect(await count("old")).toBe(0);
    expect(await count("recent")).toBe(1);
  });

  it("the daily job keeps PROXY_AUDIT_RETENTION_DAYS (90 by default) and says what it removed", async () => {
    const now = new Date();
    await oldEntries(3, now.getTime() - 91 * DAY_MS);
    await oldEntries(2, now.getTime() - 89 * DAY_MS);
    const message = { kind: auditPruneJob.kind, runId: 1 };
    const context = { attempts: 1, lastAttempt: false };
    expect(await auditPruneJob.run(env, message, now, context)).toEqual({
      warnings: ["INFO: removed 3 audit entries older than 90 days"],
    });
    expect(await count("old")).toBe(2);
    const shorter = { ...env, PROXY_AUDIT_RETENTION_DAYS: "30" } as unknown as Env;
    expect(await auditPruneJob.run(shorter, message, now, context)).toEqual({
      warnings: ["INFO: removed 2 audit entries older than 30 days"],
    });
    expect(await count("old")).toBe(0);
  });

  it("bounds the retention to 1..3650 days", () => {
    const parse = (value: string) => ProxySettings.shape.PROXY_AUDIT_RETENTION_DAYS.safeParse(value);
    expect(parse("").data).toBe(90);
    expect(parse("3650").data).toBe(3650);
    expect(parse("0").success).toBe(false);
    expect(parse("3651").success).toBe(false);
    expect(parse("1.5").success).toBe(false);
  });
});
