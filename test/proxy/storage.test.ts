// The storage helpers the routes and the configuration jobs rely on: one D1 batch per request, all or nothing,
// and the whole installation's project trees in one read.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { commit } from "../../src/proxy/bulk";
import { loadProjectTrees } from "../../src/proxy/projects";
import { projects } from "../../src/proxy/tables";
import { database } from "../../src/shared/db";
import { createBackend, createContainer, createHost, createProject } from "./fixtures";

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

describe("loadProjectTrees", () => {
  it("loads every project, sorted by label, when no id is given", async () => {
    await createProject("treeb");
    await createProject("treea");
    await createHost("tree.example", "2001:db8::3");
    await createContainer("treeb", { label: "app", hostname: "tree.example", ipv6: "2001:db8::31" });
    await createBackend("treea", { label: "web", domainForwardings: [{ domainName: "tree.example.org" }] });
    const trees = await loadProjectTrees(db());
    expect(trees.map((tree) => tree.label)).toEqual(["batchone", "treea", "treeb"]);
    expect(trees[1].backends[0].domainForwardings.map((d) => d.domainName)).toEqual(["tree.example.org"]);
    expect(trees[2].containers[0]).toMatchObject({ FQLabel: "treeb-app", host: { hostname: "tree.example" } });
  });
});
