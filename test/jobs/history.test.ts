// The job_runs repository (src/jobs/history.ts) on D1: queued runs recorded together, however many.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createJobRuns } from "../../src/jobs/history";
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
