// One tenant's backend the real haproxy refuses, stored past the API as rows from before vetting are: another
// tenant's gensynchaprx still succeeds, the refused backend is left out (its domains answer 503 through the real
// haproxy) and every other project is deployed and served; the owning project reads why. Also what a client's own
// X-Forwarded-Proto becomes on plain http.
import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  adminCall,
  api,
  basicAuth,
  haproxyCheck,
  proxyVars,
  startAgent,
  startBackendServer,
  until,
  viaHaproxy,
  type Agent,
  executeSql,
} from "../support/proxy-haproxy-agent";
import { freePort } from "../support/processes.mjs";
import { requireBinary } from "../support/system-programs.mjs";
import { startWranglerDev, type DevServer } from "../support/wrangler-dev.mjs";

let server: DevServer;
let agent: Agent;
let httpPort: number;
const closers: (() => unknown)[] = [];
const backendIds: Record<string, number> = {};
const tenants = { alpha: basicAuth("alphauser", "alpha-password"), beta: basicAuth("betauser", "beta-password") };

/** What haproxy answers for a host once its reload (asynchronous) took the expected configuration. */
const served = (host: string, pathName: string, status: number) =>
  until(`haproxy to answer ${status} for ${host}`, async () => {
    const answer = await viaHaproxy(httpPort, host, pathName);
    return answer.status === status ? answer : undefined;
  });

beforeAll(async () => {
  requireBinary("haproxy");
  const alphaWeb = await startBackendServer("alpha", "127.0.0.5");
  const betaWeb = await startBackendServer("beta", "127.0.0.6");
  closers.push(
    () => alphaWeb.server.close(),
    () => betaWeb.server.close(),
  );
  httpPort = await freePort();
  agent = await startAgent({ runHaproxy: true });
  server = await startWranglerDev(
    proxyVars(
      agent,
      { http: httpPort, https: await freePort() },
      {
        PROXY_ADDRESS_EXCEPTIONS: "::ffff:127.0.0.0/104",
        PROXY_GENERATION_DEBOUNCE: "0",
        // An installation's own directive, outside the allow-list: vetting lets it through, haproxy refuses it.
        HAPROXY_PARAMS_EXTRA_DIRECTIVES: "bogus-directive",
      },
    ),
  );
  const call = adminCall(server.url);
  await call("/admin/hosts", "POST", { hostname: "node1.blast.example", ipv6: "2001:db8:b::1" });
  for (const [project, web] of [
    ["alpha", alphaWeb],
    ["beta", betaWeb],
  ] as const) {
    await call("/admin/projects", "POST", { label: project });
    await call("/admin/apiusers", "POST", {
      username: `${project}user`,
      password: `${project}-password`,
      projectPatterns: [project],
    });
    const address = project === "alpha" ? "::ffff:127.0.0.5" : "::ffff:127.0.0.6";
    const container = await call(`/containers/${project}`, "POST", {
      label: "web",
      hostname: "node1.blast.example",
      ipv6: address,
    });
    const backend = await call(`/backends/${project}`, "POST", {
      label: "site",
      port: web.port,
      params: "balance roundrobin",
      backendContainers: [{ containerId: container.payload.value }],
      domainForwardings: [{ domainName: `www.${project}.example` }],
    });
    backendIds[project] = backend.payload.value;
  }
  expect((await api(server.url, "/admin/gensynchaprx")).status).toBe(200);
});

afterAll(async () => {
  await server?.stop();
  await agent?.stop();
  for (const close of closers) close();
});

describe("a tenant backend the real haproxy refuses", () => {
  it("is left out while another tenant's gensynchaprx deploys everything else, which passes haproxy -c", async () => {
    // Through the API, the agent's check would refuse it at once; stored past it, only the generation meets it.
    await executeSql(server, `update backends set params = 'bogus-directive on' where id = ${backendIds.alpha}`);
    await api(server.url, "/backends/beta", "POST", { label: "site", params: "balance leastconn" }, tenants.beta);

    const response = await api(server.url, "/admin/gensynchaprx", "GET", undefined, tenants.beta);
    expect(response).toMatchObject({ status: 200, body: [] });
    const live = readFileSync(path.join(agent.configDir, "haproxy.cfg"), "utf8");
    expect(haproxyCheck(path.join(agent.configDir, "haproxy.cfg"))).toMatchObject({ status: 0 });
    expect(live).not.toContain(`backend alpha_${backendIds.alpha}_site`);
    expect(live).toContain(`backend beta_${backendIds.beta}_site\n    balance leastconn\n`);

    expect(await served("www.alpha.example", "/up", 503)).toMatchObject({
      body: "This site is not available: its configuration was refused",
    });
    expect(await viaHaproxy(httpPort, "www.beta.example", "/up")).toMatchObject({ status: 200, body: "beta /up" });

    const message =
      `backend alpha_${backendIds.alpha}_site is left out: the load balancer refused it ` +
      "(unknown keyword 'bogus-directive' in 'backend' section); its domains answer 503";
    const deployment = await api(server.url, "/projects/alpha/deployment", "GET", undefined, tenants.alpha);
    expect(deployment.body).toEqual({
      version: (await api(server.url, "/admin/haproxy")).body.version,
      problems: [{ project: "alpha", backend: "site", kind: "excluded", message }],
    });
    // The administrator's run names it; alpha's tenant reads it too, beta's never does.
    expect((await api(server.url, "/admin/gensynchaprx")).body).toEqual([`WARN: ${message}`]);
    expect((await api(server.url, "/admin/gensynchaprx", "GET", undefined, tenants.alpha)).body).toEqual([
      `WARN: ${message}`,
    ]);

    // Fixed through the API, the backend is deployed again.
    const fixed = await api(
      server.url,
      "/backends/alpha",
      "POST",
      { label: "site", params: "balance first" },
      tenants.alpha,
    );
    expect(fixed.status).toBe(200);
    expect((await api(server.url, "/admin/gensynchaprx", "GET", undefined, tenants.alpha)).body).toEqual([]);
    expect(await served("www.alpha.example", "/again", 200)).toMatchObject({ body: "alpha /again" });
  });
});

describe("X-Forwarded-Proto", () => {
  it("is set by haproxy on plain http: a client's own value never reaches the server", async () => {
    const echoed = await viaHaproxy(httpPort, "www.beta.example", "/echo-headers", { "X-Forwarded-Proto": "https" });
    expect(echoed.status).toBe(200);
    expect(JSON.parse(echoed.body)["x-forwarded-proto"]).toBe("http");
  });
});
