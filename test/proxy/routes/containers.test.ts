// POST /containers/{projectLabel}: create-or-update by label, host resolution, the permissions guard, errors.
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import {
  as,
  asAdmin,
  call,
  createApiUser,
  createHost,
  createProject,
  errorBody,
  expectJson,
} from "../../support/proxy-api";

const post = (project: string, body: unknown) => asAdmin(`/containers/${project}`, "POST", body);
const containerOf = async (project: string, label: string) =>
  (await expectJson(asAdmin(`/projects/${project}`), 200)).containers.find((c: { label: string }) => c.label === label);
const containerCount = async () =>
  (await env.DB.prepare("select count(*) as n from containers").first<{ n: number }>())!.n;

let hostA: number;
let hostB: number;

beforeAll(async () => {
  await createProject("cont");
  await createProject("other");
  hostA = (await createHost("a.hosts.example", "2001:db8::a")).hostId;
  hostB = (await createHost("b.hosts.example", "2001:db8::b")).hostId;
});

describe("create", () => {
  it("creates with a hostname and answers the container id", async () => {
    const body = await expectJson(
      post("cont", { label: "web", fullname: "Web", hostname: "a.hosts.example", ipv6: "2001:db8::100" }),
      200,
    );
    expect(body).toEqual({ success: true, payload: { key: "containerId", value: expect.any(Number) }, warnings: [] });
    expect(await containerOf("cont", "web")).toEqual({
      FQLabel: "cont-web",
      containerPermissions: [],
      fullname: "Web",
      host: { hostname: "a.hosts.example", ipv6: "2001:db8::a", version: 0 },
      hostId: hostA,
      ipv6: "2001:db8::100",
      label: "web",
      projectId: 1,
      version: 0,
    });
  });

  it("prefers host.hostname over hostname over hostId", async () => {
    await expectJson(
      post("cont", {
        label: "h1",
        host: { hostname: "b.hosts.example" },
        hostname: "a.hosts.example",
        hostId: hostA,
        ipv6: "2001:db8::101",
      }),
      200,
    );
    expect((await containerOf("cont", "h1")).hostId).toBe(hostB);
    await expectJson(
      post("cont", { label: "h2", hostname: "b.hosts.example", hostId: hostA, ipv6: "2001:db8::102" }),
      200,
    );
    expect((await containerOf("cont", "h2")).hostId).toBe(hostB);
    await expectJson(post("cont", { label: "h3", hostId: hostB, ipv6: "2001:db8::103" }), 200);
    expect((await containerOf("cont", "h3")).hostId).toBe(hostB);
  });

  it("uses the same label independently in another project", async () => {
    const first = await expectJson(post("other", { label: "twin", hostId: hostA, ipv6: "2001:db8::200" }), 200);
    const again = await expectJson(post("cont", { label: "twin", hostId: hostA, ipv6: "2001:db8::201" }), 200);
    expect(first.payload.value).not.toBe(again.payload.value);
    expect((await containerOf("other", "twin")).FQLabel).toBe("other-twin");
    expect((await containerOf("cont", "twin")).FQLabel).toBe("cont-twin");
  });

  for (const [what, body, message] of [
    ["no host", { label: "nohost", ipv6: "2001:db8::1" }, "Invalid host: no hostname or host id available in input"],
    [
      "an unknown hostname",
      { label: "badhost", hostname: "nope.example", ipv6: "2001:db8::1" },
      "Invalid host: name nope.example not existing or access denied",
    ],
    [
      "an unknown host.hostname",
      { label: "badhost", host: { hostname: "nope.example" }, ipv6: "2001:db8::1" },
      "Invalid host: name nope.example not existing or access denied",
    ],
    [
      "an unknown hostId",
      { label: "badhost", hostId: 999, ipv6: "2001:db8::1" },
      "Invalid host: id 999 not existing or access denied",
    ],
    [
      "no ipv6",
      { label: "noip", hostname: "a.hosts.example" },
      "Invalid container: no ipv6 address available in input",
    ],
    [
      "non-empty containerPermissions",
      {
        label: "perms",
        hostname: "a.hosts.example",
        ipv6: "2001:db8::1",
        containerPermissions: [{ permission: "root" }],
      },
      "Changing container permissions is currently disabled for security reasons",
    ],
  ] as const) {
    it(`refuses a create with ${what} (500), writing nothing`, async () => {
      const count = await containerCount();
      expect(await expectJson(post("cont", body), 500)).toEqual(
        errorBody(`Unable to process Container create/update: ${message}`),
      );
      expect(await containerCount()).toBe(count);
    });
  }

  it("accepts containerPermissions: [] as no change", async () => {
    await expectJson(
      post("cont", { label: "noperm", hostname: "a.hosts.example", ipv6: "2001:db8::104", containerPermissions: [] }),
      200,
    );
    expect((await containerOf("cont", "noperm")).containerPermissions).toEqual([]);
  });
});

describe("update", () => {
  it("copies only the fields present and bumps the version each time", async () => {
    const created = await expectJson(
      post("cont", { label: "upd", fullname: "Before", hostname: "a.hosts.example", ipv6: "2001:db8::300" }),
      200,
    );
    const updated = await expectJson(post("cont", { label: "upd", fullname: "After", version: 77 }), 200);
    expect(updated.payload).toEqual(created.payload);
    expect(await containerOf("cont", "upd")).toMatchObject({
      fullname: "After",
      ipv6: "2001:db8::300",
      hostId: hostA,
      version: 1,
    });
    await expectJson(
      post("cont", { label: "upd", ipv6: "2001:db8::301", hostname: "b.hosts.example", fullname: null }),
      200,
    );
    expect(await containerOf("cont", "upd")).toMatchObject({
      fullname: "After",
      ipv6: "2001:db8::301",
      hostId: hostB,
      version: 2,
    });
  });

  it("refuses non-empty containerPermissions on update and leaves the container as it was", async () => {
    await expectJson(post("cont", { label: "guard", hostname: "a.hosts.example", ipv6: "2001:db8::400" }), 200);
    const before = await containerOf("cont", "guard");
    expect(
      await expectJson(
        post("cont", { label: "guard", fullname: "changed", containerPermissions: [{ permission: "www-data" }] }),
        500,
      ),
    ).toEqual(
      errorBody(
        "Unable to process Container create/update: Changing container permissions is currently disabled for security reasons",
      ),
    );
    expect(await containerOf("cont", "guard")).toEqual(before);
  });

  it("refuses an unknown host on update", async () => {
    expect(await expectJson(post("cont", { label: "guard", hostname: "nope.example" }), 500)).toEqual(
      errorBody(
        "Unable to process Container create/update: Invalid host: name nope.example not existing or access denied",
      ),
    );
  });
});

describe("request errors", () => {
  it("answers 400 naming the field for a body failing the schema", async () => {
    expect(await expectJson(post("cont", { hostname: "a.hosts.example" }), 400)).toEqual(
      errorBody("label: Invalid input: expected string, received undefined"),
    );
    expect(await expectJson(post("cont", { label: "x1", ipv6: "not-an-address" }), 400)).toEqual(
      errorBody("ipv6: must be an IPv6 address"),
    );
    expect(await expectJson(post("cont", { label: "Bad Label" }), 400)).toEqual(
      errorBody("label: must be 2 to 32 lowercase letters or digits"),
    );
    expect(await expectJson(post("cont", { label: "ok1", hostId: "7" }), 400)).toEqual(
      errorBody("hostId: Invalid input: expected number, received string"),
    );
  });

  it("answers 400 for a body that is not JSON", async () => {
    const response = await call("/containers/cont", {
      method: "POST",
      headers: { Authorization: "Basic YWRtaW46dGVzdC1hZG1pbi1wYXNzd29yZA==" },
      body: "label=web",
    });
    expect(await expectJson(response, 400)).toEqual(errorBody("request body is not valid JSON"));
  });

  it("answers 500 for an unknown project and 401 without credentials", async () => {
    expect(await expectJson(post("nosuch", { label: "web" }), 500)).toEqual(
      errorBody(
        "Unable to process Container create/update: Invalid project: label nosuch not existing or access denied",
      ),
    );
    const response = await call("/containers/cont", { method: "POST", body: "{}" });
    expect(response.status).toBe(401);
  });

  it("lets an API user write containers of the projects it matches", async () => {
    const auth = await createApiUser("contuser", ["cont"]);
    const body = await expectJson(
      as(auth, "/containers/cont", "POST", { label: "mine", hostname: "a.hosts.example", ipv6: "2001:db8::500" }),
      200,
    );
    expect(body.payload.key).toBe("containerId");
    expect(await expectJson(as(auth, "/containers/other", "POST", { label: "mine" }), 500)).toEqual(
      errorBody(
        "Unable to process Container create/update: Invalid project: label other not existing or access denied",
      ),
    );
  });
});
