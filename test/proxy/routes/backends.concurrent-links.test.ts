// A backend's container links written by two requests at once (a blue/green switch, a POST with backendContainers):
// the request whose batch comes second finds the links it read changed, and fails whole with the answer to a
// concurrent change, rather than leave a set of links no serial order of the two gives, or update a removed link.
import { beforeAll, describe, expect, it } from "vitest";
import { ADMIN_AUTH, asAdmin, createBackend, errorBody, expectJson, rowsOf } from "../../support/proxy-api";
import { createProjectOnHost } from "../../support/proxy-fixtures";
import { racingDatabase, sendRacing } from "../../support/proxy-race";

const lostRace = (what: string) =>
  errorBody(`Unable to process ${what}: a concurrent change conflicted with this request, nothing was changed`);

/** Everything a link write could change. */
async function stored() {
  return {
    links: await rowsOf("select backend_id, container_id, params, version from backend_containers order by id"),
    backends: await rowsOf("select project_id, label, params, version from backends order by id"),
    projects: await rowsOf("select label, revision from projects order by id"),
    usage: await rowsOf("select * from project_usage order by project_id"),
    audit: await rowsOf("select count(*) as n from audit_log"),
  };
}

/** The containers (and their params) backend `label` of project bgl links, by container label. */
const linksOf = (label: string) =>
  rowsOf(
    `select c.label, l.params from backend_containers l join backends b on b.id = l.backend_id
     join containers c on c.id = l.container_id join projects p on p.id = b.project_id
     where p.label = 'bgl' and b.label = '${label}' order by c.label`,
  );

/** Sends the request through a database where `meanwhile` runs first; expects it refused, changing nothing. */
async function expectLostRace(
  meanwhile: () => Promise<unknown>,
  request: { method: string; path: string; body?: unknown },
  what: string,
) {
  let afterRace: Awaited<ReturnType<typeof stored>> | undefined;
  const db = racingDatabase(async () => {
    await meanwhile();
    afterRace = await stored();
  });
  const answer = sendRacing(db, { auth: ADMIN_AUTH, body: undefined, ...request });
  expect(await expectJson(answer, 500)).toEqual(lostRace(what));
  expect(afterRace).toBeDefined();
  expect(await stored()).toEqual(afterRace);
}

let ids: Record<string, number>;

beforeAll(async () => {
  ids = await createProjectOnHost("bgl", {
    hostname: "bgl-host.example",
    ipv6: "2001:db8:b9::1",
    containers: { a1: "2001:db8:b9::10", b1: "2001:db8:b9::11", g1: "2001:db8:b9::12" },
  });
  await createBackend("bgl", { label: "blue", backendContainers: [{ containerId: ids.b1, params: "check" }] });
  await createBackend("bgl", { label: "green", backendContainers: [{ containerId: ids.g1 }] });
});

describe("PATCH setContainersOf racing another write of the backend's links", () => {
  it("fails whole when another switch replaced the links it read", async () => {
    await createBackend("bgl", { label: "prod", backendContainers: [{ containerId: ids.a1 }] });
    await expectLostRace(
      () => expectJson(asAdmin("/backends/bgl/prod/setContainersOf/blue", "PATCH"), 200),
      { method: "PATCH", path: "/backends/bgl/prod/setContainersOf/green" },
      "backend container update",
    );
    expect(await linksOf("prod")).toEqual([{ label: "b1", params: "check" }]);
  });

  it("fails whole when a link it updates in place was removed meanwhile", async () => {
    await createBackend("bgl", { label: "stage", backendContainers: [{ containerId: ids.g1, params: "backup" }] });
    await expectLostRace(
      () => expectJson(asAdmin("/backends/bgl", "POST", { label: "stage", backendContainers: [] }), 200),
      { method: "PATCH", path: "/backends/bgl/stage/setContainersOf/green" },
      "backend container update",
    );
    expect(await linksOf("stage")).toEqual([]);
  });
});

describe("POST /backends with backendContainers racing another write of the backend's links", () => {
  it("fails whole when a link it updates in place was removed meanwhile", async () => {
    await createBackend("bgl", { label: "canary", backendContainers: [{ containerId: ids.a1 }] });
    await expectLostRace(
      () => expectJson(asAdmin("/backends/bgl/canary/setContainersOf/blue", "PATCH"), 200),
      {
        method: "POST",
        path: "/backends/bgl",
        body: { label: "canary", backendContainers: [{ containerId: ids.a1 }] },
      },
      "backend create/update",
    );
    expect(await linksOf("canary")).toEqual([{ label: "b1", params: "check" }]);
  });

  it("fails whole when links were added to the backend it read empty", async () => {
    await createBackend("bgl", { label: "spare" });
    const adding = (containerId: number) => ({ label: "spare", backendContainers: [{ containerId }] });
    await expectLostRace(
      () => expectJson(asAdmin("/backends/bgl", "POST", adding(ids.g1)), 200),
      { method: "POST", path: "/backends/bgl", body: adding(ids.a1) },
      "backend create/update",
    );
    expect(await linksOf("spare")).toEqual([{ label: "g1", params: null }]);
  });
});
