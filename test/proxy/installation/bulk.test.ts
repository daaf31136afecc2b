// The one D1 batch each request commits: all or nothing, and a conflict reported as a 500 that names the operation.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { commit } from "../../../src/proxy/installation/bulk";
import { projects } from "../../../src/proxy/installation/tables";
import { database } from "../../../src/shared/db";

const db = () => database(env.DB);

describe("commit", () => {
  it("writes every statement of the batch", async () => {
    const [inserted] = await commit(
      db(),
      [db().insert(projects).values({ label: "batchone" }).returning({ id: projects.id })],
      "test",
    );
    expect(inserted).toEqual([{ id: expect.any(Number) }]);
  });

  it("writes nothing when one statement fails, and reports a conflict as a 500 that names the operation", async () => {
    const attempt = commit(
      db(),
      [db().insert(projects).values({ label: "batchtwo" }), db().insert(projects).values({ label: "batchone" })],
      "Unable to process test",
    );
    await expect(attempt).rejects.toMatchObject({
      status: 500,
      message: "Unable to process test: a concurrent change conflicted with this request, nothing was changed",
    });
    const labels = (await db().select({ label: projects.label }).from(projects)).map((row) => row.label);
    expect(labels).toEqual(["batchone"]);
  });
});
