// The job_runs repository (src/jobs/history.ts) on D1: queued runs recorded together, however many; a run's error and
// warnings stored cut to MAX_RUN_TEXT_CHARS, whatever job wrote them.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import {
  appendJobWarnings,
  createJobRun,
  createJobRuns,
  finishJobRun,
  getJobRun,
  MAX_RUN_TEXT_CHARS,
} from "../../src/jobs/history";
import { database } from "../../src/shared/db";

describe("createJobRuns", () => {
  it("records 150 queued runs in one statement, in the order given, past D1's 100 bound parameters", async () => {
    const trigger = `test-${crypto.randomUUID()}`;
    const inputs = Array.from({ length: 150 }, (_, i) => ({ kind: `slave-sync-${i}`, trigger }));
    const ids = await createJobRuns(database(env.DB), inputs);
    expect(ids).toHaveLength(150);
    const { results } = await env.DB.prepare(
      "select id, kind, state, attempts, warnings from job_runs where trigger = ? order by id",
    )
      .bind(trigger)
      .all();
    expect(results).toEqual(
      inputs.map((input, i) => ({ id: ids[i], kind: input.kind, state: "queued", attempts: 0, warnings: "[]" })),
    );
  });
});

describe("a run's error and warnings", () => {
  it("are stored cut to 8192 characters, saying how many went, at its end and when appended", async () => {
    const db = database(env.DB);
    const id = await createJobRun(db, { kind: "test-long-texts", trigger: `test-${crypto.randomUUID()}` });
    // 3 MB: past D1's 2 MB for a value, which refused the run's end (and failed its message's batch).
    const huge = (letter: string) => letter.repeat(3_000_000);
    const cut = (letter: string) => `${letter.repeat(8161)}… [2991839 more characters cut]`;
    await finishJobRun(db, { id, now: new Date(), state: "queued", error: huge("e"), warnings: [huge("w"), "short"] });
    await appendJobWarnings(db, { id, warnings: [huge("a"), huge("w")] });
    const run = await getJobRun(db, id);
    expect(MAX_RUN_TEXT_CHARS).toBe(8192);
    expect(cut("e")).toHaveLength(8192);
    expect(run).toMatchObject({ state: "queued", error: cut("e"), warnings: [cut("w"), "short", cut("a")] });
  });
});
