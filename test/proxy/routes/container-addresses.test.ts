// Container and host addresses against each other (issue 27, item 4): a container may not take a registered host's
// address, nor a host a container's; a tenant's address change removes the container's SSH grants (with a warning),
// the administrator's keeps them; the metadata and NAT64 ranges added. Each refusal stores nothing.
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { as, asAdmin, createApiUser, createHost, errorBody, expectJson, rowsOf } from "../../support/proxy-api";
import { createProjectOnHost } from "../../support/proxy-fixtures";

const KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGFubmE= anna@laptop";
const HOST = "ca-host.hosts.example";
const HOST_ADDRESS = "2001:db8:ca::1";

/** Everything these writes could change. */
async function stored() {
  return {
    containers: await rowsOf("select project_id, label, host_id, ipv6, version from containers order by id"),
    hosts: await rowsOf("select hostname, ipv6, version from hosts order by id"),
    permissions: await rowsOf("select container_id, user_id, permission from container_permissions order by id"),
    audit: await rowsOf("select count(*) as n from audit_log"),
  };
}

const permissionsOf = (project: string, container: string) =>
  env.DB.prepare(
    `select cp.permission from container_permissions cp join containers c on c.id = cp.container_id
     join projects p on p.id = c.project_id where p.label = ? and c.label = ? order by cp.permission`,
  )
    .bind(project, container)
    .all<{ permission: string }>()
    .then((result) => result.results.map((row) => row.permission));

const lastAudit = () =>
  env.DB.prepare("select actor, role, summary from audit_log order by id desc limit 1")
    .first<{ actor: string; role: string; summary: string }>()
    .then((row) => ({ ...row!, summary: JSON.parse(row!.summary) }));

/** The root and www-data grants of ops@ca.example, as the audit names them. */
async function opsGrants() {
  const userId = await env.DB.prepare("select id from users where email = 'ops@ca.example'").first<number>("id");
  return [
    { userId, permission: "root" },
    { userId, permission: "www-data" },
  ];
}

let tenant: string;
/** The tenant's POST /containers/caone (with a query such as ?dryRun=true), expecting this status. */
const tenantPost = (body: object, status: number, query = "") =>
  expectJson(as(tenant, `/containers/caone${query}`, "POST", body), status);
/** The administrator's POST /containers/caone, expecting this status. */
const adminPost = (body: object, status: number, query = "") =>
  expectJson(asAdmin(`/containers/caone${query}`, "POST", body), status);

beforeAll(async () => {
  await createProjectOnHost("caone", { hostname: HOST, ipv6: HOST_ADDRESS, containers: {} });
  await expectJson(asAdmin("/admin/users", "POST", { email: "ops@ca.example", sshPublicKey: KEY }), 200);
  tenant = await createApiUser("catenant", ["caone"]);
});

/** A container of project caone with SSH grants root and www-data for ops@ca.example. */
async function grantedContainer(label: string, ipv6: string) {
  await tenantPost({ label, hostname: HOST, ipv6 }, 200);
  await expectJson(
    asAdmin(`/admin/containers/caone/${label}/permissions`, "PUT", [
      { permission: "root", userEmail: "ops@ca.example" },
      { permission: "www-data", userEmail: "ops@ca.example" },
    ]),
    200,
  );
}

describe("a container at a host's address", () => {
  it("is refused with 409 on create, in any spelling, storing nothing", async () => {
    const before = await stored();
    for (const ipv6 of [HOST_ADDRESS, "2001:DB8:CA:0::0001"]) {
      expect(await tenantPost({ label: "onhost", hostname: HOST, ipv6 }, 409)).toEqual(
        errorBody("Invalid container: address 2001:db8:ca::1 is the address of a registered host"),
      );
    }
    expect(await stored()).toEqual(before);
  });

  it("is refused with 409 when an existing container moves there, for the administrator too", async () => {
    await tenantPost({ label: "mover", hostname: HOST, ipv6: "2001:db8:ca::10" }, 200);
    const before = await stored();
    const refusal = errorBody("Invalid container: address 2001:db8:ca::1 is the address of a registered host");
    expect(await tenantPost({ label: "mover", ipv6: HOST_ADDRESS }, 409)).toEqual(refusal);
    expect(await adminPost({ label: "mover", ipv6: HOST_ADDRESS }, 409, "?dryRun=true")).toEqual(refusal);
    expect(await adminPost({ label: "mover", ipv6: HOST_ADDRESS }, 409)).toEqual(refusal);
    expect(await stored()).toEqual(before);
  });

  it("refuses to register a host, or move one, at a container's address (409), storing nothing", async () => {
    await tenantPost({ label: "taken", hostname: HOST, ipv6: "2001:db8:ca::20" }, 200);
    await createHost("ca-other.hosts.example", "2001:db8:ca::2");
    const before = await stored();
    const refusal = errorBody("Invalid host: address 2001:db8:ca::20 is already used by a container");
    for (const hostname of ["ca-new.hosts.example", "ca-other.hosts.example"]) {
      expect(await expectJson(asAdmin("/admin/hosts", "POST", { hostname, ipv6: "2001:DB8:CA::20" }), 409)).toEqual(
        refusal,
      );
    }
    expect(await stored()).toEqual(before);
  });

  it("lets a host be posted again at its own address", async () => {
    expect(
      await expectJson(asAdmin("/admin/hosts", "POST", { hostname: HOST, ipv6: HOST_ADDRESS }), 200),
    ).toMatchObject({
      hostname: HOST,
      ipv6: HOST_ADDRESS,
    });
  });
});

describe("the ranges added in issue 27", () => {
  it.each([
    ["fd20:ce::254", "is a cloud metadata address"],
    [
      "64:ff9b:1::7f00:1",
      "is in the local-use NAT64 prefix 64:ff9b:1::/48 (RFC 8215), which may embed any IPv4 address",
    ],
  ])("refuses %s with 400 for containers and hosts, storing nothing", async (ipv6, reason) => {
    const before = await stored();
    expect(await tenantPost({ label: "meta", hostname: HOST, ipv6 }, 400)).toEqual(errorBody(`ipv6: ${reason}`));
    expect(await expectJson(asAdmin("/admin/hosts", "POST", { hostname: "ca-meta.hosts.example", ipv6 }), 400)).toEqual(
      errorBody(`ipv6: ${reason}`),
    );
    expect(await stored()).toEqual(before);
  });
});

describe("SSH grants when the address changes", () => {
  it("are removed in the same write when a tenant changes the address, and the answer and the audit say so", async () => {
    await grantedContainer("tenmove", "2001:db8:ca::30");
    const body = await tenantPost({ label: "tenmove", ipv6: "2001:db8:ca::31" }, 200);
    expect(body).toEqual({
      success: true,
      payload: { key: "containerId", value: expect.any(Number) },
      warnings: [
        "WARN: the address of container tenmove changed, so its 2 SSH permission(s) were removed; an administrator may grant them again",
      ],
    });
    expect(await permissionsOf("caone", "tenmove")).toEqual([]);
    expect(await lastAudit()).toEqual({
      actor: "catenant",
      role: "tenant",
      summary: {
        action: "update",
        containerLabel: "tenmove",
        containerId: body.payload.value,
        fields: ["ipv6"],
        ipv6: "2001:db8:ca::31",
        permissionsRemoved: await opsGrants(),
      },
    });
  });

  it("answers a tenant's dry run the same, removing nothing", async () => {
    await grantedContainer("tendry", "2001:db8:ca::40");
    const before = await stored();
    expect(await tenantPost({ label: "tendry", ipv6: "2001:db8:ca::41" }, 200, "?dryRun=true")).toMatchObject({
      warnings: [
        "WARN: the address of container tendry changed, so its 2 SSH permission(s) were removed; an administrator may grant them again",
      ],
    });
    expect(await stored()).toEqual(before);
  });

  it("stay when the administrator changes the address, which the audit records", async () => {
    await grantedContainer("admove", "2001:db8:ca::50");
    const body = await adminPost({ label: "admove", ipv6: "2001:db8:ca::51" }, 200);
    expect(body.warnings).toEqual([]);
    expect(await permissionsOf("caone", "admove")).toEqual(["root", "www-data"]);
    expect(await lastAudit()).toMatchObject({
      role: "admin",
      summary: {
        ipv6: "2001:db8:ca::51",
        permissionsKept: await opsGrants(),
      },
    });
  });

  it("stay when a tenant's update keeps the address (in another spelling) or changes other fields", async () => {
    await grantedContainer("tenkeep", "2001:db8:ca::60");
    const body = await tenantPost({ label: "tenkeep", ipv6: "2001:DB8:CA:0::60", fullname: "Kept" }, 200);
    expect(body.warnings).toEqual([]);
    expect(await permissionsOf("caone", "tenkeep")).toEqual(["root", "www-data"]);
    expect((await lastAudit()).summary).not.toHaveProperty("permissionsRemoved");
  });

  it("leave a tenant's address change without grants free of warnings", async () => {
    await tenantPost({ label: "bare", hostname: HOST, ipv6: "2001:db8:ca::70" }, 200);
    const body = await tenantPost({ label: "bare", ipv6: "2001:db8:ca::71" }, 200);
    expect(body.warnings).toEqual([]);
    expect((await lastAudit()).summary).toEqual({
      action: "update",
      containerLabel: "bare",
      containerId: body.payload.value,
      fields: ["ipv6"],
      ipv6: "2001:db8:ca::71",
    });
  });
});
