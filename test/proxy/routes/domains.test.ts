// GET /domains/{p}[/{b}] and POST /domains/massupdate: upserts, deletes, validation, all-or-nothing, the operation
// limit, a tenant's projects only, and enableSSL on a domain a provided certificate covers (fullSync has its own file).
import { env } from "cloudflare:workers";
import worker from "../../../src/index";
import { createExecutionContext } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { massUpdateDomains } from "../../../src/proxy/installation/domains";
import { database } from "../../../src/shared/db";
import {
  ADMIN_AUTH,
  as,
  asAdmin,
  createApiUser,
  createBackend,
  createProject,
  errorBody,
  expectJson,
  massUpdate,
} from "../../support/proxy-api";
import { allDomains, createDomainProjects, domainsOf, op, update } from "./domains-fixtures";

beforeAll(async () => {
  await createDomainProjects();
});

describe("GET /domains", () => {
  beforeAll(async () => {
    await createProject("list");
    await createBackend("list", {
      label: "one",
      domainForwardings: [
        { domainName: "zz.list.example" },
        { domainName: "aa.list.example", publicCaCertificate: true },
      ],
    });
    await createBackend("list", {
      label: "two",
      domainForwardings: [{ domainName: "mm.list.example", redirectToUrl: "http://to.example/" }],
    });
    await createBackend("list", { label: "three" });
  });

  it("maps the project's domains by name, sorted", async () => {
    const response = await asAdmin("/domains/list");
    expect(await response.text()).toBe(
      JSON.stringify({
        "aa.list.example": {
          backendLabel: "one",
          certProvided: false,
          domainName: "aa.list.example",
          publicCaCertificate: true,
          version: 0,
        },
        "mm.list.example": {
          backendLabel: "two",
          certProvided: false,
          domainName: "mm.list.example",
          publicCaCertificate: false,
          redirectToUrl: "http://to.example/",
          version: 0,
        },
        "zz.list.example": {
          backendLabel: "one",
          certProvided: false,
          domainName: "zz.list.example",
          publicCaCertificate: false,
          version: 0,
        },
      }),
    );
  });

  it("maps one backend's domains, and {} for a backend without any", async () => {
    expect(Object.keys(await expectJson(asAdmin("/domains/list/one"), 200))).toEqual([
      "aa.list.example",
      "zz.list.example",
    ]);
    expect(await expectJson(asAdmin("/domains/list/three"), 200)).toEqual({});
  });

  it("answers 404 for an unknown backend or project", async () => {
    expect(await expectJson(asAdmin("/domains/list/nope"), 404)).toEqual(
      errorBody("Invalid backend: label nope not existing or access denied"),
    );
    expect(await expectJson(asAdmin("/domains/nope"), 404)).toEqual(
      errorBody("Invalid project: label nope not existing or access denied"),
    );
    expect(await expectJson(asAdmin("/domains/nope/one"), 404)).toEqual(
      errorBody("Invalid project: label nope not existing or access denied"),
    );
  });
});

describe("POST /domains/massupdate", () => {
  it("creates domains and answers the (empty) list of warnings", async () => {
    expect(
      await expectJson(
        update([op("CREATE", "c1.example"), op("CREATE", "c2.example", "api", "dom", { enableSSL: true })]),
        200,
      ),
    ).toEqual([]);
    const domains = await domainsOf();
    expect(domains["c1.example"]).toEqual({
      backendLabel: "web",
      certProvided: false,
      domainName: "c1.example",
      publicCaCertificate: false,
      version: 0,
    });
    expect(domains["c2.example"]).toEqual({
      backendLabel: "api",
      certProvided: false,
      domainName: "c2.example",
      publicCaCertificate: true,
      version: 0,
    });
  });

  it("treats CREATE, UPDATE and REPLACE as one upsert that bumps the version", async () => {
    await expectJson(update([op("UPDATE", "u1.example", "web", "dom", { enableSSL: true })]), 200);
    expect((await domainsOf())["u1.example"]).toMatchObject({
      backendLabel: "web",
      publicCaCertificate: true,
      version: 0,
    });
    await expectJson(update([op("CREATE", "u1.example", "api")]), 200);
    expect((await domainsOf())["u1.example"]).toEqual({
      backendLabel: "api",
      certProvided: false,
      domainName: "u1.example",
      publicCaCertificate: false,
      version: 1,
    });
    await expectJson(
      update([op("REPLACE", "u1.example", "permredirect", "dom", { redirectToUrl: "https://target.example/*" })]),
      200,
    );
    expect((await domainsOf())["u1.example"]).toEqual({
      backendLabel: "permredirect",
      certProvided: false,
      domainName: "u1.example",
      publicCaCertificate: false,
      redirectToUrl: "https://target.example/*",
      version: 2,
    });
  });

  it("moves a domain to another project the caller can see", async () => {
    await expectJson(update([op("CREATE", "mv.example")]), 200);
    await expectJson(update([op("UPDATE", "mv.example", "web", "dom2")]), 200);
    expect((await domainsOf())["mv.example"]).toBeUndefined();
    expect((await domainsOf("dom2"))["mv.example"]).toMatchObject({ backendLabel: "web", version: 1 });
  });

  it("DELETE removes a domain only from the named backend, otherwise does nothing", async () => {
    await expectJson(update([op("CREATE", "d1.example"), op("CREATE", "d2.example", "api")]), 200);
    expect(
      await expectJson(
        update([op("DELETE", "d1.example"), op("DELETE", "d2.example"), op("DELETE", "never.example")]),
        200,
      ),
    ).toEqual([]);
    const domains = await domainsOf();
    expect(domains["d1.example"]).toBeUndefined();
    expect(domains["d2.example"]).toMatchObject({ backendLabel: "api", version: 0 });
  });

  it("accepts http and https redirect URLs, with a trailing * or /* to keep the path", async () => {
    const urls = [
      "http://a.example",
      "https://a.example:8443/x/y?q=1",
      "https://a.example/*",
      "https://a.example*",
      "https://a.example/path*",
    ];
    await expectJson(
      update(urls.map((url, i) => op("CREATE", `r${i}.example`, "permredirect", "dom", { redirectToUrl: url }))),
      200,
    );
    const domains = await domainsOf();
    expect(urls.map((_, i) => domains[`r${i}.example`].redirectToUrl)).toEqual(urls);
  });

  it("stores names lower-cased and refuses what is not a host name with 400", async () => {
    await expectJson(update([op("CREATE", "MiXeD.Example")]), 200);
    expect((await domainsOf())["mixed.example"]).toBeDefined();
    expect(await expectJson(update([op("CREATE", "ok.example"), op("CREATE", "bad name.example")]), 400)).toEqual(
      errorBody("domainOperations.1.domainName: must be a host name (letters, digits, hyphens, dots)"),
    );
  });

  describe("refusals change nothing", () => {
    for (const [what, operations, message] of [
      [
        "an invalid redirect URL",
        [
          op("CREATE", "ok1.example"),
          op("CREATE", "bad.example", "permredirect", "dom", { redirectToUrl: "javascript:alert(1)" }),
        ],
        "bad.example: invalid redirect URL javascript:alert(1)",
      ],
      [
        "a redirect URL with spaces",
        [
          op("CREATE", "ok1.example"),
          op("CREATE", "bad.example", "permredirect", "dom", { redirectToUrl: "https://a.example/x y" }),
        ],
        "bad.example: invalid redirect URL https://a.example/x y",
      ],
      [
        "the same domain twice",
        [op("CREATE", "dup.example"), op("UPDATE", "ok1.example"), op("DELETE", "dup.example")],
        "dup.example: disallowed duplicate update operation",
      ],
      [
        "an unknown project",
        [op("CREATE", "ok1.example"), op("CREATE", "x.example", "web", "nosuch")],
        "Invalid project: label nosuch not existing or access denied",
      ],
      [
        "an unknown backend",
        [op("CREATE", "ok1.example"), op("CREATE", "x.example", "nope")],
        "Invalid backend: label nope not existing or access denied",
      ],
    ] as const) {
      it(`refuses ${what}`, async () => {
        await expectJson(update([op("CREATE", "keep.example", "web", "dom", { enableSSL: true })]), 200);
        const before = await allDomains();
        expect(
          await expectJson(
            update([op("DELETE", "keep.example"), op("UPDATE", "c1.example", "api"), ...operations]),
            500,
          ),
        ).toEqual(errorBody(`Unable to process mass update: ${message}`));
        expect(await allDomains()).toEqual(before);
      });
    }
  });

  it("answers 400 naming the field for a body failing the schema", async () => {
    expect(await expectJson(massUpdate(ADMIN_AUTH, { fullSync: true }), 400)).toEqual(
      errorBody("domainOperations: Invalid input: expected array, received undefined"),
    );
    expect(await expectJson(update([op("MOVE", "x.example")]), 400)).toEqual(
      errorBody('domainOperations.0.operation: Invalid option: expected one of "CREATE"|"UPDATE"|"REPLACE"|"DELETE"'),
    );
    expect(
      await expectJson(update([{ ...op("CREATE", "x.example"), enableSSL: "yes" as unknown as boolean }]), 400),
    ).toEqual(errorBody("domainOperations.0.enableSSL: Invalid input: expected boolean, received string"));
  });

  it("answers 400 above PROXY_MASS_UPDATE_MAX_OPERATIONS", async () => {
    const request = new Request("http://example.com/domains/massupdate", {
      method: "POST",
      headers: { Authorization: ADMIN_AUTH, "content-type": "application/json" },
      body: JSON.stringify({
        domainOperations: [op("CREATE", "l1.example"), op("CREATE", "l2.example"), op("CREATE", "l3.example")],
      }),
    });
    const response = await worker.fetch(
      request,
      { ...env, PROXY_MASS_UPDATE_MAX_OPERATIONS: "2" },
      createExecutionContext(),
    );
    expect(await expectJson(response, 400)).toEqual(errorBody("domainOperations: at most 2 operations per request"));
    expect((await domainsOf())["l1.example"]).toBeUndefined();
  });

  it("lets an API user update domains of the projects it matches only", async () => {
    const auth = await createApiUser("domuser", ["dom"]);
    expect(
      await expectJson(
        as(auth, "/domains/massupdate", "POST", { domainOperations: [op("CREATE", "user.example")] }),
        200,
      ),
    ).toEqual([]);
    expect(
      await expectJson(
        as(auth, "/domains/massupdate", "POST", { domainOperations: [op("CREATE", "user2.example", "web", "dom2")] }),
        500,
      ),
    ).toEqual(errorBody("Unable to process mass update: Invalid project: label dom2 not existing or access denied"));
  });
});

describe("enableSSL with a provided certificate", () => {
  it("sets certProvided instead of publicCaCertificate when a provided certificate covers the domain", async () => {
    await createProject("certs");
    await createBackend("certs", { label: "web" });
    const lookup = async (_db: unknown, requests: readonly { domainName: string }[]) =>
      new Set(requests.map((request) => request.domainName).filter((name) => name.endsWith(".covered.example")));
    const caller = { username: "admin", isAdmin: true, projectPatterns: [] };
    const { warnings } = await massUpdateDomains(
      database(env.DB),
      caller,
      {
        domainOperations: [
          op("CREATE", "a.covered.example", "web", "certs", { enableSSL: true }),
          op("CREATE", "b.public.example", "web", "certs", { enableSSL: true }),
          op("CREATE", "c.covered.example", "web", "certs", { enableSSL: false }),
        ] as never,
      },
      lookup,
    );
    expect(warnings).toEqual([]);
    const domains = await domainsOf("certs");
    expect(
      [domains["a.covered.example"], domains["b.public.example"], domains["c.covered.example"]].map((d) => [
        d.certProvided,
        d.publicCaCertificate,
      ]),
    ).toEqual([
      [true, false],
      [false, true],
      [false, false],
    ]);
  });
});
