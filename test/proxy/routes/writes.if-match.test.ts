// The project's ETag on every write route: a strong tag that changes with each write to the project, and If-Match (412
// with nothing changed, `*`, lists of tags, 404 before 412, the guard inside the batch).
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { upsertBackend } from "../../../src/proxy/installation/backends";
import { resolveProject } from "../../../src/proxy/installation/projects";
import { projectETag } from "../../../src/proxy/installation/revisions";
import { parseIfMatch } from "../../../src/proxy/routes/writes";
import { database } from "../../../src/shared/db";
import { asAdmin, createApiUser, errorBody, expectJson } from "../../support/proxy-api";
import { createWriteProjects, etagOf, HOST, outcome, send, storage, webDomainOp } from "./writes-fixtures";

const ADMIN = { username: "admin", isAdmin: true, projectPatterns: [] };

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

let wrId: number;
beforeAll(async () => {
  ({ wrId } = await createWriteProjects());
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

  it("answers 500 before 412: a project the caller cannot see stays unseen", async () => {
    expect(await expectJson(send("POST", "/backends/nosuch", { label: "web" }, { "If-Match": stale }), 500)).toEqual(
      errorBody("Unable to process backend create/update: Invalid project: label nosuch not existing or access denied"),
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
