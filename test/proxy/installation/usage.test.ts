// project_usage, kept by the triggers of migrations/0011, against a count made from the rows themselves after every
// kind of write: creates and updates through the API, domains moved between projects and removed by a full sync, the
// blue/green switch, and deletes that cascade (a container, a backend, a whole project).
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
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

/** Two projects of the test's own, the first with two containers on a host of its own: no test sees another's rows. */
async function projectsOf(tag: string, n: number) {
  const host = `${tag}-host.hosts.example`;
  const first = `${tag}one`;
  const second = `${tag}two`;
  await createHost(host, `2001:db8:7:${n}::1`);
  await createProject(first);
  await createProject(second);
  const one = await createContainer(first, { label: "ca", hostname: host, ipv6: `2001:db8:7:${n}::a` });
  const two = await createContainer(first, { label: "cb", hostname: host, ipv6: `2001:db8:7:${n}::b` });
  return { tag, first, second, one, two };
}

type Projects = Awaited<ReturnType<typeof projectsOf>>;

/** The backends the first test creates: "web" (params, a linked server, two domains) and "green" in the first
 * project, "web" in the second. */
async function backendsOf({ tag, first, second, one, two }: Projects) {
  await createBackend(first, {
    label: "web",
    params: "timeout server 30s",
    backendContainers: [{ containerId: one, params: "check inter 5s" }],
    domainForwardings: [
      { domainName: `a.${tag}.example`, publicCaCertificate: true },
      { domainName: `b.${tag}.example` },
    ],
  });
  await createBackend(first, { label: "green", backendContainers: [{ containerId: two, params: "weight 5" }] });
  await createBackend(second, { label: "web", params: "balance roundrobin" });
}

/** The usage rows of the given projects, by label. */
const usageOf = (labels: string[]) =>
  env.DB.prepare(
    `select p.label, u.backends, u.containers, u.domains, u.public_ca_domains, u.servers from project_usage u
      join projects p on p.id = u.project_id where p.label in (select value from json_each(?)) order by p.label`,
  )
    .bind(JSON.stringify(labels))
    .all()
    .then((result) => result.results);

describe("project_usage", () => {
  it("counts creates and updates of backends, links (with params) and domains", async () => {
    const projects = await projectsOf("ucount", 1);
    await backendsOf(projects);
    await expectUsageMatchesRows();
    expect(await usageOf([projects.first])).toEqual([
      { label: "ucountone", backends: 2, containers: 2, domains: 2, public_ca_domains: 1, servers: 2 },
    ]);
    await createBackend(projects.first, {
      label: "web",
      params: "timeout server 5s",
      domainForwardings: [{ domainName: "b.ucount.example" }],
    });
    await expectUsageMatchesRows();
  });

  it("follows domains moved, flagged, deleted and removed by a full sync, and the blue/green switch", async () => {
    const projects = await projectsOf("umove", 2);
    await backendsOf(projects);
    await expectJson(
      asAdmin("/domains/massupdate", "POST", {
        domainOperations: [ssl("UPDATE", "b.umove.example", "umovetwo"), ssl("CREATE", "c.umove.example", "umoveone")],
      }),
      200,
    );
    await expectUsageMatchesRows();
    await expectJson(
      asAdmin("/domains/massupdate", "POST", {
        fullSync: true,
        domainOperations: [ssl("CREATE", "d.umove.example", "umoveone")],
      }),
      200,
    );
    await expectJson(asAdmin("/backends/umoveone/web/setContainersOf/green", "PATCH"), 200);
    await expectUsageMatchesRows();
  });

  it("follows deletes that cascade: a container, a backend, a project", async () => {
    const projects = await projectsOf("udel", 3);
    await backendsOf(projects);
    await env.DB.prepare("delete from containers where id = ?").bind(projects.two).run();
    await expectUsageMatchesRows();
    await env.DB.prepare(
      "delete from backends where label = 'web' and project_id = (select id from projects where label = 'udelone')",
    ).run();
    await expectUsageMatchesRows();
    await expectJson(asAdmin("/admin/projects/udeltwo", "DELETE"), 200);
    await expectUsageMatchesRows();
    expect(await usageOf([projects.first, projects.second])).toEqual([
      { label: "udelone", backends: 1, containers: 1, domains: 0, public_ca_domains: 0, servers: 0 },
    ]);
  });
});
