// Unknown fields in a proxy request body: the write succeeds as the original's did (they are ignored), and the answer
// names each one in its warnings, top-level or nested, at most ten of them.
import { describe, expect, it } from "vitest";
import { createProjectOnHost } from "../../support/proxy-fixtures";
import { as, asAdmin, createApiUser, createHost, createProject, expectJson, massUpdate, rowsOf } from "../fixtures";

const unknown = (path: string) => `unknown field "${path}" ignored`;

describe("POST /admin/projects", () => {
  it("names a top-level unknown field on create and stores the project", async () => {
    const response = await asAdmin("/admin/projects", "POST", { label: "ufcreate", fullName: "Misspelled" });
    expect(await expectJson(response, 200)).toEqual({
      label: "ufcreate",
      version: 0,
      warnings: [unknown("fullName")],
    });
    expect(await rowsOf("select label, fullname from projects where label = 'ufcreate'")).toEqual([
      { label: "ufcreate", fullname: null },
    ]);
  });

  it("names it on update and applies the fields it knows", async () => {
    await createProject("ufupdate");
    const response = await asAdmin("/admin/projects", "POST", {
      label: "ufupdate",
      fullname: "Known",
      fullName: "Misspelled",
    });
    expect(await expectJson(response, 200)).toEqual({
      fullname: "Known",
      label: "ufupdate",
      version: 1,
      warnings: [unknown("fullName")],
    });
    expect(await rowsOf("select fullname from projects where label = 'ufupdate'")).toEqual([{ fullname: "Known" }]);
  });

  it("answers a body without unknown fields exactly as before: no warnings field", async () => {
    const response = await asAdmin("/admin/projects", "POST", { label: "ufclean", fullname: "Clean" });
    expect(await response.text()).toBe('{"fullname":"Clean","label":"ufclean","version":0}');
  });

  it("names at most ten, then counts the rest; a long name is cut", async () => {
    const body: Record<string, unknown> = { label: "uflimit" };
    for (let index = 1; index <= 12; index++) body[`extra${index}`] = index;
    body["x".repeat(150)] = true;
    const answer = await expectJson(asAdmin("/admin/projects", "POST", body), 200);
    expect(answer.warnings).toEqual([
      ...Array.from({ length: 10 }, (_, index) => unknown(`extra${index + 1}`)),
      "... and 3 more unknown fields ignored",
    ]);
    const long = await expectJson(asAdmin("/admin/projects", "POST", { label: "uflong", ["y".repeat(150)]: 1 }), 200);
    expect(long.warnings).toEqual([unknown(`${"y".repeat(100)}…`)]);
  });

  it("names keys that only the prototype of an object knows", async () => {
    const text = '{"label":"ufproto","constructor":1,"__proto__":{"label":"other"},"toString":"x"}';
    const answer = await expectJson(asAdmin("/admin/projects", "POST", text), 200);
    expect(answer).toEqual({
      label: "ufproto",
      version: 0,
      warnings: [unknown("constructor"), unknown("__proto__"), unknown("toString")],
    });
  });

  it("names them in a dry run too, which stores nothing", async () => {
    const response = await asAdmin("/admin/projects?dryRun=true", "POST", { label: "ufdry", fullName: "x" });
    expect(await expectJson(response, 200)).toEqual({ label: "ufdry", version: 0, warnings: [unknown("fullName")] });
    expect(await rowsOf("select label from projects where label = 'ufdry'")).toEqual([]);
  });
});

describe("POST /backends/{projectLabel}", () => {
  it("names nested unknown fields on create and update, after the write's own warnings, and writes", async () => {
    await createProject("ufbackend");
    const created = await expectJson(
      asAdmin("/backends/ufbackend", "POST", {
        label: "site",
        FQLabel: "ufbackend_1_site",
        domainForwardings: [{ domainName: "a.ufbackend.example", sslEnabled: true }],
      }),
      200,
    );
    expect(created).toEqual({
      success: true,
      payload: { key: "backendId", value: expect.any(Number) },
      warnings: [unknown("FQLabel"), unknown("domainForwardings.0.sslEnabled")],
    });
    const updated = await expectJson(
      asAdmin("/backends/ufbackend", "POST", {
        label: "site",
        port: 8080,
        domainForwardings: [{ domainName: "a.ufbackend.example" }, { domainName: "b.ufbackend.example", ssl: 1 }],
      }),
      200,
    );
    expect(updated).toEqual({
      success: true,
      payload: { key: "backendId", value: created.payload.value },
      warnings: [unknown("domainForwardings.1.ssl")],
    });
    expect(
      await rowsOf(
        "select b.port, d.domain_name as domainName from backends b join domains d on d.backend_id = b.id " +
          `where b.id = ${created.payload.value} order by d.domain_name`,
      ),
    ).toEqual([
      { port: 8080, domainName: "a.ufbackend.example" },
      { port: 8080, domainName: "b.ufbackend.example" },
    ]);
  });
});

describe("POST /containers/{projectLabel}", () => {
  it("names an unknown field of the nested host and creates, then updates, the container", async () => {
    await createProject("ufcontainer");
    await createHost("uf-host.example", "2001:db8:0:f::1");
    const body = { label: "web", host: { hostname: "uf-host.example", name: "x" }, ipv6: "2001:db8:0:f::10" };
    const created = await expectJson(asAdmin("/containers/ufcontainer", "POST", body), 200);
    expect(created).toEqual({
      success: true,
      payload: { key: "containerId", value: expect.any(Number) },
      warnings: [unknown("host.name")],
    });
    const updated = await expectJson(
      asAdmin("/containers/ufcontainer", "POST", { ...body, ipv6: "2001:db8:0:f::11", hostName: "y" }),
      200,
    );
    expect(updated).toEqual({
      success: true,
      payload: { key: "containerId", value: created.payload.value },
      warnings: [unknown("host.name"), unknown("hostName")],
    });
    expect(await rowsOf(`select ipv6 from containers where id = ${created.payload.value}`)).toEqual([
      { ipv6: "2001:db8:0:f::11" },
    ]);
  });
});

describe("POST /domains/massupdate", () => {
  it("appends them to the list of warnings it answers, and applies the operations", async () => {
    const { web } = await createProjectOnHost("ufmass", {
      hostname: "uf-host2.example",
      ipv6: "2001:db8:0:f::2",
      containers: { web: "2001:db8:0:f::20" },
    });
    await expectJson(
      asAdmin("/backends/ufmass", "POST", { label: "site", backendContainers: [{ containerId: web }] }),
      200,
    );
    const tenant = await createApiUser("ufmassops", ["ufmass"]);
    const answer = await expectJson(
      massUpdate(tenant, {
        fullsync: true,
        domainOperations: [
          {
            operation: "CREATE",
            domainName: "m.ufmass.example",
            projectLabel: "ufmass",
            backendLabel: "site",
            enableSsl: true,
          },
        ],
      }),
      200,
    );
    expect(answer).toEqual([unknown("fullsync"), unknown("domainOperations.0.enableSsl")]);
    expect(await expectJson(as(tenant, "/domains/ufmass"), 200)).toEqual({
      "m.ufmass.example": {
        backendLabel: "site",
        certProvided: false,
        domainName: "m.ufmass.example",
        publicCaCertificate: false,
        version: 0,
      },
    });
  });
});

describe("the administrator's other writes", () => {
  it("add warnings to the resource they answer", async () => {
    const host = await expectJson(
      asAdmin("/admin/hosts", "POST", { hostname: "uf-host3.example", ipv6: "2001:db8:0:f::3", ip: "x" }),
      200,
    );
    expect(host).toEqual({
      hostId: expect.any(Number),
      hostname: "uf-host3.example",
      ipv6: "2001:db8:0:f::3",
      version: 0,
      warnings: [unknown("ip")],
    });
    const user = await expectJson(
      asAdmin("/admin/users", "POST", { email: "uf@example.com", defaultPermissions: ["www-data"] }),
      200,
    );
    expect(user).toEqual({
      defaultPermission: [],
      email: "uf@example.com",
      proxyPermission: [],
      role: "CONTACT",
      version: 0,
      warnings: [unknown("defaultPermissions")],
    });
  });
});
