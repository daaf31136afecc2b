// Quotas (issue 27, item 7): per project (backends, containers, domains, params bytes) and for the whole installation
// (backends, servers, domains, public CA domains, params bytes), on every path that adds rows. A write past one answers
// 403 naming the setting and stores nothing; the check is part of the write's batch (of two concurrent writes for the
// last place, one wins); a write that adds nothing passes even past a lowered limit.
import { createExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import worker from "../../../src/index";
import {
  ADMIN_AUTH,
  createContainer,
  createHost,
  createProject,
  errorBody,
  expectJson,
  rowsOf,
} from "../../support/proxy-api";

let containerIds: Record<string, number> = {};

/** A request to the Worker with these settings on top of the test's. */
function send(settings: Record<string, string>, method: string, path: string, body?: unknown, auth = ADMIN_AUTH) {
  return worker.fetch(
    new Request(`http://example.com${path}`, {
      method,
      headers: { Authorization: auth, ...(body !== undefined && { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
    { ...env, ...settings } as unknown as Env,
    createExecutionContext(),
  );
}

/** Everything a refused write must leave as it was. */
async function stored() {
  return {
    usage: await rowsOf("select * from project_usage order by project_id"),
    backends: await rowsOf("select project_id, label, params, version from backends order by id"),
    domains: await rowsOf("select domain_name, backend_id, public_ca_certificate from domains order by id"),
    links: await rowsOf("select backend_id, container_id, params from backend_containers order by id"),
    containers: await rowsOf("select project_id, label from containers order by id"),
    projects: await rowsOf("select label, revision from projects order by id"),
    audit: await rowsOf("select count(*) as n from audit_log"),
  };
}

const installationTotal = async (column: string) =>
  (await env.DB.prepare(`select sum(${column}) as n from project_usage`).first<{ n: number }>())!.n;

const quota = (project: string, limit: number, noun: string, setting: string) =>
  errorBody(`Quota exceeded: project ${project} may hold at most ${limit} ${noun} (${setting}), nothing was changed`);
const bound = (limit: number, noun: string, setting: string) =>
  errorBody(
    `Installation limit reached: the installation may hold at most ${limit} ${noun} (${setting}), nothing was changed`,
  );

const op = (operation: string, domainName: string, projectLabel: string, enableSSL = false) => ({
  operation,
  domainName,
  projectLabel,
  backendLabel: "web",
  enableSSL,
});

beforeAll(async () => {
  await createHost("q-host.hosts.example", "2001:db8:9::1");
  for (const project of ["qback", "qcont", "qpar", "qparlow", "qinst", "qrace"]) await createProject(project);
  containerIds = {
    par1: await createContainer("qpar", { label: "one", hostname: "q-host.hosts.example", ipv6: "2001:db8:9::11" }),
    par2: await createContainer("qpar", { label: "two", hostname: "q-host.hosts.example", ipv6: "2001:db8:9::12" }),
    inst: await createContainer("qinst", { label: "one", hostname: "q-host.hosts.example", ipv6: "2001:db8:9::21" }),
  };
});

describe("PROXY_MAX_BACKENDS_PER_PROJECT", () => {
  const limits = { PROXY_MAX_BACKENDS_PER_PROJECT: "2" };

  it("refuses a backend past the quota with 403, storing nothing, and lets the others be updated", async () => {
    for (const label of ["one", "two"]) await expectJson(send(limits, "POST", "/backends/qback", { label }), 200);
    const before = await stored();
    const refusal = quota("qback", 2, "backends", "PROXY_MAX_BACKENDS_PER_PROJECT");
    expect(await expectJson(send(limits, "POST", "/backends/qback", { label: "three" }), 403)).toEqual(refusal);
    expect(await expectJson(send(limits, "POST", "/backends/qback?dryRun=true", { label: "three" }), 403)).toEqual(
      refusal,
    );
    expect(await stored()).toEqual(before);
    await expectJson(send(limits, "POST", "/backends/qback", { label: "two", fullname: "Second" }), 200);
  });
});

describe("PROXY_MAX_CONTAINERS_PER_PROJECT", () => {
  it("refuses a container past the quota with 403, storing nothing", async () => {
    const limits = { PROXY_MAX_CONTAINERS_PER_PROJECT: "1" };
    const container = (label: string, ipv6: string) => ({ label, hostname: "q-host.hosts.example", ipv6 });
    await expectJson(send(limits, "POST", "/containers/qcont", container("one", "2001:db8:9::31")), 200);
    const before = await stored();
    expect(
      await expectJson(send(limits, "POST", "/containers/qcont", container("two", "2001:db8:9::32")), 403),
    ).toEqual(quota("qcont", 1, "containers", "PROXY_MAX_CONTAINERS_PER_PROJECT"));
    expect(await stored()).toEqual(before);
    await expectJson(send(limits, "POST", "/containers/qcont", container("one", "2001:db8:9::33")), 200);
  });
});

describe("PROXY_MAX_DOMAINS_PER_PROJECT", () => {
  const limits = { PROXY_MAX_DOMAINS_PER_PROJECT: "3" };
  const refusal = (project: string) => quota(project, 3, "domains", "PROXY_MAX_DOMAINS_PER_PROJECT");

  /** The test's own project holding a. and b.<project>.example, and another holding m.<project>.example. */
  async function nearQuota(project: string) {
    for (const label of [project, `${project}other`]) await createProject(label);
    await expectJson(
      send(limits, "POST", `/backends/${project}`, {
        label: "web",
        domainForwardings: [{ domainName: `a.${project}.example` }, { domainName: `b.${project}.example` }],
      }),
      200,
    );
    await expectJson(send(limits, "POST", `/backends/${project}other`, { label: "web" }), 200);
    const moveIn = op("CREATE", `m.${project}.example`, `${project}other`);
    await expectJson(send(limits, "POST", "/domains/massupdate", { domainOperations: [moveIn] }), 200);
  }

  it("refuses a mass update past it as a whole, storing nothing", async () => {
    await nearQuota("qdoma");
    const before = await stored();
    const body = {
      domainOperations: [op("CREATE", "c.qdoma.example", "qdoma"), op("CREATE", "d.qdoma.example", "qdoma")],
    };
    expect(await expectJson(send(limits, "POST", "/domains/massupdate", body), 403)).toEqual(refusal("qdoma"));
    // Moving a domain in counts as adding one.
    const move = {
      domainOperations: [op("CREATE", "c.qdoma.example", "qdoma"), op("UPDATE", "m.qdoma.example", "qdoma")],
    };
    expect(await expectJson(send(limits, "POST", "/domains/massupdate", move), 403)).toEqual(refusal("qdoma"));
    expect(await stored()).toEqual(before);
  });

  it("refuses a backend update adding one past it, storing nothing", async () => {
    await nearQuota("qdomb");
    await expectJson(
      send(limits, "POST", "/domains/massupdate", { domainOperations: [op("CREATE", "c.qdomb.example", "qdomb")] }),
      200,
    );
    const before = await stored();
    const forwardings = ["a", "b", "c", "e"].map((name) => ({ domainName: `${name}.qdomb.example` }));
    expect(
      await expectJson(send(limits, "POST", "/backends/qdomb", { label: "web", domainForwardings: forwardings }), 403),
    ).toEqual(refusal("qdomb"));
    expect(await stored()).toEqual(before);
  });

  it("lets a request at the quota replace one domain by another", async () => {
    await nearQuota("qdomc");
    await expectJson(
      send(limits, "POST", "/domains/massupdate", { domainOperations: [op("CREATE", "c.qdomc.example", "qdomc")] }),
      200,
    );
    const body = {
      domainOperations: [op("DELETE", "c.qdomc.example", "qdomc"), op("CREATE", "f.qdomc.example", "qdomc")],
    };
    expect(await expectJson(send(limits, "POST", "/domains/massupdate", body), 200)).toEqual([]);
  });
});

describe("PROXY_MAX_PARAMS_BYTES_PER_PROJECT", () => {
  const limits = { PROXY_MAX_PARAMS_BYTES_PER_PROJECT: "50" };
  const refusal = quota("qpar", 50, "bytes of params", "PROXY_MAX_PARAMS_BYTES_PER_PROJECT");

  it("counts backend params and server params together, on every path that adds them", async () => {
    // 18 bytes of backend params and 24 of server params: 42 of 50; each write below adds 18 or 24 more.
    await expectJson(send(limits, "POST", "/backends/qpar", { label: "web", params: "timeout server 30s" }), 200);
    await expectJson(
      send(limits, "POST", "/backends/qpar", {
        label: "green",
        backendContainers: [{ containerId: containerIds.par1, params: "check inter 5s weight 10" }],
      }),
      200,
    );
    const before = await stored();
    expect(
      await expectJson(send(limits, "POST", "/backends/qpar", { label: "more", params: "balance roundrobin" }), 403),
    ).toEqual(refusal);
    expect(
      await expectJson(
        send(limits, "POST", "/backends/qpar", {
          label: "web",
          backendContainers: [{ containerId: containerIds.par2, params: "check inter 5s weight 20" }],
        }),
        403,
      ),
    ).toEqual(refusal);
    // The blue/green switch copies the target's server params.
    expect(await expectJson(send(limits, "PATCH", "/backends/qpar/web/setContainersOf/green"), 403)).toEqual(refusal);
    expect(await stored()).toEqual(before);
  });

  it("lets a write that does not add bytes pass past a lowered quota", async () => {
    // 18 bytes, stored under the quota of the other tests; then the quota drops below them.
    await expectJson(send(limits, "POST", "/backends/qparlow", { label: "web", params: "timeout server 30s" }), 200);
    const lowered = { PROXY_MAX_PARAMS_BYTES_PER_PROJECT: "10" };
    await expectJson(send(lowered, "POST", "/backends/qparlow", { label: "web", params: "timeout server 3s" }), 200);
    await expectJson(send(lowered, "POST", "/backends/qparlow", { label: "web", fullname: "Web" }), 200);
  });
});

describe("the installation's bounds", () => {
  it("refuse a backend, a link, a domain, a public CA domain and params past them, storing nothing", async () => {
    const limits = {
      PROXY_MAX_INSTALLATION_BACKENDS: String((await installationTotal("backends")) + 1),
      PROXY_MAX_INSTALLATION_SERVERS: String(await installationTotal("servers")),
      PROXY_MAX_INSTALLATION_DOMAINS: String((await installationTotal("domains")) + 1),
      PROXY_MAX_INSTALLATION_PUBLIC_CA_DOMAINS: String(await installationTotal("public_ca_domains")),
      PROXY_MAX_INSTALLATION_PARAMS_BYTES: String(await installationTotal("params_bytes")),
    };
    await expectJson(send(limits, "POST", "/backends/qinst", { label: "web" }), 200);
    const before = await stored();
    const n = (name: keyof typeof limits) => Number(limits[name]);
    expect(await expectJson(send(limits, "POST", "/backends/qinst", { label: "api" }), 403)).toEqual(
      bound(n("PROXY_MAX_INSTALLATION_BACKENDS"), "backends", "PROXY_MAX_INSTALLATION_BACKENDS"),
    );
    expect(
      await expectJson(
        send(limits, "POST", "/backends/qinst", {
          label: "web",
          backendContainers: [{ containerId: containerIds.inst }],
        }),
        403,
      ),
    ).toEqual(bound(n("PROXY_MAX_INSTALLATION_SERVERS"), "container links", "PROXY_MAX_INSTALLATION_SERVERS"));
    expect(
      await expectJson(
        send(limits, "POST", "/domains/massupdate", {
          domainOperations: [op("CREATE", "a.qinst.example", "qinst"), op("CREATE", "b.qinst.example", "qinst")],
        }),
        403,
      ),
    ).toEqual(bound(n("PROXY_MAX_INSTALLATION_DOMAINS"), "domains", "PROXY_MAX_INSTALLATION_DOMAINS"));
    expect(
      await expectJson(
        send(limits, "POST", "/domains/massupdate", {
          domainOperations: [op("CREATE", "s.qinst.example", "qinst", true)],
        }),
        403,
      ),
    ).toEqual(
      bound(
        n("PROXY_MAX_INSTALLATION_PUBLIC_CA_DOMAINS"),
        "domains with a public CA certificate",
        "PROXY_MAX_INSTALLATION_PUBLIC_CA_DOMAINS",
      ),
    );
    expect(
      await expectJson(send(limits, "POST", "/backends/qinst", { label: "web", params: "timeout server 30s" }), 403),
    ).toEqual(
      bound(n("PROXY_MAX_INSTALLATION_PARAMS_BYTES"), "bytes of params", "PROXY_MAX_INSTALLATION_PARAMS_BYTES"),
    );
    expect(await stored()).toEqual(before);
    // The one place left is taken by a plain domain.
    await expectJson(
      send(limits, "POST", "/domains/massupdate", { domainOperations: [op("CREATE", "a.qinst.example", "qinst")] }),
      200,
    );
  });
});

describe("concurrent writes for the last place", () => {
  it("let exactly one in", async () => {
    const limits = { PROXY_MAX_BACKENDS_PER_PROJECT: "1" };
    const answers = await Promise.all(
      ["one", "two", "three"].map((label) => send(limits, "POST", "/backends/qrace", { label })),
    );
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 403, 403]);
    const count = await env.DB.prepare(
      "select count(*) as n from backends where project_id = (select id from projects where label = 'qrace')",
    ).first("n");
    expect(count).toBe(1);
  });
});
