// Attacks of one ordinary tenant (an API user granted one project) on addresses, patterns, credentials and bodies:
// each is refused with its exact answer, and nothing is stored.
import { createExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import worker from "../../src/index";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { as, asAdmin, basic, call, createApiUser, createProject, errorBody, expectJson } from "../support/proxy-api";
import { bytes } from "../support/byte-strings";
import { createProjectOnHost } from "../support/proxy-fixtures";

const containerRows = () =>
  env.DB.prepare("select project_id, label, ipv6 from containers order by id")
    .all()
    .then((r) => r.results);

let tenant: string;
/** The tenant's POST /containers/tenant of a container on h1.hosts.example. */
const postContainer = (label: string, ipv6: string) =>
  as(tenant, "/containers/tenant", "POST", { label, hostname: "h1.hosts.example", ipv6 });

beforeAll(async () => {
  await createProjectOnHost("victim", {
    hostname: "h1.hosts.example",
    ipv6: "2001:db8::1",
    containers: { db: "2001:db8::d" },
  });
  await createProject("tenant");
  tenant = await createApiUser("mallory", ["tenant"]);
});

afterEach(() => vi.restoreAllMocks());

describe("container addresses", () => {
  it("refuses another project's container address with 409, in any spelling", async () => {
    const before = await containerRows();
    for (const ipv6 of ["2001:db8::d", "2001:DB8:0:0:0:0:0:d", "2001:0db8::000d"]) {
      expect(await expectJson(postContainer("web", ipv6), 409)).toEqual(
        errorBody(`Invalid container: address ${"2001:db8::d"} is already used by another container`),
      );
    }
    expect(await containerRows()).toEqual(before);
  });

  it("refuses to move an existing container onto another's address", async () => {
    await expectJson(postContainer("app", "2001:db8::a"), 200);
    const before = await containerRows();
    expect(
      await expectJson(as(tenant, "/containers/tenant", "POST", { label: "app", ipv6: "2001:db8::d" }), 409),
    ).toEqual(errorBody("Invalid container: address 2001:db8::d is already used by another container"));
    expect(await containerRows()).toEqual(before);
  });

  it.each([
    ["::1", "is a loopback address"],
    ["::", "is the unspecified address"],
    ["fe80::1", "is a link-local address"],
    ["ff05::2", "is a multicast address"],
    ["::ffff:127.0.0.1", "embeds 127.0.0.1, which is a loopback address"],
    [
      "64:ff9b::169.254.169.254",
      "embeds 169.254.169.254, which is a link-local address (cloud metadata services live there)",
    ],
    ["fd00:ec2::254", "is a cloud metadata address"],
    ["fe80::1%eth0", "must be an IPv6 address"],
  ])("refuses %s with 400 and stores nothing", async (ipv6, reason) => {
    const before = await containerRows();
    expect(await expectJson(postContainer("evil", ipv6), 400)).toEqual(errorBody(`ipv6: ${reason}`));
    expect(await containerRows()).toEqual(before);
  });

  it("refuses the same addresses for hosts", async () => {
    expect(
      await expectJson(asAdmin("/admin/hosts", "POST", { hostname: "h2.hosts.example", ipv6: "::1" }), 400),
    ).toEqual(errorBody("ipv6: is a loopback address"));
    expect(await env.DB.prepare("select count(*) as n from hosts where hostname = 'h2.hosts.example'").first("n")).toBe(
      0,
    );
  });

  it("accepts addresses in the networks PROXY_ADDRESS_EXCEPTIONS lists, and only those", async () => {
    const withExceptions = {
      ...env,
      PROXY_ADDRESS_EXCEPTIONS: "::ffff:127.0.0.0/104, fd00:ec2::254/128",
    } as unknown as Env;
    const post = (label: string, ipv6: string) =>
      worker.fetch(
        new Request("http://example.com/containers/tenant", {
          method: "POST",
          headers: { Authorization: tenant, "content-type": "application/json" },
          body: JSON.stringify({ label, hostname: "h1.hosts.example", ipv6 }),
        }),
        withExceptions,
        createExecutionContext(),
      );
    expect(await expectJson(post("local", "::ffff:127.0.0.5"), 200)).toMatchObject({ success: true });
    expect(await expectJson(post("meta", "fd00:ec2::254"), 200)).toMatchObject({ success: true });
    expect(await expectJson(post("lo", "::1"), 400)).toEqual(errorBody("ipv6: is a loopback address"));
    // Without the setting the same address is refused.
    expect(await expectJson(postContainer("local2", "::ffff:127.0.0.6"), 400)).toEqual(
      errorBody("ipv6: embeds 127.0.0.6, which is a loopback address"),
    );
  });

  it("stores the canonical form", async () => {
    await expectJson(postContainer("canon", "2001:DB8:0::00C1"), 200);
    const project = await expectJson(as(tenant, "/projects/tenant"), 200);
    expect(project.containers.find((c: { label: string }) => c.label === "canon").ipv6).toBe("2001:db8::c1");
  });
});

describe("project patterns", () => {
  it("refuses backreferences and lookaround when stored, storing nothing", async () => {
    for (const [pattern, detail] of [
      ["(a)\\1", "invalid escape sequence: `\\1`"],
      ["(?=t)tenant", "invalid or unsupported Perl syntax: `(?=`"],
    ]) {
      expect(
        await expectJson(
          asAdmin("/admin/apiusers", "POST", { username: "eve", password: "eve-password", projectPatterns: [pattern] }),
          400,
        ),
      ).toEqual(
        errorBody(
          `projectPatterns.0: must be a regular expression in RE2 syntax (no backreferences or lookaround): ${detail}`,
        ),
      );
    }
    expect(await env.DB.prepare("select count(*) as n from api_users where username = 'eve'").first("n")).toBe(0);
  });

  it("serves a user whose pattern stalled the backtracking engine, on labels it cannot match", async () => {
    const stalling = await createApiUser("trent", ["(a+)+$"]);
    const label = `${"a".repeat(31)}1`;
    await createProject(label);
    expect(await expectJson(as(stalling, `/projects/${label}`), 404)).toEqual(
      errorBody(`Invalid project: label ${label} not existing or access denied`),
    );
    expect(await expectJson(as(stalling, "/projects"), 200)).toEqual([]);
    // Text that is not a label never reaches a pattern.
    const long = "a".repeat(5000);
    expect(await expectJson(as(stalling, `/projects/${long}`), 404)).toEqual(
      errorBody(`Invalid project: label ${long} not existing or access denied`),
    );
  });

  it("allows at most 64 patterns per user", async () => {
    const projectPatterns = Array.from({ length: 65 }, (_, i) => `p${i}`);
    expect(
      await expectJson(
        asAdmin("/admin/apiusers", "POST", { username: "many", password: "many-password", projectPatterns }),
        400,
      ),
    ).toEqual(errorBody("projectPatterns: Too big: expected array to have <=64 items"));
  });
});

describe("credential checks", () => {
  const derivations = () => vi.spyOn(crypto.subtle, "deriveBits");

  it("runs one PBKDF2 check for a wrong password of the administrator, a tenant and an unknown name", async () => {
    for (const [username, password] of [
      ["admin", "wrong-password"],
      ["mallory", "wrong-password"],
      ["nobody", "wrong-password"],
    ]) {
      const spy = derivations();
      expect(
        await expectJson(call("/test/authping", { headers: { Authorization: basic(username, password) } }), 401),
      ).toEqual(errorBody("Authentication required: valid HTTP Basic credentials are needed"));
      expect(spy).toHaveBeenCalledTimes(1);
      spy.mockRestore();
    }
  });

  it("checks a tenant's password once, then answers from the isolate's cache until the password changes", async () => {
    const auth = await createApiUser("cached", ["tenant"], "first-password");
    const spy = derivations();
    expect(await (await as(auth, "/test/authping")).text()).toBe("authpong cached from master instance");
    expect(await (await as(auth, "/test/authping")).text()).toBe("authpong cached from master instance");
    expect(spy).toHaveBeenCalledTimes(1);

    // A new password (stored by the administrator) ends the old one at once.
    spy.mockClear();
    await expectJson(
      asAdmin("/admin/apiusers", "POST", {
        username: "cached",
        password: "second-password",
        projectPatterns: ["tenant"],
      }),
      200,
    );
    const derivedByUpsert = spy.mock.calls.length;
    expect((await as(auth, "/test/authping")).status).toBe(401);
    expect(spy.mock.calls.length - derivedByUpsert).toBe(1);
    expect((await as(basic("cached", "second-password"), "/test/authping")).status).toBe(200);

    // A deleted user is refused even though its credentials were remembered.
    await expectJson(asAdmin("/admin/apiusers/cached", "DELETE"), 200);
    expect((await as(basic("cached", "second-password"), "/test/authping")).status).toBe(401);
  });

  it("never caches a refusal", async () => {
    const spy = derivations();
    for (let i = 0; i < 3; i++) expect((await as(basic("mallory", "guess"), "/test/authping")).status).toBe(401);
    expect(spy).toHaveBeenCalledTimes(3);
  });
});

describe("request bodies", () => {
  const limit = 1024 * 1024;

  it("answers 413 for a body over PROXY_MAX_BODY_BYTES, declared or streamed, storing nothing", async () => {
    const big = JSON.stringify({ label: "big", fullname: "x".repeat(limit) });
    const expected = errorBody(`request body is larger than ${limit} bytes (the limit set by PROXY_MAX_BODY_BYTES)`);
    expect(await expectJson(as(tenant, "/backends/tenant", "POST", big), 413)).toEqual(expected);
    const streamed = new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(big));
        controller.close();
      },
    });
    const response = call("/backends/tenant", {
      method: "POST",
      headers: { Authorization: tenant, "content-type": "application/json" },
      body: streamed,
    });
    expect(await expectJson(response, 413)).toEqual(expected);
    expect(await env.DB.prepare("select count(*) as n from backends where label = 'big'").first("n")).toBe(0);
  });

  it("answers 400 for a body that is not UTF-8, storing nothing", async () => {
    const response = call("/backends/tenant", {
      method: "POST",
      headers: { Authorization: tenant, "content-type": "application/json" },
      body: bytes('{"label":"bad","fullname":"', [0xff, 0xfe], '"}'),
    });
    expect(await expectJson(response, 400)).toEqual(errorBody("request body is not valid UTF-8"));
    expect(await env.DB.prepare("select count(*) as n from backends where label = 'bad'").first("n")).toBe(0);
  });
});
