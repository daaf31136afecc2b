// The spec's four writes answer what they cannot do as the original did: 500 with its message and the cause, a project
// the API user may not see included (reading routes answer that 404), and store nothing.
import { beforeAll, describe, expect, it } from "vitest";
import {
  as,
  asAdmin,
  createApiUser,
  createBackend,
  createProject,
  errorBody,
  expectJson,
} from "../../support/proxy-api";
import { createProjectOnHost } from "../../support/proxy-fixtures";
import { storage } from "./writes-fixtures";

let tenant: string;
beforeAll(async () => {
  await createProjectOnHost("orw", {
    hostname: "orw-host.example",
    ipv6: "2001:db8::a0",
    containers: { c1: "2001:db8::a1" },
  });
  await createBackend("orw", { label: "empty" });
  await createBackend("orw", { label: "blue" });
  // A project that exists, but not for the tenant: the answer must not tell it from a missing one.
  await createProject("orwhidden");
  await createBackend("orwhidden", { label: "blue" });
  await createBackend("orwhidden", { label: "empty" });
  tenant = await createApiUser("orwtenant", ["orw"]);
});

const hidden = "Invalid project: label orwhidden not existing or access denied";

describe("the original's refusals of its four writes", () => {
  for (const [route, method, path, body, refusal] of [
    ["POST /containers", "POST", "/containers/orwhidden", { label: "c2" }, "Unable to process Container create/update"],
    ["POST /backends", "POST", "/backends/orwhidden", { label: "green" }, "Unable to process backend create/update"],
    [
      "PATCH setContainersOf",
      "PATCH",
      "/backends/orwhidden/blue/setContainersOf/empty",
      undefined,
      "Unable to process backend container update",
    ],
    [
      "POST /domains/massupdate",
      "POST",
      "/domains/massupdate",
      {
        domainOperations: [
          { operation: "CREATE", domainName: "x.orw.example", projectLabel: "orwhidden", backendLabel: "blue" },
        ],
      },
      "Unable to process mass update",
    ],
  ] as const) {
    it(`${route}: answers 500 to a project the API user may not see, storing nothing`, async () => {
      const before = await storage();
      expect(await expectJson(as(tenant, path, method, body), 500)).toEqual(errorBody(`${refusal}: ${hidden}`));
      expect(await storage()).toEqual(before);
    });
  }

  for (const [route, method, path, body, message] of [
    [
      "POST /containers",
      "POST",
      "/containers/orw",
      { label: "nohost", ipv6: "2001:db8::a9" },
      "Unable to process Container create/update: Invalid host: no hostname or host id available in input",
    ],
    [
      "POST /backends",
      "POST",
      "/backends/orw",
      { label: "green", backendContainers: [{ containerId: 999999 }] },
      "Unable to process backend create/update: Backend container with ID 999999 does not exist in project orw",
    ],
    [
      "PATCH setContainersOf",
      "PATCH",
      "/backends/orw/blue/setContainersOf/empty",
      undefined,
      "Unable to process backend container update: Target backend with label empty does not contain any container " +
        "references",
    ],
    [
      "POST /domains/massupdate",
      "POST",
      "/domains/massupdate",
      {
        domainOperations: [
          { operation: "CREATE", domainName: "d.orw.example", projectLabel: "orw", backendLabel: "blue" },
          { operation: "DELETE", domainName: "d.orw.example", projectLabel: "orw", backendLabel: "blue" },
        ],
      },
      "Unable to process mass update: d.orw.example: disallowed duplicate update operation",
    ],
  ] as const) {
    it(`${route}: prefixes a change it cannot process with the original's message`, async () => {
      const before = await storage();
      expect(await expectJson(as(tenant, path, method, body), 500)).toEqual(errorBody(message));
      expect(await expectJson(asAdmin(path, method, body), 500)).toEqual(errorBody(message));
      expect(await storage()).toEqual(before);
    });
  }

  it("keeps the 404 of a reading route", async () => {
    expect(await expectJson(as(tenant, "/domains/orwhidden"), 404)).toEqual(errorBody(hidden));
  });
});
