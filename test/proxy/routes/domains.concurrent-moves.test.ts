// A tenant's write of domains it read in its own project, racing a move of one of them into a project it cannot see
// (or its removal, or a change of the public CA flag its quota check counted): the whole write fails with the answer
// to a concurrent change; the other project keeps the domain.
import { describe, expect, it } from "vitest";
import {
  ADMIN_AUTH,
  createApiUser,
  createBackend,
  errorBody,
  expectJson,
  massUpdate,
  rowsOf,
} from "../../support/proxy-api";
import { createWebProjects, webDomainOperation } from "../../support/proxy-fixtures";
import { racingDatabase, sendRacing } from "../../support/proxy-race";

const lostRace = (what: string) =>
  errorBody(`Unable to process ${what}: a concurrent change conflicted with this request, nothing was changed`);

/** Everything the tenant's write could have changed. */
async function stored() {
  return {
    domains: await rowsOf(
      `select domain_name, backend_id, public_ca_certificate, cert_provided, redirect_to_url, version
       from domains order by id`,
    ),
    backends: await rowsOf("select project_id, label, version from backends order by id"),
    projects: await rowsOf("select label, revision from projects order by id"),
    usage: await rowsOf("select * from project_usage order by project_id"),
    audit: await rowsOf("select actor, method, path, project_label from audit_log order by id"),
  };
}

/**
 * Projects <tag>mine (backends web, holding <tag>.example and <tag>-kept.example, and api) and <tag>theirs (backend
 * web), and a tenant who sees <tag>mine only; returns the tenant's Authorization header.
 */
async function tenantAndVictim(tag: string) {
  await createWebProjects([`${tag}mine`, `${tag}theirs`]);
  await createBackend(`${tag}mine`, { label: "api" });
  const operations = [`${tag}.example`, `${tag}-kept.example`].map((name) => webDomainOperation(name, `${tag}mine`));
  await expectJson(massUpdate(ADMIN_AUTH, { domainOperations: operations }), 200);
  return createApiUser(`${tag}user`, [`${tag}mine`]);
}

/** The race: the administrator moves <tag>.example into <tag>theirs, giving it a redirect of its own. */
const moveToTheirs = (tag: string) => async () => {
  const operation = {
    ...webDomainOperation(`${tag}.example`, `${tag}theirs`),
    redirectToUrl: "https://theirs.example",
  };
  await expectJson(massUpdate(ADMIN_AUTH, { domainOperations: [operation] }), 200);
};

/** Sends the tenant's write through a database where `meanwhile` runs first; expects it refused, changing nothing. */
async function expectLostRace(
  meanwhile: () => Promise<void>,
  request: Parameters<typeof sendRacing>[1],
  answer: { status: number; body: unknown },
) {
  let afterRace: Awaited<ReturnType<typeof stored>> | undefined;
  const db = racingDatabase(async () => {
    await meanwhile();
    afterRace = await stored();
  });
  expect(await expectJson(sendRacing(db, request), answer.status)).toEqual(answer.body);
  expect(afterRace).toBeDefined();
  expect(await stored()).toEqual(afterRace);
}

describe("a tenant's mass update racing a move out of its project", () => {
  it.each([
    ["UPDATE", "moves it back to the tenant's backend api", "api"],
    ["UPDATE", "rewrites its fields in place", "web"],
    ["DELETE", "deletes it from the backend it was read in", "web"],
  ])("%s that %s fails whole, the domain staying where the move put it", async (operation, _what, backend) => {
    const tag = `mu${operation.toLowerCase()}${backend}`;
    const auth = await tenantAndVictim(tag);
    const domainOperations = [
      { ...webDomainOperation(`${tag}.example`, `${tag}mine`, operation), backendLabel: backend, enableSSL: true },
      webDomainOperation(`${tag}-new.example`, `${tag}mine`),
    ];
    await expectLostRace(
      moveToTheirs(tag),
      { auth, method: "POST", path: "/domains/massupdate", body: { domainOperations } },
      { status: 500, body: lostRace("mass update") },
    );
    const [theirs] = await rowsOf(
      `select b.label, p.label as project, d.redirect_to_url from domains d join backends b on b.id = d.backend_id
       join projects p on p.id = b.project_id where d.domain_name = '${tag}.example'`,
    );
    expect(theirs).toEqual({ label: "web", project: `${tag}theirs`, redirect_to_url: "https://theirs.example" });
  });

  it("fullSync's removal of the domains it does not name fails whole", async () => {
    const auth = await tenantAndVictim("fsync");
    const body = {
      fullSync: true,
      domainOperations: [webDomainOperation("fsync-kept.example", "fsyncmine", "UPDATE")],
    };
    await expectLostRace(
      moveToTheirs("fsync"),
      { auth, method: "POST", path: "/domains/massupdate", body },
      { status: 500, body: lostRace("mass update") },
    );
    expect(await rowsOf("select count(*) as n from domains where domain_name = 'fsync.example'")).toEqual([{ n: 1 }]);
  });

  it("fails whole when the domain was removed meanwhile, re-creating nothing", async () => {
    const auth = await tenantAndVictim("gone");
    const removal = { domainOperations: [webDomainOperation("gone.example", "gonemine", "DELETE")] };
    const domainOperations = [webDomainOperation("gone.example", "gonemine", "UPDATE")];
    await expectLostRace(
      () => expectJson(massUpdate(ADMIN_AUTH, removal), 200),
      { auth, method: "POST", path: "/domains/massupdate", body: { domainOperations } },
      { status: 500, body: lostRace("mass update") },
    );
  });

  it("answers 412 first when If-Match names the tag the tenant read (the move bumped its project)", async () => {
    const auth = await tenantAndVictim("ifm");
    const [{ id, revision }] = (await rowsOf("select id, revision from projects where label = 'ifmmine'")) as {
      id: number;
      revision: number;
    }[];
    const domainOperations = [{ ...webDomainOperation("ifm.example", "ifmmine", "UPDATE"), backendLabel: "api" }];
    const now = `"p${id}.r${revision + 1}"`;
    await expectLostRace(
      moveToTheirs("ifm"),
      {
        auth,
        method: "POST",
        path: "/domains/massupdate",
        body: { domainOperations },
        headers: { "If-Match": `"p${id}.r${revision}"` },
      },
      {
        status: 412,
        body: errorBody(
          `Precondition failed: If-Match names no current ETag of project ifmmine (it is ${now}), nothing was changed`,
        ),
      },
    );
  });

  it("goes through when what moved meanwhile is another domain", async () => {
    const auth = await tenantAndVictim("calm");
    const db = racingDatabase(moveToTheirs("calm"));
    const domainOperations = [
      { ...webDomainOperation("calm-kept.example", "calmmine", "UPDATE"), backendLabel: "api" },
    ];
    expect(
      await expectJson(
        sendRacing(db, { auth, method: "POST", path: "/domains/massupdate", body: { domainOperations } }),
        200,
      ),
    ).toEqual([]);
    expect(
      await rowsOf(
        `select d.domain_name, p.label as project, b.label from domains d join backends b on b.id = d.backend_id
         join projects p on p.id = b.project_id where d.domain_name like 'calm%' order by d.domain_name`,
      ),
    ).toEqual([
      { domain_name: "calm-kept.example", project: "calmmine", label: "api" },
      { domain_name: "calm.example", project: "calmtheirs", label: "web" },
    ]);
  });
});

describe("a tenant's backend update racing a move out of its project", () => {
  it.each([
    ["removes it from the list", (tag: string) => [{ domainName: `${tag}-kept.example` }]],
    [
      "rewrites its redirect",
      (tag: string) => [
        { domainName: `${tag}-kept.example` },
        { domainName: `${tag}.example`, redirectToUrl: "https://mallory.example" },
      ],
    ],
  ])("that %s fails whole, the domain staying where the move put it", async (what, forwardings) => {
    const tag = what.startsWith("removes") ? "beremove" : "beredirect";
    const auth = await tenantAndVictim(tag);
    await expectLostRace(
      moveToTheirs(tag),
      {
        auth,
        method: "POST",
        path: `/backends/${tag}mine`,
        body: { label: "web", port: 8080, domainForwardings: forwardings(tag) },
      },
      { status: 500, body: lostRace("backend create/update") },
    );
    const [theirs] = await rowsOf(`select redirect_to_url from domains where domain_name = '${tag}.example'`);
    expect(theirs).toEqual({ redirect_to_url: "https://theirs.example" });
  });
});

describe("a write that keeps a domain's public CA certificate, racing a change of that flag", () => {
  it("fails whole: its quota check counted the domain as it read it", async () => {
    const auth = await tenantAndVictim("pcaflag");
    const withSsl = (enableSSL: boolean) => ({
      domainOperations: [{ ...webDomainOperation("pcaflag.example", "pcaflagmine", "UPDATE"), enableSSL }],
    });
    await expectJson(massUpdate(ADMIN_AUTH, withSsl(true)), 200);
    await expectLostRace(
      async () => {
        await expectJson(massUpdate(ADMIN_AUTH, withSsl(false)), 200);
      },
      { auth, method: "POST", path: "/domains/massupdate", body: withSsl(true) },
      { status: 500, body: lostRace("mass update") },
    );
    expect(await rowsOf("select public_ca_certificate from domains where domain_name = 'pcaflag.example'")).toEqual([
      { public_ca_certificate: 0 },
    ]);
  });
});
