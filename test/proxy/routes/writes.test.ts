// What every write route shares: the project's ETag, If-Match (412 with nothing changed, `*`, lists of tags, the guard
// inside the batch), and ?dryRun (the same answer as the real write, and nothing stored).
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { upsertBackend } from "../../../src/proxy/installation/backends";
import { resolveProject } from "../../../src/proxy/installation/projects";
import { projectETag } from "../../../src/proxy/installation/revisions";
import { parseIfMatch } from "../../../src/proxy/routes/writes";
import { database } from "../../../src/shared/db";
import providedCertificate from "../fixtures/provided-rsa.cert.pem?raw";
import providedKey from "../fixtures/provided-rsa.key.pem?raw";
import {
  ADMIN_AUTH,
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
import { createProjectOnHost, createProjectWithContainers } from "../../support/proxy-fixtures";

const ADMIN = { username: "admin", isAdmin: true, projectPatterns: [] };
const HOST = "wr-host.example";
const KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGFubmE= anna@laptop";

function send(method: string, path: string, body?: unknown, headers: Record<string, string> = {}, auth = ADMIN_AUTH) {
  return call(path, {
    method,
    headers: { Authorization: auth, ...(body !== undefined && { "content-type": "application/json" }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

/** Status, body and ETag of an answer: what a dry run must answer exactly as the real write. */
async function outcome(response: Response | Promise<Response>) {
  const resolved = await response;
  return { status: resolved.status, body: await resolved.text(), etag: resolved.headers.get("ETag") };
}

/** A domain operation on backend web of `projectLabel`, with `extra` fields. */
const webDomainOp = (operation: string, domainName: string, projectLabel: string, extra = {}) => ({
  operation,
  domainName,
  projectLabel,
  backendLabel: "web",
  ...extra,
});

/** The outcome of a write whose If-Match names no current tag of `project`, whose tag is `current`. */
const staleTag = (project: string, current: string) => ({
  status: 412,
  body: JSON.stringify(
    errorBody(
      `Precondition failed: If-Match names no current ETag of project ${project} (it is ${current}), nothing was changed`,
    ),
  ),
  etag: current,
});

async function etagOf(project: string): Promise<string> {
  const response = await asAdmin(`/projects/${project}`);
  expect(response.status).toBe(200);
  return response.headers.get("ETag")!;
}

const TABLES = [
  "projects",
  "backends",
  "domains",
  "backend_containers",
  "containers",
  "container_permissions",
  "hosts",
  "users",
  "api_users",
  "certificates",
  "audit_log",
];

/** Everything a write could change: row counts, versions, revisions and the id sequences. */
async function storage() {
  const counts = await env.DB.prepare(
    `select ${TABLES.map((t) => `(select count(*) from ${t}) as ${t}`).join(", ")}`,
  ).first();
  const versions = await env.DB.prepare(
    `select ${TABLES.slice(0, 9)
      .map((t) => `(select coalesce(sum(version), 0) from ${t}) as ${t}`)
      .join(", ")}`,
  ).first();
  const projects = (await env.DB.prepare("select label, fullname, revision from projects order by label").all())
    .results;
  const sequences = (await env.DB.prepare("select name, seq from sqlite_sequence order by name").all()).results;
  const hosts = (await env.DB.prepare("select hostname, ipv6 from hosts order by hostname").all()).results;
  return { counts, versions, projects, sequences, hosts };
}

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
let c2: number;
let wrId: number;

beforeAll(async () => {
  ({ c1, c2 } = await createProjectOnHost("wr", {
    hostname: HOST,
    ipv6: "2001:db8::a0",
    containers: { c1: "2001:db8::a1", c2: "2001:db8::a2" },
  }));
  wrId = (await env.DB.prepare("select id from projects where label = 'wr'").first<{ id: number }>())!.id;
  await createProjectWithContainers("wr2", HOST, { c1: "2001:db8::b1" });
  await createBackend("wr", { label: "web", backendContainers: [{ containerId: c1 }] });
  await createBackend("wr", {
    label: "blue",
    backendContainers: [{ containerId: c2 }],
    domainForwardings: [{ domainName: "blue.wr.example" }],
  });
  await createBackend("wr2", { label: "web", domainForwardings: [{ domainName: "moving.wr.example" }] });
  await expectJson(asAdmin("/admin/users", "POST", { email: "anna@wr.example", sshPublicKey: KEY }), 200);
  // Anna holds a permission in wr whatever ran before: writing her changes wr's tag.
  await expectJson(
    asAdmin("/admin/containers/wr/c2/permissions", "PUT", [{ permission: "www-data", userEmail: "anna@wr.example" }]),
    200,
  );
});

describe("the project's ETag", () => {
  it("GET /projects/{p} answers a strong tag naming the project and its revision, the same until a write", async () => {
    const row = await env.DB.prepare("select id, revision from projects where label = 'wr'").first<{
      id: number;
      revision: number;
    }>();
    expect(await etagOf("wr")).toBe(`"p${row!.id}.r${row!.revision}"`);
    expect(await etagOf("wr")).toBe(await etagOf("wr"));
    expect(await etagOf("wr2")).not.toBe(await etagOf("wr"));
  });

  for (const [what, write] of [
    ["POST /backends", () => asAdmin("/backends/wr", "POST", { label: "web", port: 8080 })],
    ["PATCH setContainersOf", () => asAdmin("/backends/wr/web/setContainersOf/blue", "PATCH")],
    [
      "POST /containers",
      () => asAdmin("/containers/wr", "POST", { label: "c3", hostname: HOST, ipv6: "2001:db8::a3" }),
    ],
    [
      "a mass update",
      () =>
        asAdmin("/domains/massupdate", "POST", {
          domainOperations: [webDomainOp("CREATE", "m.wr.example", "wr")],
        }),
    ],
    [
      "PUT permissions",
      () =>
        asAdmin("/admin/containers/wr/c1/permissions", "PUT", [
          { permission: "www-data", userEmail: "anna@wr.example" },
        ]),
    ],
    ["POST /admin/projects", () => asAdmin("/admin/projects", "POST", { label: "wr", fullname: "Write tests" })],
    [
      "POST /admin/hosts (a host of its containers)",
      () => asAdmin("/admin/hosts", "POST", { hostname: HOST, ipv6: "2001:db8::a9" }),
    ],
    [
      "POST /admin/users (a user holding a permission)",
      () => asAdmin("/admin/users", "POST", { email: "anna@wr.example", fullname: "Anna" }),
    ],
  ] as const) {
    it(`changes with ${what}, whose answer carries the new tag when it wrote one project`, async () => {
      const before = await etagOf("wr");
      const response = await write();
      expect(response.status).toBe(200);
      const after = await etagOf("wr");
      expect(after).not.toBe(before);
      if (!what.includes("(")) expect(response.headers.get("ETag")).toBe(after);
      else expect(response.headers.get("ETag")).toBeNull();
    });
  }

  it("stays when another project or something no project shows changes", async () => {
    const before = await etagOf("wr");
    await expectJson(asAdmin("/backends/wr2", "POST", { label: "api" }), 200);
    await createApiUser("wrwatcher", ["wr"]);
    await expectJson(asAdmin("/admin/users", "POST", { email: "nobody@wr.example" }), 200);
    await expectJson(asAdmin("/admin/hosts", "POST", { hostname: "idle.wr.example", ipv6: "2001:db8::af" }), 200);
    expect(await etagOf("wr")).toBe(before);
  });
});

describe("If-Match", () => {
  let stale: string;
  beforeAll(async () => {
    stale = await etagOf("wr");
    await expectJson(asAdmin("/backends/wr", "POST", { label: "web" }), 200);
  });

  for (const [method, path, body] of [
    ["POST", "/backends/wr", { label: "new1" }],
    ["PATCH", "/backends/wr/web/setContainersOf/blue", undefined],
    ["POST", "/containers/wr", { label: "new2", hostname: HOST, ipv6: "2001:db8::a7" }],
    [
      "POST",
      "/domains/massupdate",
      {
        domainOperations: [webDomainOp("CREATE", "x.wr.example", "wr")],
      },
    ],
    ["PUT", "/admin/containers/wr/c2/permissions", [{ permission: "root", userEmail: "anna@wr.example" }]],
    ["POST", "/admin/projects", { label: "wr", fullname: "Renamed" }],
    ["DELETE", "/admin/projects/wr", undefined],
  ] as const) {
    it(`${method} ${path} answers 412 with the current ETag to a stale tag, and changes nothing`, async () => {
      const current = await etagOf("wr");
      const before = await storage();
      const response = await send(method, path, body, { "If-Match": stale });
      expect(await outcome(response)).toEqual(staleTag("wr", current));
      expect(await storage()).toEqual(before);
    });
  }

  it("lets the write through with the current tag, a list holding it, or *, each answering the new tag", async () => {
    for (const ifMatch of [
      (current: string) => current,
      (current: string) => `"p999.r0", W/"weak" ,${current}`,
      () => "*",
    ]) {
      const current = await etagOf("wr");
      const response = await send("POST", "/backends/wr", { label: "web" }, { "If-Match": ifMatch(current) });
      expect(response.status).toBe(200);
      expect(response.headers.get("ETag")).toBe(await etagOf("wr"));
      expect(response.headers.get("ETag")).not.toBe(current);
    }
  });

  it("never matches a weak tag or another project's tag, and answers 412", async () => {
    const current = await etagOf("wr");
    for (const tag of [`W/${current}`, await etagOf("wr2")]) {
      const response = await send("POST", "/backends/wr", { label: "web" }, { "If-Match": tag });
      expect(response.status).toBe(412);
      expect(response.headers.get("ETag")).toBe(current);
    }
    expect(await etagOf("wr")).toBe(current);
  });

  it("* on a project that does not exist answers 412 and creates nothing", async () => {
    const before = await storage();
    expect(await outcome(send("POST", "/admin/projects", { label: "wrnew" }, { "If-Match": "*" }))).toEqual({
      status: 412,
      body: JSON.stringify(errorBody("Precondition failed: project wrnew does not exist")),
      etag: null,
    });
    expect(await storage()).toEqual(before);
  });

  it("answers 404 before 412: a project the caller cannot see stays unseen", async () => {
    expect(await expectJson(send("POST", "/backends/nosuch", { label: "web" }, { "If-Match": stale }), 404)).toEqual(
      errorBody("Invalid project: label nosuch not existing or access denied"),
    );
  });

  for (const header of ["abc", '"open', 'W/"a" "b"', '"a", x', 'W"a"', '"sp ace"', '*, "a"']) {
    it(`refuses If-Match ${JSON.stringify(header)} with 400`, async () => {
      expect(await expectJson(send("POST", "/backends/wr", { label: "web" }, { "If-Match": header }), 400)).toEqual(
        errorBody("If-Match: must be * or a list of entity tags"),
      );
    });
  }

  it("parses lists as RFC 9110 writes them: empty elements, white space, commas inside tags, weak tags", () => {
    expect(parseIfMatch(undefined)).toBeUndefined();
    expect(parseIfMatch(" * ")).toEqual({ any: true });
    expect(parseIfMatch(' , "a,b" ,W/"c",,"" ')).toEqual({ tags: ['"a,b"', 'W/"c"', '""'] });
    // An empty value names no tag (fetch does not send one; a proxy might).
    expect(() => parseIfMatch("")).toThrow("If-Match: must be * or a list of entity tags");
  });

  it("a mass update lists the tag of every project it changes, the one a domain moves out of too", async () => {
    const operations = {
      domainOperations: [webDomainOp("UPDATE", "moving.wr.example", "wr")],
    };
    const [wr, wr2] = [await etagOf("wr"), await etagOf("wr2")];
    const before = await storage();
    expect(await outcome(send("POST", "/domains/massupdate", operations, { "If-Match": wr }))).toEqual(
      staleTag("wr2", wr2),
    );
    expect(await storage()).toEqual(before);
    const response = await send("POST", "/domains/massupdate", operations, { "If-Match": `${wr2}, ${wr}` });
    expect(await outcome(response)).toEqual({ status: 200, body: "[]", etag: null });
    expect(await etagOf("wr")).not.toBe(wr);
    expect(await etagOf("wr2")).not.toBe(wr2);
  });

  it("is checked again inside the batch: a revision that moved after the request read it refuses the write", async () => {
    const db = database(env.DB);
    const project = await resolveProject(db, ADMIN, "wr");
    await expectJson(asAdmin("/backends/wr", "POST", { label: "web" }), 200);
    const current = await etagOf("wr");
    const before = await storage();
    const attempt = upsertBackend(
      db,
      project,
      { label: "raced" },
      { extraDirectives: [] },
      {
        ifMatch: { tags: [projectETag(project)] },
      },
    );
    await expect(attempt).rejects.toMatchObject({ kind: "stale_revision", currentETag: current });
    expect(await storage()).toEqual(before);
    // Without If-Match, the same stale read writes as before (and bumps the revision).
    expect(await upsertBackend(db, project, { label: "raced" }, { extraDirectives: [] })).toEqual({
      id: expect.any(Number),
      etag: `"p${wrId}.r${Number(current.match(/r(\d+)/)![1]) + 1}"`,
      warnings: [],
    });
  });
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
    ["an unknown project", 404, () => ["POST", "/backends/nosuch", { label: "bad" }]],
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
