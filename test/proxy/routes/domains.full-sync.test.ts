// POST /domains/massupdate with fullSync: the operations applied and every other domain of that project removed, its
// refusals changing nothing, and a thousand domains created, updated and synced per request.
import { beforeAll, describe, expect, it } from "vitest";
import { asAdmin, createBackend, createProject, errorBody, expectJson } from "../../support/proxy-api";
import { allDomains, createDomainProjects, domainsOf, op, update } from "./domains-fixtures";

beforeAll(async () => {
  await createDomainProjects();
});

describe("fullSync", () => {
  // The refusals below change nothing, so they share these projects; every accepted sync builds its own.
  beforeAll(async () => {
    await createProject("sync");
    await createBackend("sync", {
      label: "one",
      domainForwardings: [{ domainName: "s1.sync.example" }, { domainName: "s2.sync.example" }],
    });
    await createBackend("sync", { label: "two", domainForwardings: [{ domainName: "s3.sync.example" }] });
    await createProject("bystander");
    await createBackend("bystander", { label: "one", domainForwardings: [{ domainName: "by.example" }] });
  });

  /** Project sync<tag> (backends one and two holding the given domains, all under <tag>.example) and by<tag>. */
  async function syncProjects(tag: string, one: string[], two: string[]) {
    const forwardings = (names: string[]) => names.map((name) => ({ domainName: `${name}.${tag}.example` }));
    await createProject(`sync${tag}`);
    await createBackend(`sync${tag}`, { label: "one", domainForwardings: forwardings(one) });
    await createBackend(`sync${tag}`, { label: "two", domainForwardings: forwardings(two) });
    await createProject(`by${tag}`);
    await createBackend(`by${tag}`, { label: "one", domainForwardings: forwardings(["by"]) });
  }

  it("applies the operations and removes every other domain of that project only", async () => {
    await syncProjects("apply", ["s1", "s2"], ["s3"]);
    const warnings = await expectJson(
      update(
        [
          op("UPDATE", "s2.apply.example", "two", "syncapply", { enableSSL: true }),
          op("CREATE", "s4.apply.example", "one", "syncapply"),
        ],
        true,
      ),
      200,
    );
    expect(warnings).toEqual([]);
    expect(await domainsOf("syncapply")).toEqual({
      "s2.apply.example": {
        backendLabel: "two",
        certProvided: false,
        domainName: "s2.apply.example",
        publicCaCertificate: true,
        version: 1,
      },
      "s4.apply.example": {
        backendLabel: "one",
        certProvided: false,
        domainName: "s4.apply.example",
        publicCaCertificate: false,
        version: 0,
      },
    });
    expect(Object.keys(await domainsOf("byapply"))).toEqual(["by.apply.example"]);
  });

  it("keeps a domain moved into the project by the same request", async () => {
    await syncProjects("moved", ["s4"], ["s2"]);
    await expectJson(
      update(
        [op("CREATE", "s2.moved.example", "two", "syncmoved"), op("UPDATE", "by.moved.example", "one", "syncmoved")],
        true,
      ),
      200,
    );
    expect(Object.keys(await domainsOf("syncmoved"))).toEqual(["by.moved.example", "s2.moved.example"]);
    expect(await domainsOf("bymoved")).toEqual({});
  });

  for (const [what, operations, message] of [
    [
      "DELETE operations",
      [op("CREATE", "s2.sync.example", "two", "sync"), op("DELETE", "by.example", "one", "sync")],
      "by.example: full synchronizations allow 'create' and 'update' records only.",
    ],
    [
      "operations on two projects",
      [op("CREATE", "s2.sync.example", "two", "sync"), op("CREATE", "z.example", "web", "dom")],
      "Full synchronizations need to refer to a single existing project, containing all active domains in the project.",
    ],
    [
      "an empty list",
      [],
      "Full synchronizations need to refer to a single existing project, containing all active domains in the project.",
    ],
  ] as const) {
    it(`refuses ${what} and changes nothing`, async () => {
      const before = await allDomains();
      expect(await expectJson(update([...operations], true), 500)).toEqual(
        errorBody(`Unable to process mass update: ${message}`),
      );
      expect(await allDomains()).toEqual(before);
    });
  }

  it("with fullSync false behaves as a plain mass update", async () => {
    await syncProjects("plain", ["s1", "s2"], ["s3"]);
    await expectJson(update([op("CREATE", "extra.plain.example", "one", "syncplain")], false), 200);
    expect(Object.keys(await domainsOf("syncplain"))).toEqual([
      "extra.plain.example",
      "s1.plain.example",
      "s2.plain.example",
      "s3.plain.example",
    ]);
  });
});

describe("1000 domains", () => {
  it("creates, updates and fully syncs a thousand domains per request", async () => {
    await createProject("bulk");
    await createBackend("bulk", { label: "web" });
    await createBackend("bulk", { label: "api" });
    const names = Array.from({ length: 1000 }, (_, i) => `host${String(i).padStart(4, "0")}.bulk.example`);
    expect(
      await expectJson(update(names.map((name) => op("CREATE", name, "web", "bulk", { enableSSL: true }))), 200),
    ).toEqual([]);
    let domains = await domainsOf("bulk");
    expect(Object.keys(domains)).toEqual(names);
    expect(domains[names[999]]).toEqual({
      backendLabel: "web",
      certProvided: false,
      domainName: names[999],
      publicCaCertificate: true,
      version: 0,
    });

    // Half move to "api", half stay; with fullSync, the 500 not named go.
    const kept = names.slice(0, 500).map((name, i) => op("UPDATE", name, i % 2 ? "api" : "web", "bulk"));
    expect(await expectJson(update(kept, true), 200)).toEqual([]);
    domains = await domainsOf("bulk");
    expect(Object.keys(domains)).toEqual(names.slice(0, 500));
    expect(domains[names[1]]).toEqual({
      backendLabel: "api",
      certProvided: false,
      domainName: names[1],
      publicCaCertificate: false,
      version: 1,
    });
    expect(Object.keys(await expectJson(asAdmin("/domains/bulk/api"), 200))).toHaveLength(250);
  });
});
