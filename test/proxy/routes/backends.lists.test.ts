// The lists of POST /backends/{p}: at most MAX_BACKEND_LIST_ITEMS domain forwardings and container references (one
// more answers 400 before any check walks them), and a repeated container named as before, found in one pass.
import { createExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import worker from "../../../src/index";
import { MAX_BACKEND_LIST_ITEMS } from "../../../src/proxy/installation/inputs";
import { as, createApiUser, createProject, errorBody, expectJson, rowsOf } from "../../support/proxy-api";

/** Everything a refused backend write must leave as it was. */
async function stored() {
  return {
    backends: await rowsOf("select project_id, label, port, version from backends order by id"),
    domains: await rowsOf("select count(*) as n from domains"),
    links: await rowsOf("select backend_id, container_id from backend_containers order by id"),
    projects: await rowsOf("select label, revision from projects order by id"),
    audit: await rowsOf("select count(*) as n from audit_log"),
  };
}

/** Container ids no project holds, from `first` on. */
const absentIds = (count: number, first = 1_000_000) => Array.from({ length: count }, (_, i) => first + i);
const references = (ids: number[]) => ids.map((containerId) => ({ containerId }));

describe("domainForwardings", () => {
  it(`stores ${MAX_BACKEND_LIST_ITEMS} and refuses one more with 400, storing nothing`, async () => {
    expect(MAX_BACKEND_LIST_ITEMS).toBe(5000);
    await createProject("listdomains");
    const tenant = await createApiUser("listdomainsuser", ["listdomains"]);
    const forwardings = (count: number) =>
      Array.from({ length: count }, (_, i) => ({ domainName: `d${i}.listdomains.example` }));
    // The per-project quota (2500 by default) is raised so that the list's own bound is the one met.
    const post = (count: number) =>
      worker.fetch(
        new Request("http://example.com/backends/listdomains", {
          method: "POST",
          headers: { Authorization: tenant, "content-type": "application/json" },
          body: JSON.stringify({ label: "web", domainForwardings: forwardings(count) }),
        }),
        { ...env, PROXY_MAX_DOMAINS_PER_PROJECT: "6000" } as unknown as Env,
        createExecutionContext(),
      );

    const before = await stored();
    expect(await expectJson(post(MAX_BACKEND_LIST_ITEMS + 1), 400)).toEqual(
      errorBody("domainForwardings: Too big: expected array to have <=5000 items"),
    );
    expect(await stored()).toEqual(before);

    expect(await expectJson(post(MAX_BACKEND_LIST_ITEMS), 200)).toMatchObject({ success: true });
    expect(
      await rowsOf(
        `select count(*) as n from domains d join backends b on b.id = d.backend_id
         join projects p on p.id = b.project_id where p.label = 'listdomains'`,
      ),
    ).toEqual([{ n: MAX_BACKEND_LIST_ITEMS }]);
  });
});

describe("backendContainers", () => {
  it(`passes ${MAX_BACKEND_LIST_ITEMS} on to the next check, refuses one more with 400, storing nothing`, async () => {
    await createProject("listrefs");
    const tenant = await createApiUser("listrefsuser", ["listrefs"]);
    const post = (ids: number[]) =>
      as(tenant, "/backends/listrefs", "POST", { label: "web", backendContainers: references(ids) });
    const before = await stored();
    expect(await expectJson(post(absentIds(MAX_BACKEND_LIST_ITEMS + 1)), 400)).toEqual(
      errorBody("backendContainers: Too big: expected array to have <=5000 items"),
    );
    // At the bound the schema lets the list through: what answers is the check that the containers exist.
    expect(await expectJson(post(absentIds(MAX_BACKEND_LIST_ITEMS)), 500)).toEqual(
      errorBody(
        "Unable to process backend create/update: Backend container with ID 1000000 does not exist in project listrefs",
      ),
    );
    expect(await stored()).toEqual(before);
  });

  it("still names the first container listed a second time, however long the list", async () => {
    await createProject("listtwice");
    const tenant = await createApiUser("listtwiceuser", ["listtwice"]);
    const post = (ids: number[]) =>
      as(tenant, "/backends/listtwice", "POST", { label: "web", backendContainers: references(ids) });
    const before = await stored();
    const ids = absentIds(MAX_BACKEND_LIST_ITEMS - 1);
    for (const [list, named] of [
      [[...ids, ids[0]], ids[0]],
      [[7, 8, 8, 7], 8],
      [[9, 9], 9],
    ] as const) {
      expect(await expectJson(post([...list]), 500)).toEqual(
        errorBody(`Unable to process backend create/update: Backend container with ID ${named} is listed twice`),
      );
    }
    expect(await stored()).toEqual(before);
  });
});
