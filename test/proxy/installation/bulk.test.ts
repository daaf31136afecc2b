// commitWrite, the one D1 batch each request commits: all or nothing, a conflict a 500 that names the operation.
import { env } from "cloudflare:workers";
import { inArray } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { projects } from "../../../src/proxy/installation/tables";
import { commitWrite } from "../../../src/proxy/installation/writes";
import { database, type Statement } from "../../../src/shared/db";

const db = () => database(env.DB);

/** A plain write (no If-Match, no dry run, no audit entries) of the statements alone. */
const commit = (statements: Statement[], what: string) =>
  commitWrite(db(), {}, { what, projects: [], statements, changes: [] });

describe("commitWrite", () => {
  it("writes every statement of the batch", async () => {
    const { rows } = await commit(
      [db().insert(projects).values({ label: "batchone" }).returning({ id: projects.id })],
      "test",
    );
    const [inserted] = rows!;
    expect(inserted).toEqual([{ id: expect.any(Number) }]);
  });

  it("writes nothing when one statement fails, and reports a conflict as CannotProcess naming the operation", async () => {
    // Its own existing row, the one the second statement collides with.
    await commit([db().insert(projects).values({ label: "batchthree" })], "test");
    const mine = ["batchtwo", "batchthree"];
    const attempt = commit(
      [db().insert(projects).values({ label: "batchtwo" }), db().insert(projects).values({ label: "batchthree" })],
      "Unable to process test",
    );
    await expect(attempt).rejects.toMatchObject({
      kind: "unprocessable",
      message: "Unable to process test: a concurrent change conflicted with this request, nothing was changed",
    });
    const labels = (
      await db().select({ label: projects.label }).from(projects).where(inArray(projects.label, mine))
    ).map((row) => row.label);
    expect(labels).toEqual(["batchthree"]);
  });
});
