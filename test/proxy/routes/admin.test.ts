// The management endpoints (administrator only); the OpenAPI document and /docs are test/openapi.test.ts's.
import { env } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { apiUsers } from "../../../src/proxy/installation/tables";
import { database } from "../../../src/shared/db";
import {
  as,
  asAdmin,
  basic,
  call,
  callJson,
  createApiUser,
  createHost,
  createProject,
  errorBody,
  expectJson,
  massUpdate,
} from "../../support/proxy-api";
import { createProjectOnHost } from "../../support/proxy-fixtures";
import { CHALLENGE, createMatchingAllUser, FORBIDDEN } from "./refusals-fixtures";

const KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGx5c2tleQ== anna@laptop";

describe("administrator only", () => {
  let userAuth: string;
  beforeAll(async () => {
    userAuth = await createMatchingAllUser("plainuser");
  });

  const adminCalls = [
    ["POST", "/admin/projects", { label: "forbidden" }],
    ["GET", "/admin/projects", undefined],
    ["DELETE", "/admin/projects/anything", undefined],
    ["POST", "/admin/hosts", { hostname: "x.example.com", ipv6: "2001:db8::1" }],
    ["GET", "/admin/hosts", undefined],
    ["POST", "/admin/apiusers", { username: "sneaky", password: "password1", projectPatterns: [".*"] }],
    ["GET", "/admin/apiusers", undefined],
    ["DELETE", "/admin/apiusers/plainuser", undefined],
    ["POST", "/admin/users", { email: "x@example.com" }],
    ["GET", "/admin/users", undefined],
    ["PUT", "/admin/containers/p/c/permissions", []],
  ] as const;

  for (const [method, path, body] of adminCalls) {
    it(`${method} ${path} answers 403 to an API user, even one matching every project`, async () => {
      expect(await expectJson(as(userAuth, path, method, body), 403)).toEqual(FORBIDDEN);
    });

    it(`${method} ${path} answers 401 without credentials`, async () => {
      const response = body === undefined ? await call(path, { method }) : await callJson(path, method, body);
      expect(response.status).toBe(401);
      expect(response.headers.get("WWW-Authenticate")).toBe(CHALLENGE);
    });
  }

  it("the API user's refused calls changed nothing", async () => {
    const lists = () =>
      Promise.all(["projects", "hosts", "apiusers", "users"].map((list) => expectJson(asAdmin(`/admin/${list}`), 200)));
    const before = await lists();
    for (const [method, path, body] of adminCalls) await expectJson(as(userAuth, path, method, body), 403);
    expect(await lists()).toEqual(before);
    const usernames = before[2].map((u: { username: string }) => u.username);
    expect(usernames).toContain("plainuser");
    expect(usernames).not.toContain("sneaky");
  });
});

describe("projects", () => {
  it("creates, updates by label (only the fields given) and lists sorted", async () => {
    expect(await createProject("zulu", "Zulu Ltd")).toEqual({ label: "zulu", fullname: "Zulu Ltd", version: 0 });
    expect(await createProject("bravo")).toEqual({ label: "bravo", version: 0 });
    expect(await expectJson(asAdmin("/admin/projects", "POST", { label: "bravo", fullname: "Bravo" }), 200)).toEqual({
      label: "bravo",
      fullname: "Bravo",
      version: 1,
    });
    expect(await expectJson(asAdmin("/admin/projects", "POST", { label: "bravo" }), 200)).toEqual({
      label: "bravo",
      fullname: "Bravo",
      version: 2,
    });
    const list = await expectJson(asAdmin("/admin/projects"), 200);
    expect(list.filter((p: { label: string }) => ["bravo", "zulu"].includes(p.label))).toEqual([
      { label: "bravo", fullname: "Bravo", version: 2 },
      { label: "zulu", fullname: "Zulu Ltd", version: 0 },
    ]);
  });

  it("refuses labels that cannot become account and backend names", async () => {
    for (const label of ["A1", "x", "with-dash", "under_score", "a".repeat(33)]) {
      expect(await expectJson(asAdmin("/admin/projects", "POST", { label }), 400)).toEqual(
        errorBody("label: must be 2 to 32 lowercase letters or digits"),
      );
    }
  });

  it("refuses a body that is not JSON", async () => {
    const response = await call("/admin/projects", {
      method: "POST",
      headers: { Authorization: basic("admin", "test-admin-password") },
      body: "{",
    });
    expect(await expectJson(response, 400)).toEqual(errorBody("request body is not valid JSON"));
  });

  it("deletes a project with everything in it, freeing its domain names", async () => {
    await createProjectOnHost("doomed", {
      hostname: "doomed-host.example.com",
      ipv6: "2001:db8::d",
      containers: { web: "2001:db8::d1" },
    });
    await expectJson(
      asAdmin("/backends/doomed", "POST", { label: "prod", domainForwardings: [{ domainName: "doomed.example.com" }] }),
      200,
    );

    expect(await expectJson(asAdmin("/admin/projects/doomed", "DELETE"), 200)).toEqual({
      payload: "Deleted project doomed",
      success: true,
      warnings: [],
    });
    expect(await expectJson(asAdmin("/projects/doomed"), 404)).toEqual(
      errorBody("Invalid project: label doomed not existing or access denied"),
    );
    const rows = await env.DB.prepare(
      "select (select count(*) from domains where domain_name = 'doomed.example.com') as domains, (select count(*) from containers where label = 'web' and project_id not in (select id from projects)) as orphans",
    ).first();
    expect(rows).toEqual({ domains: 0, orphans: 0 });

    await createProject("reborn");
    await expectJson(asAdmin("/backends/reborn", "POST", { label: "prod" }), 200);
    expect(
      await expectJson(
        massUpdate(basic("admin", "test-admin-password"), {
          domainOperations: [
            { operation: "CREATE", domainName: "doomed.example.com", projectLabel: "reborn", backendLabel: "prod" },
          ],
        }),
        200,
      ),
    ).toEqual([]);
  });

  it("answers 404 when deleting a project that does not exist", async () => {
    expect(await expectJson(asAdmin("/admin/projects/nothere", "DELETE"), 404)).toEqual(
      errorBody("Invalid project: label nothere not existing"),
    );
  });
});

describe("hosts", () => {
  it("registers, updates the ipv6 by hostname and lists sorted with their ids", async () => {
    const first = await createHost("web2.example.com", "2001:db8::2");
    expect(first).toEqual({
      hostId: expect.any(Number),
      hostname: "web2.example.com",
      ipv6: "2001:db8::2",
      version: 0,
    });
    await createHost("web1.example.com", "2001:db8::1");
    expect(await createHost("WEB2.example.com", "2001:db8::22")).toEqual({
      ...first,
      ipv6: "2001:db8::22",
      version: 1,
    });
    const list = await expectJson(asAdmin("/admin/hosts"), 200);
    expect(list.map((h: { hostname: string }) => h.hostname).filter((n: string) => n.startsWith("web"))).toEqual([
      "web1.example.com",
      "web2.example.com",
    ]);
  });

  it("refuses a bad hostname or ipv6 with 400 naming the field", async () => {
    expect(await expectJson(asAdmin("/admin/hosts", "POST", { hostname: "web 3", ipv6: "2001:db8::3" }), 400)).toEqual(
      errorBody("hostname: must be a host name (letters, digits, hyphens, dots)"),
    );
    expect(
      await expectJson(asAdmin("/admin/hosts", "POST", { hostname: "web3.example.com", ipv6: "10.0.0.1" }), 400),
    ).toEqual(errorBody("ipv6: must be an IPv6 address"));
  });
});

describe("API users", () => {
  it("creates a user with a PBKDF2 hash and never shows the password", async () => {
    const view = await expectJson(
      asAdmin("/admin/apiusers", "POST", {
        username: "carol",
        password: "carol-password",
        email: "carol@example.com",
        projectPatterns: ["c.*"],
      }),
      200,
    );
    expect(view).toEqual({ username: "carol", email: "carol@example.com", projectPatterns: ["c.*"], version: 0 });
    const [row] = await database(env.DB).select().from(apiUsers).where(eq(apiUsers.username, "carol"));
    expect(row.passwordHash).toMatch(/^pbkdf2-sha256\$100000\$[\w-]{22}\$[\w-]{43}$/);
    expect(JSON.stringify(await expectJson(asAdmin("/admin/apiusers"), 200))).not.toContain("pbkdf2");
    const response = await call("/test/authping", { headers: { Authorization: basic("carol", "carol-password") } });
    expect(await response.text()).toBe("authpong carol from master instance");
  });

  it("replaces password and patterns of an existing user", async () => {
    await createApiUser("dave", ["d.*"], "old-password");
    const view = await expectJson(
      asAdmin("/admin/apiusers", "POST", { username: "dave", password: "new-password", projectPatterns: ["x"] }),
      200,
    );
    expect(view).toEqual({ username: "dave", projectPatterns: ["x"], version: 1 });
    expect((await call("/test/authping", { headers: { Authorization: basic("dave", "old-password") } })).status).toBe(
      401,
    );
    expect((await call("/test/authping", { headers: { Authorization: basic("dave", "new-password") } })).status).toBe(
      200,
    );
  });

  it("deletes a user, who can no longer log in", async () => {
    const auth = await createApiUser("erin", [".*"]);
    expect(await expectJson(asAdmin("/admin/apiusers/erin", "DELETE"), 200)).toEqual({
      payload: "Deleted API user erin",
      success: true,
      warnings: [],
    });
    expect((await call("/test/authping", { headers: { Authorization: auth } })).status).toBe(401);
    expect(await expectJson(asAdmin("/admin/apiusers/erin", "DELETE"), 404)).toEqual(
      errorBody("Invalid API user: username erin not existing"),
    );
  });

  it("refuses the administrator's name, bad patterns, short passwords and colons", async () => {
    const post = (body: object) =>
      asAdmin("/admin/apiusers", "POST", {
        username: "frank",
        password: "frank-password",
        projectPatterns: [],
        ...body,
      });
    expect(await expectJson(post({ username: "admin" }), 400)).toEqual(
      errorBody("username: reserved for the administrator"),
    );
    expect(await expectJson(post({ projectPatterns: ["ok", "(unclosed"] }), 400)).toEqual(
      errorBody(
        "projectPatterns.1: must be a regular expression in RE2 syntax (no backreferences or lookaround): missing closing ): `(unclosed`",
      ),
    );
    expect(await expectJson(post({ password: "short" }), 400)).toEqual(
      errorBody("password: Too small: expected string to have >=8 characters"),
    );
    expect(await expectJson(post({ username: "a:b" }), 400)).toEqual(
      errorBody("username: must be 1 to 64 letters, digits or . _ @ -"),
    );
  });
});

describe("console and SSH users", () => {
  it("creates with defaults (role CONTACT), updates only the fields given, lists sorted", async () => {
    expect(await expectJson(asAdmin("/admin/users", "POST", { email: "zoe@example.com" }), 200)).toEqual({
      email: "zoe@example.com",
      role: "CONTACT",
      defaultPermission: [],
      proxyPermission: [],
      version: 0,
    });
    expect(
      await expectJson(
        asAdmin("/admin/users", "POST", {
          email: "anna@example.com",
          fullname: "Anna",
          sshPublicKey: KEY,
          role: "USER",
          defaultPermission: ["www-data"],
        }),
        200,
      ),
    ).toEqual({
      email: "anna@example.com",
      fullname: "Anna",
      sshPublicKey: KEY,
      role: "USER",
      defaultPermission: ["www-data"],
      proxyPermission: [],
      version: 0,
    });
    expect(
      await expectJson(asAdmin("/admin/users", "POST", { email: "anna@example.com", fullname: "Anna B." }), 200),
    ).toEqual({
      email: "anna@example.com",
      fullname: "Anna B.",
      sshPublicKey: KEY,
      role: "USER",
      defaultPermission: ["www-data"],
      proxyPermission: [],
      version: 1,
    });
    // Other tests add users of their own: only these two are this test's to find, in order.
    const list = await expectJson(asAdmin("/admin/users"), 200);
    expect(
      list
        .map((u: { email: string }) => u.email)
        .filter((email: string) => ["anna@example.com", "zoe@example.com"].includes(email)),
    ).toEqual(["anna@example.com", "zoe@example.com"]);
  });

  it("refuses an SSH key that would add lines to authorized_keys", async () => {
    expect(
      await expectJson(
        asAdmin("/admin/users", "POST", {
          email: "eve@example.com",
          sshPublicKey: `${KEY}\ncommand="sh" ssh-rsa AAAA`,
        }),
        400,
      ),
    ).toEqual(errorBody("sshPublicKey: must be one OpenSSH public key line"));
    expect(await expectJson(asAdmin("/admin/users", "POST", { email: "not-an-email" }), 400)).toEqual(
      errorBody("email: Invalid email address"),
    );
  });
});

describe("PUT /admin/containers/{p}/{c}/permissions", () => {
  beforeAll(async () => {
    await createProjectOnHost("perm", {
      hostname: "perm-host.example.com",
      ipv6: "2001:db8::50",
      containers: { app: "2001:db8::51" },
    });
    await expectJson(asAdmin("/admin/users", "POST", { email: "ops@example.com", sshPublicKey: KEY }), 200);
    await expectJson(asAdmin("/admin/users", "POST", { email: "dev@example.com" }), 200);
  });

  it("grants SSH access and shows it with the SSH proxy user name", async () => {
    const view = await expectJson(
      asAdmin("/admin/containers/perm/app/permissions", "PUT", [
        { permission: "www-data", userEmail: "ops@example.com" },
        { permission: "root", userEmail: "ops@example.com" },
        { permission: "www-data", userEmail: "dev@example.com" },
      ]),
      200,
    );
    expect(
      view.containerPermissions.map((p: any) => [p.user.email, p.permission, p.sshProxyUsername, p.version]),
    ).toEqual([
      ["dev@example.com", "www-data", "perm-app_www-data", 0],
      ["ops@example.com", "root", "perm-app_root", 0],
      ["ops@example.com", "www-data", "perm-app_www-data", 0],
    ]);
    expect(view.containerPermissions[1]).toEqual({
      permission: "root",
      containerId: view.containerPermissions[0].containerId,
      userId: expect.any(Number),
      user: {
        email: "ops@example.com",
        sshPublicKey: KEY,
        role: "CONTACT",
        defaultPermission: [],
        proxyPermission: [],
        version: 0,
      },
      sshProxyUsername: "perm-app_root",
      version: 0,
    });
  });

  it("replaces the whole list: missing grants are revoked", async () => {
    const view = await expectJson(
      asAdmin("/admin/containers/perm/app/permissions", "PUT", [{ permission: "root", userEmail: "ops@example.com" }]),
      200,
    );
    expect(view.containerPermissions.map((p: any) => `${p.user.email} ${p.permission}`)).toEqual([
      "ops@example.com root",
    ]);
    const empty = await expectJson(asAdmin("/admin/containers/perm/app/permissions", "PUT", []), 200);
    expect(empty.containerPermissions).toEqual([]);
  });

  it("refuses unknown users and containers, duplicates and over-long account names, changing nothing", async () => {
    await expectJson(
      asAdmin("/admin/containers/perm/app/permissions", "PUT", [{ permission: "root", userEmail: "ops@example.com" }]),
      200,
    );
    expect(
      await expectJson(
        asAdmin("/admin/containers/perm/app/permissions", "PUT", [
          { permission: "www-data", userEmail: "dev@example.com" },
          { permission: "root", userEmail: "ghost@example.com" },
        ]),
        404,
      ),
    ).toEqual(errorBody("Invalid user: email ghost@example.com not existing"));
    expect(await expectJson(asAdmin("/admin/containers/perm/nope/permissions", "PUT", []), 404)).toEqual(
      errorBody("Invalid container: label nope not existing or access denied"),
    );
    expect(await expectJson(asAdmin("/admin/containers/nope/app/permissions", "PUT", []), 404)).toEqual(
      errorBody("Invalid project: label nope not existing or access denied"),
    );
    const twice = { permission: "root", userEmail: "dev@example.com" };
    expect(await expectJson(asAdmin("/admin/containers/perm/app/permissions", "PUT", [twice, twice]), 400)).toEqual(
      errorBody("1: duplicate permission root for dev@example.com"),
    );
    const long = "a-very-long-technical-user";
    expect(
      await expectJson(
        asAdmin("/admin/containers/perm/app/permissions", "PUT", [{ permission: long, userEmail: "dev@example.com" }]),
        400,
      ),
    ).toEqual(errorBody(`0.permission: SSH proxy user name perm-app_${long} is longer than 32 characters`));
    expect(
      await expectJson(
        asAdmin("/admin/containers/perm/app/permissions", "PUT", [
          { permission: "Root!", userEmail: "dev@example.com" },
        ]),
        400,
      ),
    ).toEqual(errorBody("0.permission: must be a technical user name such as www-data"));
    const project = await expectJson(asAdmin("/projects/perm"), 200);
    expect(project.containers[0].containerPermissions.map((p: any) => `${p.user.email} ${p.permission}`)).toEqual([
      "ops@example.com root",
    ]);
  });
});
