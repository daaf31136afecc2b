// ?dryRun on every write route: the same status, body and ETag as the real write, and nothing stored; refusals
// answered as the real write answers them, 401 and 403 first, and a flag that is not true or false refused.
import { beforeAll, describe, expect, it } from "vitest";
import providedCertificate from "../fixtures/provided-rsa.cert.pem?raw";
import providedKey from "../fixtures/provided-rsa.key.pem?raw";
import {
  asAdmin,
  call,
  createApiUser,
  createBackend,
  createContainer,
  createHost,
  createProject,
  errorBody,
  expectJson,
} from "../../support/proxy-api";
import { createWriteProjects, etagOf, HOST, KEY, outcome, send, storage, webDomainOp } from "./writes-fixtures";

const withDryRun = (path: string, value = "true") => `${path}${path.includes("?") ? "&" : "?"}dryRun=${value}`;

/** The dry run, storage unchanged, then the real write: the same status, body and ETag. */
async function dryRunThenReal(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const before = await storage();
  const dry = await outcome(send(method, withDryRun(path), body, headers));
  expect(await storage()).toEqual(before);
  const real = await outcome(send(method, path, body, headers));
  expect(dry).toEqual(real);
  return real;
}

let c1: number;
let wrId: number;
beforeAll(async () => {
  ({ c1, wrId } = await createWriteProjects());
});

describe("dryRun", () => {
  type Request = [string, string, unknown?, Record<string, string>?];
  const admin = (path: string, method: string, body?: unknown) => expectJson(asAdmin(path, method, body), 200);
  /** A project of a case's own, with a backend web holding the given domains. */
  const projectWithDomains = async (label: string, domains: string[]) => {
    await createProject(label);
    await createBackend(label, { label: "web", domainForwardings: domains.map((domainName) => ({ domainName })) });
  };
  /** A case that makes `project` with `domains`, then sends this mass update. */
  const massUpdateOf = (project: string, domains: string[], body: object) => async (): Promise<Request> => {
    await projectWithDomains(project, domains);
    return ["POST", "/domains/massupdate", body];
  };
  // Each case first makes, with real writes under names of its own, the state its request changes: no case reads what
  // another wrote.
  const cases: [string, () => Request | Promise<Request>][] = [
    [
      "a backend create",
      () => [
        "POST",
        "/backends/wr",
        {
          label: "dry",
          domainForwardings: [{ domainName: "dry.wr.example", publicCaCertificate: true }],
          backendContainers: [{ containerId: c1, params: "check" }],
        },
      ],
    ],
    [
      "a backend update",
      async () => {
        await createBackend("wr", { label: "dryupd", domainForwardings: [{ domainName: "dryupd.wr.example" }] });
        return ["POST", "/backends/wr", { label: "dryupd", port: 8081, domainForwardings: [] }];
      },
    ],
    [
      "setContainersOf",
      async () => {
        await createBackend("wr", { label: "dryset" });
        return ["PATCH", "/backends/wr/dryset/setContainersOf/blue"];
      },
    ],
    ["a container create", () => ["POST", "/containers/wr", { label: "dry", hostname: HOST, ipv6: "2001:db8::ad" }]],
    [
      "a container update",
      async () => {
        await createContainer("wr", { label: "dryupd", hostname: HOST, ipv6: "2001:db8::ae" });
        return ["POST", "/containers/wr", { label: "dryupd", fullname: "Dry" }];
      },
    ],
    [
      "a mass update",
      massUpdateOf("wrmass", ["u.mass.wr.example", "m.mass.wr.example"], {
        domainOperations: [
          webDomainOp("CREATE", "d1.mass.wr.example", "wrmass"),
          webDomainOp("UPDATE", "u.mass.wr.example", "wrmass", { enableSSL: true }),
          webDomainOp("DELETE", "m.mass.wr.example", "wrmass"),
        ],
      }),
    ],
    [
      "a full synchronisation",
      massUpdateOf("wrsync", ["a.sync.wr.example", "b.sync.wr.example"], {
        fullSync: true,
        domainOperations: [webDomainOp("CREATE", "d1.sync.wr.example", "wrsync")],
      }),
    ],
    [
      "PUT permissions",
      async () => {
        await createContainer("wr", { label: "dryperm", hostname: HOST, ipv6: "2001:db8::c5" });
        await admin("/admin/users", "POST", { email: "perm1@wr.example" });
        await admin("/admin/users", "POST", { email: "perm2@wr.example" });
        return [
          "PUT",
          "/admin/containers/wr/dryperm/permissions",
          [
            { permission: "www-data", userEmail: "perm1@wr.example" },
            { permission: "deploy", userEmail: "perm2@wr.example" },
          ],
        ];
      },
    ],
    ["a project create", () => ["POST", "/admin/projects", { label: "wrdry", fullname: "Dry" }]],
    [
      "a project update",
      async () => {
        await createProject("wrdryupd", "Dry");
        return ["POST", "/admin/projects", { label: "wrdryupd" }];
      },
    ],
    [
      "a project delete",
      async () => {
        await createProject("wrdrydel");
        return ["DELETE", "/admin/projects/wrdrydel"];
      },
    ],
    ["a host create", () => ["POST", "/admin/hosts", { hostname: "dry.wr.example", ipv6: "2001:db8::d1" }]],
    [
      "a host update",
      async () => {
        await createHost("dryupd.wr.example", "2001:db8::d3");
        return ["POST", "/admin/hosts", { hostname: "dryupd.wr.example", ipv6: "2001:db8::d2" }];
      },
    ],
    [
      "an API user create",
      () => ["POST", "/admin/apiusers", { username: "drytenant", password: "password1", projectPatterns: ["wr"] }],
    ],
    [
      "an API user update",
      async () => {
        await createApiUser("drytenantupd", ["wr"], "password1");
        return [
          "POST",
          "/admin/apiusers",
          { username: "drytenantupd", password: "password2", projectPatterns: [], email: "d@wr.example" },
        ];
      },
    ],
    [
      "an API user delete",
      async () => {
        await createApiUser("drytenantdel", ["wr"], "password1");
        return ["DELETE", "/admin/apiusers/drytenantdel"];
      },
    ],
    [
      "a user create",
      () => ["POST", "/admin/users", { email: "dry@wr.example", role: "USER", defaultPermission: ["www-data"] }],
    ],
    [
      "a user update",
      async () => {
        await admin("/admin/users", "POST", { email: "dryupd@wr.example", role: "USER" });
        return ["POST", "/admin/users", { email: "dryupd@wr.example", fullname: "Dry", sshPublicKey: KEY }];
      },
    ],
    [
      "a certificate upload",
      () => ["PUT", "/admin/certificates/wr-dry", { certificatePem: providedCertificate, privateKeyPem: providedKey }],
    ],
    [
      "a certificate delete",
      async () => {
        await admin("/admin/certificates/wr-drydel", "PUT", {
          certificatePem: providedCertificate,
          privateKeyPem: providedKey,
        });
        return ["DELETE", "/admin/certificates/wr-drydel"];
      },
    ],
  ];
  for (const [what, request] of cases) {
    it(`answers ${what} exactly as the real write, and stores nothing`, async () => {
      const real = await dryRunThenReal(...(await request()));
      expect(real.status).toBe(200);
    });
  }

  it("with If-Match, answers the ETag the write then gets", async () => {
    const current = await etagOf("wr");
    const real = await dryRunThenReal("POST", "/backends/wr", { label: "dry", port: 8082 }, { "If-Match": current });
    expect(real.etag).toBe(await etagOf("wr"));
    expect(real.etag).not.toBe(current);
  });

  const refused: [string, number, () => [string, string, unknown?, Record<string, string>?], string?][] = [
    ["a body failing the schema", 400, () => ["POST", "/backends/wr", { label: "bad", port: 70000 }]],
    [
      "a validation failure",
      500,
      () => ["POST", "/backends/wr", { label: "bad", backendContainers: [{ containerId: 9999 }] }],
    ],
    ["an unknown project (the original's 500)", 500, () => ["POST", "/backends/nosuch", { label: "bad" }]],
    [
      "an address another container holds (the unique index)",
      409,
      () => ["POST", "/containers/wr", { label: "dup", hostname: HOST, ipv6: "2001:db8::a1" }],
    ],
    ["a stale If-Match", 412, () => ["POST", "/backends/wr", { label: "bad" }, { "If-Match": `"p${wrId}.r0"` }]],
    [
      "a mass update with one bad operation (all or nothing)",
      500,
      () => [
        "POST",
        "/domains/massupdate",
        {
          domainOperations: [
            webDomainOp("CREATE", "ok.wr.example", "wr"),
            webDomainOp("CREATE", "bad.wr.example", "wr", { redirectToUrl: "ftp://x" }),
          ],
        },
      ],
    ],
    ["a missing API user", 404, () => ["DELETE", "/admin/apiusers/nosuchuser"]],
    ["a missing certificate", 404, () => ["DELETE", "/admin/certificates/nosuch"]],
  ];
  for (const [what, status, request] of refused) {
    it(`answers ${what} with ${status} as the real write does, neither storing anything`, async () => {
      const before = await storage();
      const real = await dryRunThenReal(...request());
      expect(real.status).toBe(status);
      expect(JSON.parse(real.body)).toMatchObject({ success: false });
      expect(await storage()).toEqual(before);
    });
  }

  it("answers 401 and 403 before looking at the flag", async () => {
    const tenant = await createApiUser("drywr", ["wr"]);
    expect((await send("POST", withDryRun("/admin/projects"), { label: "wrx" }, {}, tenant)).status).toBe(403);
    expect((await call(withDryRun("/backends/wr"), { method: "POST", body: "{}" })).status).toBe(401);
  });

  for (const value of ["yes", "1", "TRUE", ""]) {
    it(`refuses dryRun=${value} with 400 and writes nothing`, async () => {
      const before = await storage();
      expect(await expectJson(send("POST", withDryRun("/backends/wr", value), { label: "flag" }), 400)).toEqual(
        errorBody('dryRun: Invalid option: expected one of "true"|"false"'),
      );
      expect(await storage()).toEqual(before);
    });
  }

  it("dryRun=false is the real write", async () => {
    const before = await storage();
    expect((await send("POST", withDryRun("/backends/wr", "false"), { label: "flag" })).status).toBe(200);
    expect(await storage()).not.toEqual(before);
  });
});
