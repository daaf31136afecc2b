// Shared setup of the write route tests: the projects wr and wr2 on one host they start from, requests with a body and
// headers, the ETag of a project, and a snapshot of everything a write could change in storage.
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import { ADMIN_AUTH, asAdmin, call, createBackend, expectJson } from "../../support/proxy-api";
import { createProjectOnHost, createProjectWithContainers } from "../../support/proxy-fixtures";

export const HOST = "wr-host.example";
export const KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGFubmE= anna@laptop";

/** A request with a JSON body and headers, as the administrator unless `auth` says otherwise. */
export function send(
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
  auth = ADMIN_AUTH,
) {
  return call(path, {
    method,
    headers: { Authorization: auth, ...(body !== undefined && { "content-type": "application/json" }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

/** Status, body and ETag of an answer: what a dry run must answer exactly as the real write. */
export async function outcome(response: Response | Promise<Response>) {
  const resolved = await response;
  return { status: resolved.status, body: await resolved.text(), etag: resolved.headers.get("ETag") };
}

/** A domain operation on backend web of `projectLabel`, with `extra` fields. */
export const webDomainOp = (operation: string, domainName: string, projectLabel: string, extra = {}) => ({
  operation,
  domainName,
  projectLabel,
  backendLabel: "web",
  ...extra,
});

/** The ETag GET /projects/{p} answers. */
export async function etagOf(project: string): Promise<string> {
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
export async function storage() {
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

/**
 * Project wr (containers c1 and c2 on HOST; backends web on c1 and blue on c2 with blue.wr.example) and project wr2
 * (container c1; backend web with moving.wr.example), and anna holding www-data on wr's c2. Returns wr's containers'
 * ids and wr's project id.
 */
export async function createWriteProjects(): Promise<{ c1: number; c2: number; wrId: number }> {
  const { c1, c2 } = await createProjectOnHost("wr", {
    hostname: HOST,
    ipv6: "2001:db8::a0",
    containers: { c1: "2001:db8::a1", c2: "2001:db8::a2" },
  });
  const wrId = (await env.DB.prepare("select id from projects where label = 'wr'").first<{ id: number }>())!.id;
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
  return { c1, c2, wrId };
}
