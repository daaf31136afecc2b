// GET /admin/audit on a growing log: each filter's page reads an index in id order (EXPLAIN QUERY PLAN of the
// repository's own statement), never the whole log or a sort of an actor's entries; and the answers stay the same.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { listAudit, listAuditQuery, type AuditQuery } from "../../../src/proxy/audit/log";
import { database } from "../../../src/shared/db";
import { queryPlan } from "../../support/query-plans";

const db = () => database(env.DB);
const SINCE = new Date("2030-01-01T00:00:00Z");
/** The smallest id recorded since `since`, from audit_log_at_idx. */
const FIRST_SINCE = ["SCALAR SUBQUERY 1", "  SEARCH audit_log USING COVERING INDEX audit_log_at_idx (at>?)"];

const PLANS: [filters: Omit<AuditQuery, "limit">, plan: string[]][] = [
  // Without a filter the newest entries are the table's last rows: the walk stops after a page.
  [{}, ["SCAN audit_log"]],
  [{ before: 500 }, ["SEARCH audit_log USING INTEGER PRIMARY KEY (rowid<?)"]],
  [{ actor: "ci" }, ["SEARCH audit_log USING INDEX audit_log_actor_id_idx (actor=?)"]],
  [{ actor: "ci", before: 500 }, ["SEARCH audit_log USING INDEX audit_log_actor_id_idx (actor=? AND id<?)"]],
  [{ project: "p" }, ["SEARCH audit_log USING INDEX audit_log_project_id_idx (project_label=?)"]],
  [{ project: "p", before: 500 }, ["SEARCH audit_log USING INDEX audit_log_project_id_idx (project_label=? AND id<?)"]],
  [{ since: SINCE }, ["SEARCH audit_log USING INTEGER PRIMARY KEY (rowid>?)", ...FIRST_SINCE]],
  [{ since: SINCE, before: 500 }, ["SEARCH audit_log USING INTEGER PRIMARY KEY (rowid>? AND rowid<?)", ...FIRST_SINCE]],
  [
    { actor: "ci", since: SINCE, before: 500 },
    ["SEARCH audit_log USING INDEX audit_log_actor_id_idx (actor=? AND id>? AND id<?)", ...FIRST_SINCE],
  ],
  [
    { project: "p", since: SINCE },
    ["SEARCH audit_log USING INDEX audit_log_project_id_idx (project_label=? AND id>?)", ...FIRST_SINCE],
  ],
  [{ actor: "ci", project: "p" }, ["SEARCH audit_log USING INDEX audit_log_project_id_idx (project_label=?)"]],
];

describe("plans of GET /admin/audit", () => {
  for (const [filters, plan] of PLANS) {
    it(`${JSON.stringify(filters)} reads in id order through its index`, async () => {
      expect(await queryPlan(listAuditQuery(db(), { ...filters, limit: 100 }))).toEqual(plan);
    });
  }
});

/** Entries of this test's own actor, each at the given time, in this order (so with growing ids); returns the ids. */
async function record(actor: string, entries: [at: string, project: string | null][]): Promise<number[]> {
  const insert = env.DB.prepare(
    "insert into audit_log (at, actor, role, method, path, status, project_label, summary) values (?, ?, 'admin', 'POST', '/x', 200, ?, '{}') returning id",
  );
  const results = await env.DB.batch(entries.map(([at, project]) => insert.bind(Date.parse(at), actor, project)));
  return results.map((result) => (result.results[0] as { id: number }).id);
}

const idsOf = (page: { entries: { id: number }[]; nextBefore: number | null }) => ({
  ids: page.entries.map((entry) => entry.id),
  nextBefore: page.nextBefore,
});

describe("answers of GET /admin/audit", () => {
  it("since: every entry at or after it, newest id first, even one recorded before an older time", async () => {
    const actor = `since-${crypto.randomUUID()}`;
    // The first entry's time is later than the second's: times need not grow with ids.
    const ids = await record(actor, [
      ["2090-01-02T00:00:00Z", "a"],
      ["2089-12-31T00:00:00Z", "a"],
      ["2090-01-01T00:00:00Z", null],
      ["2090-01-03T00:00:00Z", "a"],
    ]);
    const since = new Date("2090-01-01T00:00:00Z");
    expect(idsOf(await listAudit(db(), { actor, since, limit: 10 }))).toEqual({
      ids: [ids[3], ids[2], ids[0]],
      nextBefore: null,
    });
    expect(idsOf(await listAudit(db(), { actor, since, limit: 2 }))).toEqual({
      ids: [ids[3], ids[2]],
      nextBefore: ids[2],
    });
    expect(idsOf(await listAudit(db(), { actor, since, before: ids[2], limit: 2 }))).toEqual({
      ids: [ids[0]],
      nextBefore: null,
    });
    // No other test records entries this late, so since alone answers this test's entries.
    expect(idsOf(await listAudit(db(), { since, limit: 10 }))).toEqual({
      ids: [ids[3], ids[2], ids[0]],
      nextBefore: null,
    });
    expect(idsOf(await listAudit(db(), { since: new Date("2091-01-01T00:00:00Z"), limit: 10 }))).toEqual({
      ids: [],
      nextBefore: null,
    });
  });

  it("actor and project: pages newest first through the cursor", async () => {
    const actor = `pages-${crypto.randomUUID()}`;
    const project = `p-${crypto.randomUUID()}`;
    const ids = await record(actor, [
      ["2031-01-01T00:00:00Z", project],
      ["2031-01-02T00:00:00Z", null],
      ["2031-01-01T00:00:00Z", project],
      ["2031-01-03T00:00:00Z", project],
      ["2031-01-04T00:00:00Z", null],
    ]);
    expect(idsOf(await listAudit(db(), { actor, limit: 2 }))).toEqual({ ids: [ids[4], ids[3]], nextBefore: ids[3] });
    expect(idsOf(await listAudit(db(), { actor, before: ids[3], limit: 2 }))).toEqual({
      ids: [ids[2], ids[1]],
      nextBefore: ids[1],
    });
    expect(idsOf(await listAudit(db(), { actor, before: ids[1], limit: 2 }))).toEqual({
      ids: [ids[0]],
      nextBefore: null,
    });
    expect(idsOf(await listAudit(db(), { project, limit: 2 }))).toEqual({ ids: [ids[3], ids[2]], nextBefore: ids[2] });
    expect(idsOf(await listAudit(db(), { project, before: ids[2], limit: 2 }))).toEqual({
      ids: [ids[0]],
      nextBefore: null,
    });
    expect(idsOf(await listAudit(db(), { actor, project, since: new Date("2031-01-02T00:00:00Z"), limit: 5 }))).toEqual(
      {
        ids: [ids[3]],
        nextBefore: null,
      },
    );
  });
});
