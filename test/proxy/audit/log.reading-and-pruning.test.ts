// Reading and pruning the audit log: GET /admin/audit (the administrator only, filters, pages and their limits) and the
// daily pruning in bounded batches under PROXY_AUDIT_RETENTION_DAYS.
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { pruneAudit, pruneAuditLog } from "../../../src/proxy/audit/log";
import { auditPruneJob } from "../../../src/proxy/jobs";
import { ProxySettings } from "../../../src/proxy/settings";
import { database } from "../../../src/shared/db";
import { as, asAdmin, call, errorBody, expectJson } from "../../support/proxy-api";
import { CHALLENGE, createMatchingAllUser, FORBIDDEN } from "../routes/refusals-fixtures";
import { createAuditProjects } from "./log-fixtures";

const DAY_MS = 86_400_000;

let tenant: string;
beforeAll(async () => {
  ({ tenant } = await createAuditProjects());
});

describe("GET /admin/audit", () => {
  it("answers 401 without credentials and 403 to a tenant, even one matching every project", async () => {
    const anonymous = await call("/admin/audit");
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get("WWW-Authenticate")).toBe(CHALLENGE);
    const everything = await createMatchingAllUser("aueverything");
    expect(await expectJson(as(everything, "/admin/audit"), 403)).toEqual(FORBIDDEN);
    expect(await expectJson(as(tenant, "/admin/audit?project=au"), 403)).toEqual(FORBIDDEN);
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
      ["limit=99999999999999999999", "limit: Too big: expected number to be <=500"],
      ["limit=-99999999999999999999", "limit: Too small: expected number to be >=1"],
      ["limit=0", "limit: Too small: expected number to be >=1"],
      ["since=yesterday", "since: Invalid ISO datetime"],
      ["since=1700000000000", "since: Invalid ISO datetime"],
      ["before=abc", "before: Invalid input: expected number, received NaN"],
      ["before=0", "before: Too small: expected number to be >=1"],
      ["before=1.5", "before: Invalid input: expected int, received number"],
      ["before=99999999999999999999", "before: Too big: expected number to be <=9007199254740991"],
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

  it("warns when a run stops at its cap of 50,000 entries, older ones left for the next run", async () => {
    const now = new Date();
    await env.DB.prepare(
      `insert into audit_log (at, actor, role, method, path, status, summary)
       with recursive n(i) as (select 1 union all select i + 1 from n where i < 50001)
       select ?, 'capped', 'admin', 'POST', '/x', 200, '{}' from n`,
    )
      .bind(now.getTime() - 91 * DAY_MS)
      .run();
    expect(await pruneAuditLog(db(), { now, days: 90 })).toEqual([
      "WARN: removed 50000 audit entries older than 90 days, the most a run removes; older ones remain, the next run goes on",
    ]);
    expect(await count("capped")).toBe(1);
    expect(await pruneAuditLog(db(), { now, days: 90 })).toEqual(["INFO: removed 1 audit entries older than 90 days"]);
    expect(await count("capped")).toBe(0);
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
