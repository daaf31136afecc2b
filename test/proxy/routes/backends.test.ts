// POST /backends/{projectLabel} (create-or-update, lists replaced wholesale) and PATCH .../setContainersOf/...
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { asAdmin, createBackend, errorBody, expectJson } from "../../support/proxy-api";
import { createProjectOnHost, createProjectWithContainers } from "../../support/proxy-fixtures";

const post = (body: unknown, project = "be") => asAdmin(`/backends/${project}`, "POST", body);
const backendOf = async (label: string, project = "be") =>
  (await expectJson(asAdmin(`/projects/${project}`), 200)).backends.find((b: { label: string }) => b.label === label);
const counts = async () =>
  env.DB.prepare(
    "select (select count(*) from backends) as backends, (select count(*) from domains) as domains, (select count(*) from backend_containers) as refs",
  ).first();

let c1: number;
let c2: number;
let c3: number;
let foreign: number;

beforeAll(async () => {
  ({ c1, c2, c3 } = await createProjectOnHost("be", {
    hostname: "be-host.example",
    ipv6: "2001:db8::be",
    containers: { c1: "2001:db8::be1", c2: "2001:db8::be2", c3: "2001:db8::be3" },
  }));
  ({ c1: foreign } = await createProjectWithContainers("elsewhere", "be-host.example", { c1: "2001:db8::ee1" }));
  // The domain the refusals below find taken, owned here rather than by a backend another test creates.
  await createBackend("be", { label: "owner", domainForwardings: [{ domainName: "owned.example" }] });
});

describe("create", () => {
  it("creates with port 80 by default and derives FQLabel and globalBackend", async () => {
    const body = await expectJson(post({ label: "plain" }), 200);
    expect(body).toEqual({ success: true, payload: { key: "backendId", value: expect.any(Number) }, warnings: [] });
    const id = body.payload.value;
    expect(await backendOf("plain")).toEqual({
      FQLabel: `be_${id}_plain`,
      backendContainers: [],
      domainForwardings: [],
      globalBackend: false,
      label: "plain",
      port: 80,
      projectId: 1,
      version: 0,
    });
  });

  it("marks nocontent, permredirect and tempredirect as global backends", async () => {
    for (const label of ["nocontent", "permredirect", "tempredirect"]) {
      await expectJson(post({ label }), 200);
      expect((await backendOf(label)).globalBackend).toBe(true);
    }
  });

  it("creates with domain forwardings and container references in one go", async () => {
    const id = await createBackend("be", {
      label: "full",
      fullname: "Full",
      port: 8443,
      params: "balance roundrobin",
      backendId: 12345,
      domainForwardings: [
        { domainName: "Full-B.example", publicCaCertificate: true, backendLabel: "ignored" },
        { domainName: "full-a.example", redirectToUrl: "https://x.example/path", certProvided: true },
      ],
      backendContainers: [{ containerId: c2, params: "check weight 10", backendId: 999 }, { containerId: c1 }],
    });
    expect(await backendOf("full")).toEqual({
      FQLabel: `be_${id}_full`,
      backendContainers: [
        { backendId: id, containerId: c1, version: 0 },
        { backendId: id, containerId: c2, params: "check weight 10", version: 0 },
      ],
      domainForwardings: [
        {
          backendLabel: "full",
          certProvided: true,
          domainName: "full-a.example",
          publicCaCertificate: false,
          redirectToUrl: "https://x.example/path",
          version: 0,
        },
        {
          backendLabel: "full",
          certProvided: false,
          domainName: "full-b.example",
          publicCaCertificate: true,
          version: 0,
        },
      ],
      fullname: "Full",
      globalBackend: false,
      label: "full",
      params: "balance roundrobin",
      port: 8443,
      projectId: 1,
      version: 0,
    });
  });

  // Bodies and messages are functions: the container ids exist only once beforeAll has run.
  for (const [what, body, message] of [
    [
      "an unknown container",
      () => ({ label: "bad1", backendContainers: [{ containerId: 9999 }] }),
      () => "Backend container with ID 9999 does not exist in project be",
    ],
    [
      "a container of another project",
      () => ({ label: "bad2", backendContainers: [{ containerId: c1 }, { containerId: foreign }] }),
      () => `Backend container with ID ${foreign} does not exist in project be`,
    ],
    [
      "the same container twice",
      () => ({ label: "bad3", backendContainers: [{ containerId: c1 }, { containerId: c1 }] }),
      () => `Backend container with ID ${c1} is listed twice`,
    ],
    [
      "a domain of another backend",
      () => ({ label: "bad4", domainForwardings: [{ domainName: "new.example" }, { domainName: "owned.example" }] }),
      () => "owned.example: domain is already assigned to another backend",
    ],
    [
      "the same domain twice",
      () => ({ label: "bad5", domainForwardings: [{ domainName: "twice.example" }, { domainName: "TWICE.example" }] }),
      () => "twice.example: disallowed duplicate domain",
    ],
    [
      "an invalid redirect URL",
      () => ({ label: "bad6", domainForwardings: [{ domainName: "r.example", redirectToUrl: "ftp://x.example" }] }),
      () => "r.example: invalid redirect URL ftp://x.example",
    ],
  ] as const) {
    it(`refuses ${what} with 500 and creates nothing`, async () => {
      const before = await counts();
      expect(await expectJson(post(body()), 500)).toEqual(
        errorBody(`Unable to process backend create/update: ${message()}`),
      );
      expect(await counts()).toEqual(before);
      expect(await backendOf(body().label)).toBeUndefined();
    });
  }

  it("answers 400 for a port out of range and 500 for an unknown project", async () => {
    expect(await expectJson(post({ label: "badport", port: 70000 }), 400)).toEqual(
      errorBody("port: Too big: expected number to be <=65535"),
    );
    expect(await expectJson(post({ label: "x1" }, "nosuch"), 500)).toEqual(
      errorBody("Unable to process backend create/update: Invalid project: label nosuch not existing or access denied"),
    );
  });
});

describe("update", () => {
  // Each test updates a backend of its own: versions and domain names are counted from a state it built itself.
  const createUpdated = (label: string) =>
    createBackend("be", {
      label,
      port: 81,
      params: "retries 3",
      domainForwardings: [{ domainName: `${label}-keep.example` }, { domainName: `${label}-drop.example` }],
      backendContainers: [{ containerId: c1, params: "check" }, { containerId: c2 }],
    });

  it("copies only the fields present and leaves absent lists alone", async () => {
    const id = await createUpdated("updfields");
    expect((await expectJson(post({ label: "updfields", fullname: "Updated" }), 200)).payload.value).toBe(id);
    expect(await backendOf("updfields")).toMatchObject({
      fullname: "Updated",
      port: 81,
      params: "retries 3",
      version: 1,
      domainForwardings: [{ domainName: "updfields-drop.example" }, { domainName: "updfields-keep.example" }],
      backendContainers: [{ containerId: c1, params: "check" }, { containerId: c2 }],
    });
  });

  it("replaces the lists wholesale when present", async () => {
    const id = await createUpdated("updlists");
    await expectJson(
      post({
        label: "updlists",
        port: 82,
        domainForwardings: [
          { domainName: "updlists-keep.example", publicCaCertificate: true },
          { domainName: "updlists-added.example" },
        ],
        backendContainers: [{ containerId: c3 }, { containerId: c1, params: "backup" }],
      }),
      200,
    );
    const backend = await backendOf("updlists");
    expect(backend).toMatchObject({ port: 82, params: "retries 3", version: 1 });
    expect(backend.domainForwardings).toEqual([
      {
        backendLabel: "updlists",
        certProvided: false,
        domainName: "updlists-added.example",
        publicCaCertificate: false,
        version: 0,
      },
      {
        backendLabel: "updlists",
        certProvided: false,
        domainName: "updlists-keep.example",
        publicCaCertificate: true,
        version: 1,
      },
    ]);
    expect(backend.backendContainers).toEqual([
      { backendId: id, containerId: c1, params: "backup", version: 1 },
      { backendId: id, containerId: c3, version: 0 },
    ]);
    const dropped = await env.DB.prepare(
      "select count(*) as n from domains where domain_name = 'updlists-drop.example'",
    ).first();
    expect(dropped).toEqual({ n: 0 });
  });

  it("empties the lists with []", async () => {
    await createUpdated("updempty");
    await expectJson(post({ label: "updempty", domainForwardings: [], backendContainers: [] }), 200);
    expect(await backendOf("updempty")).toMatchObject({ domainForwardings: [], backendContainers: [], version: 1 });
  });

  it("refuses an invalid update without changing anything", async () => {
    await createUpdated("updrefused");
    const before = await backendOf("updrefused");
    expect(
      await expectJson(post({ label: "updrefused", port: 99, backendContainers: [{ containerId: foreign }] }), 500),
    ).toEqual(
      errorBody(
        `Unable to process backend create/update: Backend container with ID ${foreign} does not exist in project be`,
      ),
    );
    expect(await backendOf("updrefused")).toEqual(before);
  });
});

describe("PATCH /backends/{p}/{b}/setContainersOf/{target}", () => {
  beforeAll(async () => {
    await createBackend("be", {
      label: "blue",
      backendContainers: [
        { containerId: c1, params: "check" },
        { containerId: c2, params: "backup" },
      ],
    });
    await createBackend("be", {
      label: "green",
      backendContainers: [{ containerId: c3, params: "check" }, { containerId: c1 }],
    });
    await createBackend("be", { label: "empty" });
  });

  it("copies the target's container references with their params", async () => {
    expect(await expectJson(asAdmin("/backends/be/green/setContainersOf/blue", "PATCH"), 200)).toEqual({
      payload: "Switched containers to backend blue",
      success: true,
      warnings: [],
    });
    const green = await backendOf("green");
    expect(green.backendContainers.map((r: any) => [r.containerId, r.params ?? null])).toEqual([
      [c1, "check"],
      [c2, "backup"],
    ]);
    expect((await backendOf("blue")).backendContainers.map((r: any) => r.containerId)).toEqual([c1, c2]);
  });

  it("refuses a target without containers (500) and changes nothing", async () => {
    const before = await backendOf("green");
    expect(await expectJson(asAdmin("/backends/be/green/setContainersOf/empty", "PATCH"), 500)).toEqual(
      errorBody(
        "Unable to process backend container update: Target backend with label empty does not contain any container references",
      ),
    );
    expect(await backendOf("green")).toEqual(before);
  });

  it("answers 500 for an unknown backend, target or project", async () => {
    expect(await expectJson(asAdmin("/backends/be/nope/setContainersOf/blue", "PATCH"), 500)).toEqual(
      errorBody(
        "Unable to process backend container update: Invalid backend: label nope not existing or access denied",
      ),
    );
    expect(await expectJson(asAdmin("/backends/be/green/setContainersOf/nope", "PATCH"), 500)).toEqual(
      errorBody(
        "Unable to process backend container update: Invalid backend: label nope not existing or access denied",
      ),
    );
    expect(await expectJson(asAdmin("/backends/nosuch/green/setContainersOf/blue", "PATCH"), 500)).toEqual(
      errorBody(
        "Unable to process backend container update: Invalid project: label nosuch not existing or access denied",
      ),
    );
  });
});
