// GET /projects and /projects/{p}: the project tree's exact JSON, and what each API user may see and change.
import { beforeAll, describe, expect, it } from "vitest";
import {
  ADMIN_AUTH,
  as,
  asAdmin,
  call,
  createApiUser,
  createBackend,
  createContainer,
  createHost,
  createProject,
  errorBody,
  expectJson,
  massUpdate,
  rowsOf,
} from "../../support/proxy-api";
import { CHALLENGE } from "./refusals-fixtures";

const KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGx5c2tleQ== ops@host";

describe("GET /projects/{projectLabel}", () => {
  let webId: number;
  let dbId: number;
  let prodId: number;
  let hostId: number;
  let userId: number;

  beforeAll(async () => {
    await createProject("shop", "The Shop");
    hostId = (await createHost("node1.example.com", "2001:db8::1")).hostId;
    webId = await createContainer("shop", {
      label: "web",
      fullname: "Web server",
      hostname: "node1.example.com",
      ipv6: "2001:db8::10",
    });
    dbId = await createContainer("shop", { label: "db", hostId, ipv6: "2001:db8::11" });
    prodId = await createBackend("shop", {
      label: "prod",
      port: 8080,
      params: "option httpchk",
      domainForwardings: [
        { domainName: "www.shop.example", publicCaCertificate: true },
        { domainName: "api.shop.example", certProvided: true },
      ],
      backendContainers: [{ containerId: webId, params: "check" }, { containerId: dbId }],
    });
    await createBackend("shop", {
      label: "permredirect",
      domainForwardings: [{ domainName: "old.shop.example", redirectToUrl: "https://www.shop.example/*" }],
    });
    await expectJson(
      asAdmin("/admin/users", "POST", {
        email: "ops@example.com",
        fullname: "Ops",
        sshPublicKey: KEY,
        defaultPermission: ["www-data"],
      }),
      200,
    );
    const container = await expectJson(
      asAdmin("/admin/containers/shop/web/permissions", "PUT", [
        { permission: "www-data", userEmail: "ops@example.com" },
      ]),
      200,
    );
    userId = container.containerPermissions[0].userId;
  });

  it("answers the whole tree with sorted keys, sorted lists, derived names and no null fields", async () => {
    const response = await asAdmin("/projects/shop");
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/json; charset=UTF-8");
    // The id the project got: other describes may have created projects before this one's beforeAll ran.
    const [{ id: projectId }] = (await rowsOf("select id from projects where label = 'shop'")) as { id: number }[];
    const permBackendId = prodId + 1;
    const expected = {
      backends: [
        {
          FQLabel: `shop_${permBackendId}_permredirect`,
          backendContainers: [],
          domainForwardings: [
            {
              backendLabel: "permredirect",
              certProvided: false,
              domainName: "old.shop.example",
              publicCaCertificate: false,
              redirectToUrl: "https://www.shop.example/*",
              version: 0,
            },
          ],
          globalBackend: true,
          label: "permredirect",
          port: 80,
          projectId,
          version: 0,
        },
        {
          FQLabel: `shop_${prodId}_prod`,
          backendContainers: [
            { backendId: prodId, containerId: webId, params: "check", version: 0 },
            { backendId: prodId, containerId: dbId, version: 0 },
          ],
          domainForwardings: [
            {
              backendLabel: "prod",
              certProvided: true,
              domainName: "api.shop.example",
              publicCaCertificate: false,
              version: 0,
            },
            {
              backendLabel: "prod",
              certProvided: false,
              domainName: "www.shop.example",
              publicCaCertificate: true,
              version: 0,
            },
          ],
          globalBackend: false,
          label: "prod",
          params: "option httpchk",
          port: 8080,
          projectId,
          version: 0,
        },
      ],
      containers: [
        {
          FQLabel: "shop-db",
          containerPermissions: [],
          host: { hostname: "node1.example.com", ipv6: "2001:db8::1", version: 0 },
          hostId,
          ipv6: "2001:db8::11",
          label: "db",
          projectId,
          version: 0,
        },
        {
          FQLabel: "shop-web",
          containerPermissions: [
            {
              containerId: webId,
              permission: "www-data",
              sshProxyUsername: "shop-web_www-data",
              user: {
                defaultPermission: ["www-data"],
                email: "ops@example.com",
                fullname: "Ops",
                proxyPermission: [],
                role: "CONTACT",
                sshPublicKey: KEY,
                version: 0,
              },
              userId,
              version: 0,
            },
          ],
          fullname: "Web server",
          host: { hostname: "node1.example.com", ipv6: "2001:db8::1", version: 0 },
          hostId,
          ipv6: "2001:db8::10",
          label: "web",
          projectId,
          version: 0,
        },
      ],
      fullname: "The Shop",
      label: "shop",
      version: 0,
    };
    // Compared as text: the key order is part of the contract.
    expect(await response.text()).toBe(JSON.stringify(expected));
  });

  it("answers 404 with the same body for a missing project and a forbidden one", async () => {
    const outsider = await createApiUser("outsider", ["other.*"]);
    const missing = await expectJson(as(outsider, "/projects/nosuch"), 404);
    const forbidden = await expectJson(as(outsider, "/projects/shop"), 404);
    expect(missing).toEqual(errorBody("Invalid project: label nosuch not existing or access denied"));
    expect(forbidden).toEqual(errorBody("Invalid project: label shop not existing or access denied"));
  });

  it("shows a granted user's project patterns to the administrator only, as they name other projects", async () => {
    await createProject("staffed");
    const { hostId: staffedHost } = await createHost("staffed-node.example.com", "2001:db8:5afe::1");
    await createContainer("staffed", { label: "app", hostId: staffedHost, ipv6: "2001:db8:5afe::90" });
    await expectJson(
      asAdmin("/admin/users", "POST", { email: "staff@example.com", proxyPermission: ["betacorp", "secret.*"] }),
      200,
    );
    const grant = [{ permission: "root", userEmail: "staff@example.com" }];
    await expectJson(asAdmin("/admin/containers/staffed/app/permissions", "PUT", grant), 200);
    const grantedUsers = async (caller: Promise<Response>) => {
      const tree = await expectJson(caller, 200);
      return tree.containers[0].containerPermissions.map((granted: { user: object }) => granted.user);
    };
    const user = { defaultPermission: [], email: "staff@example.com", role: "CONTACT", version: 0 };
    const patterns = ["betacorp", "secret.*"];
    expect(await grantedUsers(asAdmin("/projects/staffed"))).toEqual([{ ...user, proxyPermission: patterns }]);
    const tenant = await createApiUser("staffed-tenant", ["staffed"]);
    expect(await grantedUsers(as(tenant, "/projects/staffed"))).toEqual([user]);
  });

  it("answers 401 without credentials", async () => {
    const response = await call("/projects/shop");
    expect(response.status).toBe(401);
    expect(response.headers.get("WWW-Authenticate")).toBe(CHALLENGE);
  });
});

describe("GET /projects", () => {
  beforeAll(async () => {
    for (const label of ["teamb", "teama", "teamc2", "alpha", "beta"]) await createProject(label);
  });

  it("lists every project, sorted, for the administrator", async () => {
    const labels = await expectJson(asAdmin("/projects"), 200);
    expect(labels).toEqual([...labels].sort());
    expect(labels).toEqual(expect.arrayContaining(["alpha", "beta", "teama", "teamb", "teamc2"]));
  });

  it("lists only the labels an API user's patterns match in full, sorted", async () => {
    expect(await expectJson(as(await createApiUser("teamer", ["team[ab]", "beta"]), "/projects"), 200)).toEqual([
      "beta",
      "teama",
      "teamb",
    ]);
    // "team" must match the whole label, so it matches none of them.
    expect(await expectJson(as(await createApiUser("partial", ["team", "alp"]), "/projects"), 200)).toEqual([]);
    expect(await expectJson(as(await createApiUser("nobody", []), "/projects"), 200)).toEqual([]);
    expect(await expectJson(as(await createApiUser("alternation", ["alpha|beta"]), "/projects"), 200)).toEqual([
      "alpha",
      "beta",
    ]);
  });
});

describe("isolation between two API users", () => {
  let alice: string;
  let bob: string;

  beforeAll(async () => {
    await createProject("aone");
    await createProject("atwo");
    await createProject("bone");
    await createHost("iso.example.com", "2001:db8::99");
    for (const [index, project] of ["aone", "atwo", "bone"].entries()) {
      // An address belongs to one container across all projects.
      await createContainer(project, { label: "app", hostname: "iso.example.com", ipv6: `2001:db8::9${index}` });
      await createBackend(project, { label: "web", domainForwardings: [{ domainName: `${project}.example.org` }] });
    }
    alice = await createApiUser("alice", ["ao.*", "atw.*"]);
    bob = await createApiUser("bob", ["bone"]);
  });

  it("each sees only their own projects", async () => {
    expect(await expectJson(as(alice, "/projects"), 200)).toEqual(["aone", "atwo"]);
    expect(await expectJson(as(bob, "/projects"), 200)).toEqual(["bone"]);
    expect((await as(alice, "/projects/aone")).status).toBe(200);
    expect((await as(bob, "/projects/bone")).status).toBe(200);
  });

  it("reads of the other's project answer 404", async () => {
    const denied = errorBody("Invalid project: label bone not existing or access denied");
    expect(await expectJson(as(alice, "/projects/bone"), 404)).toEqual(denied);
    expect(await expectJson(as(alice, "/domains/bone"), 404)).toEqual(denied);
    expect(await expectJson(as(alice, "/domains/bone/web"), 404)).toEqual(denied);
  });

  it("writes into the other's project answer the original's 500 and change nothing", async () => {
    const before = await expectJson(asAdmin("/projects/bone"), 200);
    const denied = (refusal: string) =>
      errorBody(`Unable to process ${refusal}: Invalid project: label bone not existing or access denied`);
    expect(
      await expectJson(as(alice, "/containers/bone", "POST", { label: "app", fullname: "hijacked" }), 500),
    ).toEqual(denied("Container create/update"));
    expect(await expectJson(as(alice, "/backends/bone", "POST", { label: "web", port: 1 }), 500)).toEqual(
      denied("backend create/update"),
    );
    expect(await expectJson(as(alice, "/backends/bone/web/setContainersOf/web", "PATCH"), 500)).toEqual(
      denied("backend container update"),
    );
    expect(
      await expectJson(
        massUpdate(alice, {
          domainOperations: [
            { operation: "DELETE", domainName: "bone.example.org", projectLabel: "bone", backendLabel: "web" },
          ],
        }),
        500,
      ),
    ).toEqual(denied("mass update"));
    expect(await expectJson(asAdmin("/projects/bone"), 200)).toEqual(before);
  });

  it("a mass update cannot take over a domain of a project the caller cannot see", async () => {
    const before = await expectJson(asAdmin("/domains/bone"), 200);
    const aliceBefore = await expectJson(as(alice, "/domains/aone"), 200);
    const response = massUpdate(alice, {
      domainOperations: [
        { operation: "UPDATE", domainName: "bone.example.org", projectLabel: "aone", backendLabel: "web" },
      ],
    });
    expect(await expectJson(response, 500)).toEqual(
      errorBody("Unable to process mass update: bone.example.org: assigned to a project not existing or access denied"),
    );
    expect(await expectJson(asAdmin("/domains/bone"), 200)).toEqual(before);
    expect(await expectJson(as(alice, "/domains/aone"), 200)).toEqual(aliceBefore);
  });

  it("a mass update may move a domain between two projects the caller can see", async () => {
    // A domain of its own to move: the other tests find aone and atwo as beforeAll made them.
    await expectJson(
      massUpdate(ADMIN_AUTH, {
        domainOperations: [
          { operation: "CREATE", domainName: "amove.example.org", projectLabel: "atwo", backendLabel: "web" },
        ],
      }),
      200,
    );
    const aoneBefore = Object.keys(await expectJson(as(alice, "/domains/aone"), 200));
    const warnings = await expectJson(
      massUpdate(alice, {
        domainOperations: [
          { operation: "UPDATE", domainName: "amove.example.org", projectLabel: "aone", backendLabel: "web" },
        ],
      }),
      200,
    );
    expect(warnings).toEqual([]);
    expect(Object.keys(await expectJson(as(alice, "/domains/aone"), 200))).toEqual(
      [...aoneBefore, "amove.example.org"].sort(),
    );
    expect(Object.keys(await expectJson(as(alice, "/domains/atwo"), 200))).toEqual(["atwo.example.org"]);
  });
});
