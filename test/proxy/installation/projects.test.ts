// The whole installation's project trees in one read (what the configuration jobs and the admin listing use).
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { loadProjectTrees } from "../../../src/proxy/installation/projects";
import { database } from "../../../src/shared/db";
import { createBackend, createContainer, createHost, createProject } from "../../support/proxy-api";

const db = () => database(env.DB);

// This suite shared its file with the commit tests (now bulk.test.ts), which left the project "batchone" behind; the
// expected list below still names it, so it is created here.
beforeAll(async () => {
  await createProject("batchone");
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
