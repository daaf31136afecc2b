// SSH grants and a container's address changed by two requests at once: the administrator's grant never lands on an
// address it did not read (its write fails whole), and a tenant's write that leaves the container at another address
// than the stored one removes the grants, though the address it read was the one it posts.
import { beforeAll, describe, expect, it } from "vitest";
import { ADMIN_AUTH, as, asAdmin, createApiUser, errorBody, expectJson, rowsOf } from "../../support/proxy-api";
import { createProjectOnHost } from "../../support/proxy-fixtures";
import { racingDatabase, sendRacing } from "../../support/proxy-race";

const HOST = "cg-host.hosts.example";
const GRANT = [{ permission: "www-data", userEmail: "dev@cg.example" }];

/** Everything these writes could change. */
async function stored() {
  return {
    containers: await rowsOf("select project_id, label, host_id, ipv6, fullname, version from containers order by id"),
    permissions: await rowsOf(
      "select container_id, user_id, permission, version from container_permissions order by id",
    ),
    projects: await rowsOf("select label, revision from projects order by id"),
    audit: await rowsOf("select count(*) as n from audit_log"),
  };
}

/** The container's address and the permissions granted on it. */
const containerOf = async (label: string) => ({
  ipv6: (await rowsOf(`select ipv6 from containers where label = '${label}'`)).map((row) => row.ipv6),
  permissions: (
    await rowsOf(
      `select p.permission from container_permissions p join containers c on c.id = p.container_id
       where c.label = '${label}' order by p.permission`,
    )
  ).map((row) => row.permission),
});

let tenant: string;
const tenantPost = (body: object) => expectJson(as(tenant, "/containers/cgone", "POST", body), 200);
const grant = (label: string) => expectJson(asAdmin(`/admin/containers/cgone/${label}/permissions`, "PUT", GRANT), 200);

beforeAll(async () => {
  await createProjectOnHost("cgone", { hostname: HOST, ipv6: "2001:db8:c9::1", containers: {} });
  await expectJson(asAdmin("/admin/users", "POST", { email: "dev@cg.example" }), 200);
  tenant = await createApiUser("cgtenant", ["cgone"]);
});

describe("the administrator's PUT permissions racing a tenant's write of the container", () => {
  it("fails whole when the tenant changed the address it read, granting nothing there", async () => {
    await tenantPost({ label: "moved", hostname: HOST, ipv6: "2001:db8:c9::10" });
    let afterRace: Awaited<ReturnType<typeof stored>> | undefined;
    const db = racingDatabase(async () => {
      await tenantPost({ label: "moved", ipv6: "2001:db8:c9::11" });
      afterRace = await stored();
    });
    const answer = sendRacing(db, {
      auth: ADMIN_AUTH,
      method: "PUT",
      path: "/admin/containers/cgone/moved/permissions",
      body: GRANT,
    });
    expect(await expectJson(answer, 500)).toEqual(
      errorBody(
        "Unable to process permission update: a concurrent change conflicted with this request, nothing was changed",
      ),
    );
    expect(afterRace).toBeDefined();
    expect(await stored()).toEqual(afterRace);
    expect(await containerOf("moved")).toEqual({ ipv6: ["2001:db8:c9::11"], permissions: [] });
  });

  it("grants when the tenant changed other fields meanwhile", async () => {
    await tenantPost({ label: "renamed", hostname: HOST, ipv6: "2001:db8:c9::20" });
    const db = racingDatabase(() => tenantPost({ label: "renamed", fullname: "Renamed" }));
    const answer = sendRacing(db, {
      auth: ADMIN_AUTH,
      method: "PUT",
      path: "/admin/containers/cgone/renamed/permissions",
      body: GRANT,
    });
    expect(await expectJson(answer, 200)).toMatchObject({ ipv6: "2001:db8:c9::20", fullname: "Renamed" });
    expect(await containerOf("renamed")).toEqual({ ipv6: ["2001:db8:c9::20"], permissions: ["www-data"] });
  });
});

describe("a tenant's address write racing the administrator", () => {
  /** The tenant's POST of `body` through a database where `meanwhile` runs between its reads and its batch. */
  const racingTenant = (meanwhile: () => Promise<unknown>, body: object) =>
    expectJson(
      sendRacing(racingDatabase(meanwhile), { auth: tenant, method: "POST", path: "/containers/cgone", body }),
      200,
    );
  const removedOne = (label: string) =>
    `WARN: the address of container ${label} changed, so its 1 SSH permission(s) were removed; an administrator may grant them again`;

  it("removes the grants when it moves the container back from where the administrator moved it", async () => {
    await tenantPost({ label: "back", hostname: HOST, ipv6: "2001:db8:c9::30" });
    await grant("back");
    // The tenant posts the address it read; meanwhile the administrator's move kept the grants.
    const adminMove = () =>
      expectJson(asAdmin("/containers/cgone", "POST", { label: "back", ipv6: "2001:db8:c9::31" }), 200);
    const body = await racingTenant(adminMove, { label: "back", ipv6: "2001:db8:c9::30", fullname: "Back" });
    expect(body.warnings).toEqual([removedOne("back")]);
    expect(await containerOf("back")).toEqual({ ipv6: ["2001:db8:c9::30"], permissions: [] });
  });

  it("removes the grants the administrator gave at the old address meanwhile", async () => {
    await tenantPost({ label: "late", hostname: HOST, ipv6: "2001:db8:c9::40" });
    const body = await racingTenant(() => grant("late"), { label: "late", ipv6: "2001:db8:c9::41" });
    expect(body.warnings).toEqual([removedOne("late")]);
    expect(await containerOf("late")).toEqual({ ipv6: ["2001:db8:c9::41"], permissions: [] });
  });

  it("keeps the grants when the address stays the stored one, in another spelling", async () => {
    await tenantPost({ label: "kept", hostname: HOST, ipv6: "2001:db8:c9::50" });
    await grant("kept");
    const rename = () => tenantPost({ label: "kept", fullname: "Kept" });
    const body = await racingTenant(rename, { label: "kept", ipv6: "2001:DB8:C9:0::50" });
    expect(body.warnings).toEqual([]);
    expect(await containerOf("kept")).toEqual({ ipv6: ["2001:db8:c9::50"], permissions: ["www-data"] });
  });
});
