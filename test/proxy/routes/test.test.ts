// The proxy's test routes: /test/ping for anyone, /test/authping for API users and the administrator (Basic).
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { createApiUser } from "../../../src/proxy/installation/api-users";
import { database } from "../../../src/shared/db";
import { ADMIN_AUTH, basic, call } from "../../support/worker-http";
import { CHALLENGE, UNAUTHENTICATED } from "./refusals-fixtures";

describe("GET /test/ping", () => {
  it("answers without authentication and names the instance role", async () => {
    const response = await call("/test/ping");
    expect(response.status).toBe(200);
    expect(await response.text()).toBe("pong from master instance");
  });
});

describe("GET /test/authping", () => {
  beforeAll(async () => {
    await createApiUser(database(env.DB), { username: "alice", password: "alice-secret", projectPatterns: ["a.*"] });
  });

  it("greets an API user stored in D1", async () => {
    const response = await call("/test/authping", { headers: { Authorization: basic("alice", "alice-secret") } });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe("authpong alice from master instance");
  });

  it("greets the administrator from the secrets", async () => {
    const response = await call("/test/authping", { headers: { Authorization: ADMIN_AUTH } });
    expect(await response.text()).toBe("authpong admin from master instance");
  });

  for (const [label, header] of [
    ["no credentials", undefined],
    ["a wrong password", basic("alice", "wrong")],
    ["an unknown user", basic("mallory", "alice-secret")],
    ["the administrator name with a wrong password", basic("admin", "alice-secret")],
    ["a malformed header", "Basic !!!"],
    ["a bearer token", "Bearer abc"],
  ] as const) {
    it(`refuses ${label} with 401 and a Basic challenge`, async () => {
      const response = await call("/test/authping", { headers: header ? { Authorization: header } : {} });
      expect(response.status).toBe(401);
      expect(response.headers.get("WWW-Authenticate")).toBe(CHALLENGE);
      expect(await response.json()).toEqual(UNAUTHENTICATED);
    });
  }
});
