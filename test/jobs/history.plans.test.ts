// The job lists (GET /admin/jobs, GET /news/jobs) and the metrics' last outcomes on a long run history: each reads an
// index in its own order (EXPLAIN QUERY PLAN of the repositories' own statements), and answers as before.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { listJobRuns } from "../../src/jobs/history";
import { jobRuns } from "../../src/jobs/tables";
import { lastOutcomesQuery } from "../../src/proxy/monitoring/metrics";
import { database } from "../../src/shared/db";
import { queryPlan } from "../support/query-plans";

const db = () => database(env.DB);
const KIND_NEWEST_FIRST = "SEARCH job_runs USING INDEX job_runs_kind_id_idx (kind=?)";

describe("plans", () => {
  it("a list of one kind reads (kind, id) newest first", async () => {
    expect(await queryPlan(listJobRuns(db(), { kinds: ["news-ingest"], limit: 20, offset: 40 }))).toEqual([
      KIND_NEWEST_FIRST,
    ]);
  });

  it("a list of three kinds merges each kind's runs newest first, without a sort", async () => {
    const query = listJobRuns(db(), { kinds: ["a", "b", "c"], limit: 50 });
    expect(await queryPlan(query)).toEqual([
      "MERGE (UNION ALL)",
      "  LEFT",
      "    MERGE (UNION ALL)",
      "      LEFT",
      `        ${KIND_NEWEST_FIRST}`,
      "      RIGHT",
      `        ${KIND_NEWEST_FIRST}`,
      "  RIGHT",
      `    ${KIND_NEWEST_FIRST}`,
    ]);
  });

  it("the metrics' last outcomes come from (kind, state, ended_at) alone, already grouped", async () => {
    expect(await queryPlan(lastOutcomesQuery(db(), ["a", "b"]))).toEqual([
      "SEARCH job_runs USING COVERING INDEX job_runs_kind_state_ended_idx (kind=? AND state=? AND ended_at>?)",
    ]);
  });
});

describe("answers", () => {
  it("lists runs of the kinds asked, newest first, paged by offset, each run once", async () => {
    const tag = crypto.randomUUID();
    const [a, b, c, other] = ["a", "b", "c", "other"].map((kind) => `${tag}-${kind}`);
    const rows = await db()
      .insert(jobRuns)
      .values([a, b, a, c, other, b, a].map((kind) => ({ kind, trigger: "test" })))
      .returning();
    const ids = rows.map((row) => row.id);
    const list = async (kinds: string[], limit: number, offset?: number) =>
      (await listJobRuns(db(), { kinds, limit, offset })).map((row) => row.id);
    expect(await list([a, b, c], 2)).toEqual([ids[6], ids[5]]);
    expect(await list([c, b, a], 3, 2)).toEqual([ids[3], ids[2], ids[1]]);
    expect(await list([a, b, c], 10, 5)).toEqual([ids[0]]);
    expect(await list([a, a], 10)).toEqual([ids[6], ids[2], ids[0]]);
    expect(await list([other], 10)).toEqual([ids[4]]);
    expect(await list([], 10)).toEqual([]);
    // Whole rows, as a plain read of them by id gives them.
    const [newest] = await listJobRuns(db(), { kinds: [a, b], limit: 1 });
    expect(newest).toEqual(rows[6]);
  });

  it("the last outcomes: each kind's latest end per outcome, finished runs only, in kind and state order", async () => {
    const tag = crypto.randomUUID();
    const [a, b] = [`${tag}-a`, `${tag}-b`];
    const at = (minute: number) => new Date(Date.UTC(2026, 0, 1, 0, minute));
    await db()
      .insert(jobRuns)
      .values([
        { kind: a, trigger: "test", state: "succeeded", endedAt: at(1) },
        { kind: a, trigger: "test", state: "succeeded", endedAt: at(3) },
        { kind: a, trigger: "test", state: "failed", endedAt: at(2) },
        { kind: a, trigger: "test", state: "running" },
        { kind: b, trigger: "test", state: "failed", endedAt: at(5) },
        { kind: b, trigger: "test", state: "failed", endedAt: at(4) },
        { kind: b, trigger: "test", state: "queued", endedAt: at(9) },
        { kind: `${tag}-c`, trigger: "test", state: "succeeded", endedAt: at(7) },
      ]);
    expect(await lastOutcomesQuery(db(), [b, a])).toEqual([
      { kind: a, state: "failed", at: at(2) },
      { kind: a, state: "succeeded", at: at(3) },
      { kind: b, state: "failed", at: at(5) },
    ]);
  });
});
