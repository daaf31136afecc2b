// A slave instance (INSTANCE_ROLE=slave) serves reads and refuses every write with 405.
import { createExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import worker from "../../../src/index";
import { ADMIN_AUTH, asAdmin, createBackend, expectJson } from "../../support/proxy-api";
import { createProjectOnHost } from "../../support/proxy-fixtures";
import { SLAVE_WRITE } from "./refusals-fixtures";

// A fresh env object per call: settings are memoised per env object.
async function onSlave(path: string, init: RequestInit = {}): Promise<Response> {
  return worker.fetch(
    new Request(`http://example.com${path}`, init),
    { ...env, INSTANCE_ROLE: "slave" },
    createExecutionContext(),
  );
}
const slaveJson = (path: string, method: string, body: unknown) =>
  onSlave(path, {
    method,
    headers: { Authorization: ADMIN_AUTH, "content-type": "application/json" },
    body: JSON.stringify(body),
  });

beforeAll(async () => {
  await createProjectOnHost("rep", {
    hostname: "rep.example",
    ipv6: "2001:db8::7",
    containers: { web: "2001:db8::71" },
  });
  await createBackend("rep", { label: "prod", domainForwardings: [{ domainName: "rep.example.org" }] });
  await createBackend("rep", { label: "standby" });
  await expectJson(asAdmin("/admin/users", "POST", { email: "rep@example.com" }), 200);
});

describe("pings", () => {
  it("names the slave role", async () => {
    expect(await (await onSlave("/test/ping")).text()).toBe("pong from slave instance");
    expect(await (await onSlave("/test/authping", { headers: { Authorization: ADMIN_AUTH } })).text()).toBe(
      "authpong admin from slave instance",
    );
  });
});

describe("writes answer 405 and change nothing", () => {
  for (const [method, path, body] of [
    ["POST", "/containers/rep", { label: "web", fullname: "changed" }],
    ["POST", "/backends/rep", { label: "prod", port: 1 }],
    ["PATCH", "/backends/rep/standby/setContainersOf/prod", undefined],
    [
      "POST",
      "/domains/massupdate",
      {
        domainOperations: [
          { operation: "DELETE", domainName: "rep.example.org", projectLabel: "rep", backendLabel: "prod" },
        ],
      },
    ],
    ["POST", "/admin/projects", { label: "newone" }],
    ["DELETE", "/admin/projects/rep", undefined],
    ["POST", "/admin/hosts", { hostname: "rep.example", ipv6: "2001:db8::8" }],
    ["POST", "/admin/apiusers", { username: "slaveuser", password: "password1", projectPatterns: [] }],
    ["DELETE", "/admin/apiusers/whoever", undefined],
    ["POST", "/admin/users", { email: "rep@example.com", fullname: "changed" }],
    ["PUT", "/admin/containers/rep/web/permissions", [{ permission: "root", userEmail: "rep@example.com" }]],
  ] as const) {
    it(`${method} ${path}`, async () => {
      const before = await expectJson(asAdmin("/projects/rep"), 200);
      const response =
        body === undefined
          ? await onSlave(path, { method, headers: { Authorization: ADMIN_AUTH } })
          : await slaveJson(path, method, body);
      expect(await expectJson(response, 405)).toEqual(SLAVE_WRITE);
      expect(await expectJson(asAdmin("/projects/rep"), 200)).toEqual(before);
    });
  }

  it("still asks for credentials first", async () => {
    const response = await onSlave("/backends/rep", { method: "POST", body: "{}" });
    expect(response.status).toBe(401);
  });

  it("nothing was written by any of them", async () => {
    expect(await expectJson(asAdmin("/admin/projects"), 200)).toEqual([{ label: "rep", version: 0 }]);
    expect(await expectJson(asAdmin("/admin/apiusers"), 200)).toEqual([]);
    expect((await expectJson(asAdmin("/admin/hosts"), 200))[0].ipv6).toBe("2001:db8::7");
  });
});

describe("reads work", () => {
  for (const path of [
    "/projects",
    "/projects/rep",
    "/domains/rep",
    "/domains/rep/prod",
    "/admin/projects",
    "/admin/hosts",
    "/admin/users",
    "/admin/apiusers",
  ]) {
    it(`GET ${path}`, async () => {
      const response = await onSlave(path, { headers: { Authorization: ADMIN_AUTH } });
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual(await expectJson(asAdmin(path), 200));
    });
  }
});
