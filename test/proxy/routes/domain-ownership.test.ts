// Domain ownership between projects (issue 27, item 5): a tenant may not create, or move in, a domain under or above a
// name another project holds, through POST /backends or the mass update; the check is part of the write's batch
// (concurrent claims: one wins), the administrator passes it, and a top-level name claims nothing. Nothing is stored
// on refusal.
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { as, asAdmin, createApiUser, errorBody, expectJson, massUpdate } from "../../support/proxy-api";
import { createWebProjects, webDomainOperation as op } from "../../support/proxy-fixtures";

/** Every domain with its project, and how many audit entries and backends exist: what a refusal must leave as it was. */
async function stored() {
  const domains = await env.DB.prepare(
    `select d.domain_name, p.label as project, d.version from domains d join backends b on b.id = d.backend_id
     join projects p on p.id = b.project_id order by d.domain_name`,
  ).all();
  const counts = await env.DB.prepare(
    "select (select count(*) from audit_log) as audit, (select count(*) from backends) as backends",
  ).first();
  return { domains: domains.results, counts };
}

const projectOf = (domainName: string) =>
  env.DB.prepare(
    `select p.label from domains d join backends b on b.id = d.backend_id join projects p on p.id = b.project_id
     where d.domain_name = ?`,
  )
    .bind(domainName)
    .first<string>("label");

let alpha: string;
let beta: string;
let both: string;

beforeAll(async () => {
  await createWebProjects(["owalpha", "owbeta", "owgamma"]);
  alpha = await createApiUser("owalphauser", ["owalpha"]);
  beta = await createApiUser("owbetauser", ["owbeta"]);
  both = await createApiUser("owbothuser", ["owalpha|owbeta"]);
  await expectJson(massUpdate(beta, { domainOperations: [op("beta-corp.example", "owbeta")] }), 200);
  await expectJson(massUpdate(beta, { domainOperations: [op("x.shop-b.example", "owbeta")] }), 200);
});

describe("the name another project holds", () => {
  it("stays refused as before (500, the answers of the original), storing nothing", async () => {
    const before = await stored();
    expect(
      await expectJson(massUpdate(alpha, { domainOperations: [op("beta-corp.example", "owalpha")] }), 500),
    ).toEqual(
      errorBody(
        "Unable to process mass update: beta-corp.example: assigned to a project not existing or access denied",
      ),
    );
    expect(
      await expectJson(
        as(alpha, "/backends/owalpha", "POST", {
          label: "web",
          domainForwardings: [{ domainName: "beta-corp.example" }],
        }),
        500,
      ),
    ).toEqual(
      errorBody(
        "Unable to process backend create/update: beta-corp.example: domain is already assigned to another backend",
      ),
    );
    expect(await stored()).toEqual(before);
  });
});

describe("a name under another project's domain", () => {
  const refusal = errorBody("login.beta-corp.example: under beta-corp.example, which another project holds");

  it("is refused to a tenant's mass update with 409, storing nothing (dry run too)", async () => {
    const before = await stored();
    const body = { domainOperations: [op("login.beta-corp.example", "owalpha")] };
    expect(await expectJson(massUpdate(alpha, body), 409)).toEqual(refusal);
    expect(await expectJson(as(alpha, "/domains/massupdate?dryRun=true", "POST", body), 409)).toEqual(refusal);
    expect(await stored()).toEqual(before);
  });

  it("is refused when a backend is created or updated with it, storing nothing", async () => {
    const before = await stored();
    const forwarding = { domainForwardings: [{ domainName: "login.beta-corp.example" }] };
    expect(await expectJson(as(alpha, "/backends/owalpha", "POST", { label: "phish", ...forwarding }), 409)).toEqual(
      refusal,
    );
    expect(await expectJson(as(alpha, "/backends/owalpha", "POST", { label: "web", ...forwarding }), 409)).toEqual(
      refusal,
    );
    expect(await stored()).toEqual(before);
  });

  it("refuses the whole mass update when one operation breaks the rule", async () => {
    const before = await stored();
    const body = {
      domainOperations: [op("fine.alpha-own.example", "owalpha"), op("a.b.beta-corp.example", "owalpha")],
    };
    expect(await expectJson(massUpdate(alpha, body), 409)).toEqual(
      errorBody("a.b.beta-corp.example: under beta-corp.example, which another project holds"),
    );
    expect(await stored()).toEqual(before);
  });

  it("is accepted for the project that holds the domain above", async () => {
    // Not login.: the refusals above ask for that name, and must find it free whichever test runs first.
    await expectJson(massUpdate(beta, { domainOperations: [op("members.beta-corp.example", "owbeta")] }), 200);
    expect(await projectOf("members.beta-corp.example")).toBe("owbeta");
  });
});

describe("a name above another project's domain", () => {
  it("is refused with 409 without naming the names under it", async () => {
    const before = await stored();
    expect(await expectJson(massUpdate(alpha, { domainOperations: [op("shop-b.example", "owalpha")] }), 409)).toEqual(
      errorBody("shop-b.example: another project holds names under it"),
    );
    expect(await stored()).toEqual(before);
  });
});

describe("moving domains between projects", () => {
  it("checks the state the request leaves: a parent and its child may move together, the child alone not", async () => {
    await expectJson(
      massUpdate(beta, { domainOperations: [op("pair.example", "owbeta"), op("c.pair.example", "owbeta")] }),
      200,
    );
    const before = await stored();
    expect(
      await expectJson(massUpdate(both, { domainOperations: [op("c.pair.example", "owalpha", "UPDATE")] }), 409),
    ).toEqual(errorBody("c.pair.example: under pair.example, which another project holds"));
    expect(await stored()).toEqual(before);
    await expectJson(
      massUpdate(both, {
        domainOperations: [op("pair.example", "owalpha", "UPDATE"), op("c.pair.example", "owalpha", "UPDATE")],
      }),
      200,
    );
    expect([await projectOf("pair.example"), await projectOf("c.pair.example")]).toEqual(["owalpha", "owalpha"]);
  });
});

describe("who passes the rule", () => {
  it("lets the administrator give a project a name under another's", async () => {
    await expectJson(
      asAdmin("/domains/massupdate", "POST", { domainOperations: [op("adm.beta-corp.example", "owalpha")] }),
      200,
    );
    expect(await projectOf("adm.beta-corp.example")).toBe("owalpha");
  });

  it("lets no top-level name claim the names under it", async () => {
    await expectJson(asAdmin("/domains/massupdate", "POST", { domainOperations: [op("owtld", "owgamma")] }), 200);
    await expectJson(massUpdate(alpha, { domainOperations: [op("site.owtld", "owalpha")] }), 200);
    expect(await projectOf("site.owtld")).toBe("owalpha");
  });
});

describe("concurrent claims", () => {
  it("let exactly one of two neighbouring names in, whichever batch runs first", async () => {
    const answers = await Promise.all([
      massUpdate(alpha, { domainOperations: [op("race.example", "owalpha")] }),
      massUpdate(beta, { domainOperations: [op("x.race.example", "owbeta")] }),
    ]);
    const statuses = answers.map((answer) => answer.status).sort();
    expect(statuses).toEqual([200, 409]);
    const refused = await answers.find((answer) => answer.status === 409)!.json();
    expect([
      errorBody("race.example: another project holds names under it"),
      errorBody("x.race.example: under race.example, which another project holds"),
    ]).toContainEqual(refused);
    const held = [await projectOf("race.example"), await projectOf("x.race.example")];
    expect(held.filter((project) => project !== null)).toHaveLength(1);
  });
});
