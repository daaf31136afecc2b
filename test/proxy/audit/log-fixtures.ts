// Shared setup of the audit log tests: the projects au and au2 (a host, a backend each) and the tenant aut matching
// both, whose writes the log records.
import { env } from "cloudflare:workers";
import { createApiUser, createBackend, createHost, createProject } from "../../support/proxy-api";

/** Creates the projects, the host and the tenant; returns the tenant's credentials and the projects' ids by label. */
export async function createAuditProjects(): Promise<{ tenant: string; projectIds: Record<string, number> }> {
  await createProject("au");
  await createProject("au2");
  await createHost("au-host.example", "2001:db8::c0");
  await createBackend("au", { label: "api" });
  await createBackend("au2", { label: "web", domainForwardings: [{ domainName: "two.au.example" }] });
  const tenant = await createApiUser("aut", ["au", "au2"]);
  const rows = (await env.DB.prepare("select id, label from projects").all<{ id: number; label: string }>()).results;
  return { tenant, projectIds: Object.fromEntries(rows.map((row) => [row.label, row.id])) };
}
