// Zones (issue 27, item 5): PUT/GET/DELETE /admin/zones, administrator only, audit-logged, with dry runs; a name in a
// zone may be held by the zone's project only, whoever writes it (the innermost zone decides), and inside it the rule
// on neighbouring names does not apply; an assignment over another project's domains is refused naming them.
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { as, asAdmin, createApiUser, errorBody, expectJson, massUpdate, rowsOf } from "../fixtures";
import { createWebProjects, webDomainOperation as op } from "../../support/proxy-fixtures";

const assign = (name: string, projectLabel: string, query = "") =>
  asAdmin(`/admin/zones/${name}${query}`, "PUT", { projectLabel });

async function stored() {
  return {
    zones: await rowsOf("select name, reversed_name, project_id, version from zones order by name"),
    domains: await rowsOf("select domain_name, backend_id from domains order by domain_name"),
    audit: await rowsOf("select count(*) as n from audit_log"),
  };
}

const lastAudit = () =>
  env.DB.prepare("select actor, role, method, path, project_label, summary from audit_log order by id desc limit 1")
    .first<Record<string, string>>()
    .then((row) => ({ ...row!, summary: JSON.parse(row!.summary) }));

let alpha: string;
let beta: string;
const ids: Record<string, number> = {};

beforeAll(async () => {
  await createWebProjects(["zalpha", "zbeta", "zgamma"]);
  for (const row of (await env.DB.prepare("select id, label from projects").all<{ id: number; label: string }>())
    .results)
    ids[row.label] = row.id;
  alpha = await createApiUser("zalphauser", ["zalpha"]);
  beta = await createApiUser("zbetauser", ["zbeta"]);
});

describe("PUT, GET and DELETE /admin/zones", () => {
  it("assigns a zone, lists it, records it and removes it", async () => {
    expect(await expectJson(assign("zone-a.example", "zalpha"), 200)).toEqual({
      name: "zone-a.example",
      projectLabel: "zalpha",
      version: 0,
    });
    expect(await lastAudit()).toEqual({
      actor: "admin",
      role: "admin",
      method: "PUT",
      path: "/admin/zones/zone-a.example",
      project_label: "zalpha",
      summary: { action: "create", zone: "zone-a.example", projectId: ids.zalpha },
    });
    expect(await expectJson(assign("zone-a.example", "zbeta"), 200)).toEqual({
      name: "zone-a.example",
      projectLabel: "zbeta",
      version: 1,
    });
    expect((await lastAudit()).summary).toEqual({
      action: "update",
      zone: "zone-a.example",
      projectId: ids.zbeta,
      previousProjectId: ids.zalpha,
    });
    expect(await expectJson(asAdmin("/admin/zones"), 200)).toContainEqual({
      name: "zone-a.example",
      projectLabel: "zbeta",
      version: 1,
    });
    expect(await expectJson(asAdmin("/admin/zones/zone-a.example", "DELETE"), 200)).toEqual({
      success: true,
      payload: "Deleted zone zone-a.example",
      warnings: [],
    });
    expect((await lastAudit()).summary).toEqual({ action: "delete", zone: "zone-a.example", projectId: ids.zbeta });
    expect(await expectJson(asAdmin("/admin/zones/zone-a.example", "DELETE"), 404)).toEqual(
      errorBody("Invalid zone: zone-a.example not existing"),
    );
  });

  it("answers a dry run as the write, storing nothing", async () => {
    const before = await stored();
    expect(await expectJson(assign("dry.example", "zalpha", "?dryRun=true"), 200)).toEqual({
      name: "dry.example",
      projectLabel: "zalpha",
      version: 0,
    });
    expect(await stored()).toEqual(before);
  });

  it("refuses tenants (403), bad names (400) and unknown projects (404), storing nothing", async () => {
    const before = await stored();
    expect(await expectJson(as(alpha, "/admin/zones/t.example", "PUT", { projectLabel: "zalpha" }), 403)).toEqual(
      errorBody("Administrator access required"),
    );
    expect(await expectJson(as(alpha, "/admin/zones"), 403)).toEqual(errorBody("Administrator access required"));
    expect(await expectJson(assign("bad_name", "zalpha"), 400)).toEqual(
      errorBody("name: must be a host name (letters, digits, hyphens, dots)"),
    );
    expect(await expectJson(assign("n.example", "zmissing"), 404)).toEqual(
      errorBody("Invalid project: label zmissing not existing"),
    );
    expect(await expectJson(asAdmin("/admin/zones/n.example", "PUT", { projectLabel: "Not A Label" }), 400)).toEqual(
      errorBody("projectLabel: must be 2 to 32 lowercase letters or digits"),
    );
    expect(await stored()).toEqual(before);
  });
});

describe("names in a zone", () => {
  beforeAll(async () => {
    await expectJson(assign("zoned.example", "zalpha"), 200);
  });

  it("are refused to other projects, the administrator's writes included (409)", async () => {
    const before = await stored();
    const refusal = errorBody("w.zoned.example: inside the zone zoned.example, which is assigned to another project");
    expect(await expectJson(massUpdate(beta, { domainOperations: [op("w.zoned.example", "zbeta")] }), 409)).toEqual(
      refusal,
    );
    expect(
      await expectJson(
        asAdmin("/domains/massupdate", "POST", { domainOperations: [op("w.zoned.example", "zbeta")] }),
        409,
      ),
    ).toEqual(refusal);
    expect(
      await expectJson(
        as(beta, "/backends/zbeta", "POST", { label: "web", domainForwardings: [{ domainName: "zoned.example" }] }),
        409,
      ),
    ).toEqual(errorBody("zoned.example: inside the zone zoned.example, which is assigned to another project"));
    expect(await stored()).toEqual(before);
  });

  it("are the zone's project's, even under a name another project holds outside the zone", async () => {
    await expectJson(massUpdate(beta, { domainOperations: [op("outer-z.example", "zbeta")] }), 200);
    await expectJson(assign("in.outer-z.example", "zalpha"), 200);
    await expectJson(massUpdate(alpha, { domainOperations: [op("www.in.outer-z.example", "zalpha")] }), 200);
    // Outside the zone the rule on neighbours still holds.
    expect(
      await expectJson(massUpdate(alpha, { domainOperations: [op("other.outer-z.example", "zalpha")] }), 409),
    ).toEqual(errorBody("other.outer-z.example: under outer-z.example, which another project holds"));
  });

  it("follow the innermost zone", async () => {
    await expectJson(assign("n.example", "zalpha"), 200);
    await expectJson(assign("b.n.example", "zbeta"), 200);
    await expectJson(massUpdate(beta, { domainOperations: [op("x.b.n.example", "zbeta")] }), 200);
    await expectJson(massUpdate(alpha, { domainOperations: [op("a.n.example", "zalpha")] }), 200);
    expect(await expectJson(massUpdate(alpha, { domainOperations: [op("y.b.n.example", "zalpha")] }), 409)).toEqual(
      errorBody("y.b.n.example: inside the zone b.n.example, which is assigned to another project"),
    );
  });

  it("keep a tenant from a name above a zone of another project", async () => {
    await expectJson(assign("deep.up.example", "zbeta"), 200);
    expect(await expectJson(massUpdate(alpha, { domainOperations: [op("up.example", "zalpha")] }), 409)).toEqual(
      errorBody("up.example: a zone under it is assigned to another project"),
    );
  });
});

describe("assigning a zone over other projects' domains", () => {
  it("is refused with 409 naming them (not those inside a deeper zone), storing nothing", async () => {
    await expectJson(
      massUpdate(alpha, { domainOperations: [op("m.busy.example", "zalpha"), op("busy.example", "zalpha")] }),
      200,
    );
    await expectJson(assign("d.busy.example", "zbeta"), 200);
    await expectJson(massUpdate(beta, { domainOperations: [op("q.d.busy.example", "zbeta")] }), 200);
    const before = await stored();
    expect(await expectJson(assign("busy.example", "zgamma"), 409)).toEqual(
      errorBody(
        "Invalid zone: busy.example holds domains of other projects (busy.example, m.busy.example); move or delete them first, nothing was changed",
      ),
    );
    expect(await expectJson(assign("busy.example", "zgamma", "?dryRun=true"), 409)).toMatchObject({ success: false });
    expect(await stored()).toEqual(before);
    // The project holding them may be given the zone.
    expect(await expectJson(assign("busy.example", "zalpha"), 200)).toMatchObject({ projectLabel: "zalpha" });
  });
});
