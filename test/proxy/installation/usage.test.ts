// project_usage, kept by the triggers of migrations/0011, against a count made from the rows themselves after every
// kind of write: creates and updates through the API, domains moved between projects and removed by a full sync, the
// blue/green switch, and deletes that cascade (a container, a backend, a whole project).
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import {
  asAdmin,
  createBackend,
  createContainer,
  createHost,
  createProject,
  expectJson,
} from "../../support/proxy-api";

/** What project_usage should say, counted from the rows. */
const RECOUNT = `
  select p.id as project_id,
    (select count(*) from backends b where b.project_id = p.id) as backends,
    (select count(*) from containers c where c.project_id = p.id) as containers,
    (select count(*) from domains d join backends b on b.id = d.backend_id where b.project_id = p.id) as domains,
    (select count(*) from domains d join backends b on b.id = d.backend_id
      where b.project_id = p.id and d.public_ca_certificate) as public_ca_domains,
    (select count(*) from backend_containers l join backends b on b.id = l.backend_id where b.project_id = p.id) as servers,
    (select coalesce(sum(length(cast(b.params as blob))), 0) from backends b where b.project_id = p.id)
      + (select coalesce(sum(length(cast(l.params as blob))), 0) from backend_containers l
          join backends b on b.id = l.backend_id where b.project_id = p.id) as params_bytes
  from projects p order by p.id`;

async function expectUsageMatchesRows() {
  const usage = await env.DB.prepare("select * from project_usage order by project_id").all();
  const recount = await env.DB.prepare(RECOUNT).all();
  expect(usage.results).toEqual(recount.results);
  return usage.results;
}

const ssl = (operation: string, domainName: string, projectLabel: string, backendLabel = "web") => ({
  operation,
  domainName,
  projectLabel,
  backendLabel,
  enableSSL: true,
});

let one: number;
let two: number;

beforeAll(async () => {
  await createHost("u-host.hosts.example", "2001:db8:7::1");
  await createProject("uone");
  await createProject("utwo");
  one = await createContainer("uone", { label: "ca", hostname: "u-host.hosts.example", ipv6: "2001:db8:7::a" });
  two = await createContainer("uone", { label: "cb", hostname: "u-host.hosts.example", ipv6: "2001:db8:7::b" });
});

describe("project_usage", () => {
  it("counts creates and updates of backends, links (with params) and domains", async () => {
    await createBackend("uone", {
      label: "web",
      params: "timeout server 30s",
      backendContainers: [{ containerId: one, params: "check inter 5s" }],
      domainForwardings: [{ domainName: "a.u.example", publicCaCertificate: true }, { domainName: "b.u.example" }],
    });
    await createBackend("uone", { label: "green", backendContainers: [{ containerId: two, params: "weight 5" }] });
    await createBackend("utwo", { label: "web", params: "balance roundrobin" });
    const usage = await expectUsageMatchesRows();
    expect(usage[0]).toMatchObject({ backends: 2, containers: 2, domains: 2, public_ca_domains: 1, servers: 2 });
    await createBackend("uone", {
      label: "web",
      params: "timeout server 5s",
      domainForwardings: [{ domainName: "b.u.example" }],
    });
    await expectUsageMatchesRows();
  });

  it("follows domains moved, flagged, deleted and removed by a full sync, and the blue/green switch", async () => {
    await expectJson(
      asAdmin("/domains/massupdate", "POST", {
        domainOperations: [ssl("UPDATE", "b.u.example", "utwo"), ssl("CREATE", "c.u.example", "uone")],
      }),
      200,
    );
    await expectUsageMatchesRows();
    await expectJson(
      asAdmin("/domains/massupdate", "POST", {
        fullSync: true,
        domainOperations: [ssl("CREATE", "d.u.example", "uone")],
      }),
      200,
    );
    await expectJson(asAdmin("/backends/uone/web/setContainersOf/green", "PATCH"), 200);
    await expectUsageMatchesRows();
  });

  it("follows deletes that cascade: a container, a backend, a project", async () => {
    await env.DB.prepare("delete from containers where id = ?").bind(two).run();
    await expectUsageMatchesRows();
    await env.DB.prepare(
      "delete from backends where label = 'web' and project_id = (select id from projects where label = 'uone')",
    ).run();
    await expectUsageMatchesRows();
    await expectJson(asAdmin("/admin/projects/utwo", "DELETE"), 200);
    const usage = await expectUsageMatchesRows();
    expect(usage).toHaveLength(1);
  });
});
