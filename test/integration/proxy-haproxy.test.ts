// gensynchaprx end to end: a real wrangler dev, the HAProxy agent driving a real haproxy on loopback high ports,
// local HTTP servers as the containers, a second agent as a slave synced from the queue. The generated configuration
// passes `haproxy -c`, requests are routed by Host, redirects answer with the right Location, https works with a
// provided certificate, and a configuration haproxy refuses leaves the old one serving while the API answers 500.
// The operations against the real agents: the preview checked by the master's haproxy, a rollback that puts an older
// haproxy.cfg back byte for byte, the status that flags a file edited by hand on an agent's disk, and the metrics page
// as promtool reads it. (The params allow-list against a real haproxy is in haproxy-params.test.ts.)
import { spawnSync } from "node:child_process";
import { appendFileSync, readFileSync } from "node:fs";
import { request as httpsRequest } from "node:https";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  adminCall,
  api,
  haproxyCheck,
  ipv6LoopbackWorks,
  jobEnded,
  proxyVars,
  root,
  startAgent,
  startBackendServer,
  startRelay,
  until,
  viaHaproxy,
  type Agent,
  executeSql,
} from "../support/proxy-haproxy-agent";
import { freePort } from "../support/processes.mjs";
import { requireBinary } from "../support/system-programs.mjs";
import { getWithRetry, startWranglerDev, type DevServer } from "../support/wrangler-dev.mjs";

const METRICS_TOKEN = "integration-metrics-token";
const fixture = (name: string) => readFileSync(path.join(root, "test", "proxy", "fixtures", name), "utf8");

let server: DevServer;
let master: Agent;
let slave: Agent;
let relay: Awaited<ReturnType<typeof startRelay>>;
let httpPort: number;
let httpsPort: number;
const closers: (() => unknown)[] = [];
const ports = { www: 0, api: 0 };
let apiAddress = "::1";

beforeAll(async () => {
  requireBinary("haproxy");
  // Containers have IPv6 addresses: two on IPv4-mapped loopback addresses (::ffff:127.0.0.x works even where IPv6
  // loopback is off), one on ::1 when this machine has IPv6 loopback.
  if (!(await ipv6LoopbackWorks())) apiAddress = "::ffff:127.0.0.4";
  const web1 = await startBackendServer("web1", "127.0.0.2");
  ports.www = web1.port;
  const web2 = await startBackendServer("web2", "127.0.0.3", ports.www);
  const apiServer = await startBackendServer(
    "api1",
    apiAddress.startsWith("::ffff:") ? apiAddress.slice(7) : apiAddress,
  );
  ports.api = apiServer.port;
  closers.push(
    () => web1.server.close(),
    () => web2.server.close(),
    () => apiServer.server.close(),
  );

  httpPort = await freePort();
  httpsPort = await freePort();
  relay = await startRelay();
  closers.push(() => relay.server.close());
  master = await startAgent({ runHaproxy: true });
  slave = await startAgent({ runHaproxy: false });
  server = await startWranglerDev(
    proxyVars(
      master,
      { http: httpPort, https: httpsPort },
      {
        SLAVE_AGENT_URLS: slave.url,
        HAPROXY_ACME_BACKEND_URL: `http://127.0.0.1:${relay.port}`,
        // An installation's own directive, outside the allow-list: the way a configuration haproxy refuses gets stored.
        HAPROXY_PARAMS_EXTRA_DIRECTIVES: "bogus-directive",
        // The containers listen on this machine's loopback, which a real installation refuses.
        PROXY_ADDRESS_EXCEPTIONS: "::ffff:127.0.0.0/104, ::1/128",
        PROXY_METRICS_TOKEN: METRICS_TOKEN,
      },
    ),
  );
  relay.setTarget(server.port);

  const call = adminCall(server.url);
  await call("/admin/projects", "POST", { label: "e2e" });
  await call("/admin/hosts", "POST", { hostname: "node1.example.net", ipv6: "2001:db8::1" });
  const container = async (label: string, ipv6: string) =>
    (await call("/containers/e2e", "POST", { label, hostname: "node1.example.net", ipv6 })).payload.value as number;
  const web1Id = await container("web1", "::ffff:127.0.0.2");
  const web2Id = await container("web2", "::ffff:127.0.0.3");
  const apiId = await container("api1", apiAddress);
  await call("/backends/e2e", "POST", {
    label: "www",
    port: ports.www,
    params: "balance roundrobin",
    backendContainers: [{ containerId: web1Id }, { containerId: web2Id }],
    domainForwardings: [{ domainName: "www.e2e.example" }, { domainName: "www.example.org" }],
  });
  await call("/backends/e2e", "POST", {
    label: "api",
    port: ports.api,
    backendContainers: [{ containerId: apiId, params: "check inter 2s" }],
    domainForwardings: [{ domainName: "api.e2e.example" }, { domainName: "a.shop.example.org" }],
  });
  await call("/backends/e2e", "POST", {
    label: "maint",
    port: ports.www,
    params: "_maintenance",
    backendContainers: [{ containerId: web1Id }],
    domainForwardings: [{ domainName: "maint.e2e.example" }],
  });
  await call("/backends/e2e", "POST", { label: "nocontent", domainForwardings: [{ domainName: "empty.e2e.example" }] });
  await call("/backends/e2e", "POST", {
    label: "permredirect",
    domainForwardings: [
      { domainName: "old.e2e.example", redirectToUrl: "https://www.e2e.example/landing" },
      { domainName: "moved.e2e.example", redirectToUrl: "https://www.e2e.example/new/*" },
    ],
  });
  await call("/backends/e2e", "POST", {
    label: "tempredirect",
    domainForwardings: [{ domainName: "temp.e2e.example", redirectToUrl: "http://temp.example.net*" }],
  });
  await call("/admin/certificates/example-org", "PUT", {
    certificatePem: fixture("provided-rsa.cert.pem"),
    privateKeyPem: fixture("provided-rsa.key.pem"),
  });
});

afterAll(async () => {
  await server?.stop();
  await master?.stop();
  await slave?.stop();
  for (const close of closers) close();
});

let firstVersion: number;

describe("gensynchaprx with a real haproxy", () => {
  it("generates, validates, applies and reloads; the files pass haproxy -c", async () => {
    const response = await api(server.url, "/admin/gensynchaprx");
    expect(response.status).toBe(200);
    const active = (await api(server.url, "/admin/haproxy")).body;
    firstVersion = active.version;
    expect(response.body).toEqual([
      `INFO: sync of version ${firstVersion} to slave ${slave.url} queued as job ${Number(response.headers.get("X-Job-Id")) + 1}`,
    ]);
    expect(active).toMatchObject({ status: "active", jobId: Number(response.headers.get("X-Job-Id")) });
    expect(readFileSync(path.join(master.configDir, "haproxy.cfg"), "utf8")).toBe(active.files["haproxy.cfg"]);
    expect(readFileSync(path.join(master.configDir, "certs", "example-org.pem"), "utf8")).toContain(
      "-----BEGIN PRIVATE KEY-----",
    );

    const check = haproxyCheck(path.join(master.configDir, "haproxy.cfg"));
    expect(check.output).toContain("Configuration file is valid");
    expect(check.output).not.toContain("[ALERT]");
    expect(check.output).not.toContain("[WARNING]");
    expect(check.status).toBe(0);
  });

  it("routes by the Host header (port stripped, lower-cased) to the right local servers", async () => {
    const seen = new Set<string>();
    for (let i = 0; i < 4; i++) {
      const answer = await until("haproxy to route www", async () => {
        const result = await viaHaproxy(httpPort, "www.e2e.example", "/hello");
        return result.status === 200 ? result : undefined;
      });
      seen.add(answer.body);
    }
    expect(seen).toEqual(new Set(["web1 /hello", "web2 /hello"]));
    expect(await viaHaproxy(httpPort, "API.E2E.example:8080", "/v1")).toMatchObject({ status: 200, body: "api1 /v1" });
    expect(await viaHaproxy(httpPort, "empty.e2e.example")).toMatchObject({ status: 204, body: "" });
    expect(await viaHaproxy(httpPort, "unknown.example")).toMatchObject({
      status: 404,
      body: "No site is configured for this host name",
    });
    const maintenance = await viaHaproxy(httpPort, "maint.e2e.example");
    expect(maintenance.status).toBe(503);
    expect(maintenance.body).toContain("<h1>Down for maintenance</h1>");
  });

  it("answers redirects with the right Location, keeping the path for prefix redirects", async () => {
    expect(await viaHaproxy(httpPort, "old.e2e.example", "/anything?x=1")).toMatchObject({
      status: 301,
      headers: { location: "https://www.e2e.example/landing" },
    });
    expect(await viaHaproxy(httpPort, "moved.e2e.example", "/abc/def?x=1")).toMatchObject({
      status: 301,
      headers: { location: "https://www.e2e.example/new/abc/def?x=1" },
    });
    expect(await viaHaproxy(httpPort, "temp.e2e.example", "/abc")).toMatchObject({
      status: 302,
      headers: { location: "http://temp.example.net/abc" },
    });
  });

  it("redirects domains with a certificate to https and serves them with it", async () => {
    expect(await viaHaproxy(httpPort, "www.example.org", "/shop?id=7")).toMatchObject({
      status: 301,
      headers: { location: `https://www.example.org:${httpsPort}/shop?id=7` },
    });
    expect(await viaHaproxy(httpPort, "a.shop.example.org", "/x")).toMatchObject({
      status: 301,
      headers: { location: `https://a.shop.example.org:${httpsPort}/x` },
    });
    // Domains without a certificate stay on http.
    expect((await viaHaproxy(httpPort, "www.e2e.example", "/")).status).toBe(200);

    const ca = fixture("provided-rsa.cert.pem");
    const overTls = (host: string, pathName: string) =>
      new Promise<{ status: number; body: string; subject: string }>((resolve, reject) => {
        const request = httpsRequest(
          {
            host: "127.0.0.1",
            port: httpsPort,
            path: pathName,
            servername: host,
            headers: { Host: host },
            ca,
            agent: false,
          },
          (response) => {
            let body = "";
            response.on("data", (chunk) => (body += chunk));
            response.on("end", () => {
              const subject = String((response.socket as import("node:tls").TLSSocket).getPeerCertificate().subject.CN);
              resolve({ status: response.statusCode!, body, subject });
            });
          },
        );
        request.on("error", reject);
        request.end();
      });
    const secure = await overTls("www.example.org", "/checkout");
    expect(secure.subject).toBe("www.example.org");
    expect(secure.status).toBe(200);
    expect(secure.body).toMatch(/^web[12] \/checkout$/);
    expect(await overTls("a.shop.example.org", "/cart")).toMatchObject({
      status: 200,
      body: "api1 /cart",
      subject: "www.example.org",
    });
  });

  it("sends /.well-known/acme-challenge/ to the control plane", async () => {
    const answer = await viaHaproxy(httpPort, "www.e2e.example", "/.well-known/acme-challenge/unknown-token");
    expect(answer.status).toBe(404);
    expect(JSON.parse(answer.body)).toEqual({ success: false, payload: "Unknown ACME challenge token", warnings: [] });
  });

  it("syncs the slave from the queue and records the outcome on the gensynchaprx run", async () => {
    const active = (await api(server.url, "/admin/haproxy")).body;
    const sync = await jobEnded(server.url, active.jobId + 1);
    expect(sync).toMatchObject({
      kind: "haproxy-slave-sync",
      state: "succeeded",
      warnings: [`INFO: slave ${slave.url} synced to version ${firstVersion}`],
    });
    const parent = (await api(server.url, `/admin/jobs/${active.jobId}`)).body;
    expect(parent.warnings).toContain(`INFO: slave ${slave.url} synced to version ${firstVersion}`);
    expect(readFileSync(path.join(slave.configDir, "haproxy.cfg"), "utf8")).toBe(active.files["haproxy.cfg"]);
    expect(JSON.parse(readFileSync(path.join(slave.configDir, ".agent-state.json"), "utf8"))).toMatchObject({
      version: firstVersion,
      digest: active.digest,
    });
  });

  it("refuses at write time params the master's haproxy -c refuses, with HAProxy's reason; nothing is stored", async () => {
    const before = (await api(server.url, "/projects/e2e")).body;
    const response = await api(server.url, "/backends/e2e", "POST", { label: "api", params: "bogus-directive on" });
    expect(response).toMatchObject({
      status: 400,
      body: {
        success: false,
        payload: "params: HAProxy refused it: unknown keyword 'bogus-directive' in 'backend' section",
      },
    });
    expect((await api(server.url, "/projects/e2e")).body).toEqual(before);
    expect(await viaHaproxy(httpPort, "api.e2e.example", "/still")).toMatchObject({ status: 200, body: "api1 /still" });
  });
});

describe("operations against the real agents", () => {
  type Status = { role: string; agentUrl: string; state: string; inSync: boolean; version: number; digest: string };
  const statuses = async () => (await api(server.url, "/admin/haproxy/status")).body as Status[];
  /** Waits until every load balancer runs the version in force (the slave follows through the queue). */
  const allInSync = () =>
    until("every load balancer to run the version in force", async () => {
      const all = await statuses();
      return all.every((status) => status.inSync) ? all : undefined;
    });

  it("previews with the master's haproxy -c, applying nothing", async () => {
    const before = (await api(server.url, "/admin/haproxy")).body;
    const preview = await api(server.url, "/admin/haproxy/preview");
    expect(preview.status).toBe(200);
    expect(preview.body).toMatchObject({ version: before.version, valid: true, validation: null, diff: "" });

    // Stored past the API (whose agent check refuses it): the preview shows the backend left out, as gensynchaprx
    // would ship it, with haproxy's reason.
    await executeSql(server, "update backends set params = 'bogus-directive on' where label = 'api'");
    try {
      const refused = (await api(server.url, "/admin/haproxy/preview")).body;
      expect(refused).toMatchObject({ valid: true, validation: null });
      expect(refused.problems).toEqual([
        {
          project: "e2e",
          backend: "api",
          kind: "excluded",
          message: expect.stringMatching(
            /^backend e2e_\d+_api is left out: the load balancer refused it \(unknown keyword 'bogus-directive' in 'backend' section\); its domains answer 503$/,
          ),
        },
      ]);
      expect(refused.diff).toContain("\n+backend bk_unavailable\n");
      expect(refused.diff).not.toContain("bogus-directive");
    } finally {
      expect((await api(server.url, "/backends/e2e", "POST", { label: "api", params: "" })).status).toBe(200);
    }
    expect((await api(server.url, "/admin/haproxy")).body).toEqual(before);
    expect(readFileSync(path.join(master.configDir, "haproxy.cfg"), "utf8")).toBe(before.files["haproxy.cfg"]);
  });

  it("activate puts an older haproxy.cfg back byte for byte, as a new version the slave takes too", async () => {
    const old = (await api(server.url, "/admin/haproxy")).body;
    expect((await api(server.url, "/backends/e2e", "POST", { label: "www", params: "balance first" })).status).toBe(
      200,
    );
    expect((await api(server.url, "/admin/gensynchaprx")).status).toBe(200);
    const changed = (await api(server.url, "/admin/haproxy")).body;
    expect(changed.files["haproxy.cfg"]).not.toBe(old.files["haproxy.cfg"]);
    expect(readFileSync(path.join(master.configDir, "haproxy.cfg"), "utf8")).toBe(changed.files["haproxy.cfg"]);

    const response = await api(server.url, `/admin/haproxy/versions/${old.version}/activate`, "POST");
    expect(response.status).toBe(200);
    const restored = response.body.payload.value;
    expect(restored).toBe(changed.version + 1);
    expect(response.body.warnings[0]).toBe(`INFO: version ${restored} restores version ${old.version}`);
    expect(readFileSync(path.join(master.configDir, "haproxy.cfg"), "utf8")).toBe(old.files["haproxy.cfg"]);
    const active = (await api(server.url, "/admin/haproxy")).body;
    expect(active).toMatchObject({ version: restored, restoredFrom: old.version, digest: old.digest });
    expect(active.files).toEqual(old.files);
    // haproxy reloaded with it and still routes.
    expect(await viaHaproxy(httpPort, "api.e2e.example", "/back")).toMatchObject({ status: 200, body: "api1 /back" });

    // The slave's sync, queued by the activation's run.
    expect(await jobEnded(server.url, Number(response.headers.get("X-Job-Id")) + 1)).toMatchObject({
      kind: "haproxy-slave-sync",
      state: "succeeded",
      warnings: [`INFO: slave ${slave.url} synced to version ${restored}`],
    });
    const synced = await allInSync();
    expect(synced.map((status) => [status.role, status.version, status.digest])).toEqual([
      ["master", restored, old.digest],
      ["slave", restored, old.digest],
    ]);
    expect(readFileSync(path.join(slave.configDir, "haproxy.cfg"), "utf8")).toBe(old.files["haproxy.cfg"]);

    expect((await api(server.url, `/admin/haproxy/versions/${restored + 1}/activate`, "POST")).status).toBe(404);
    expect(
      (await api(server.url, "/backends/e2e", "POST", { label: "www", params: "balance roundrobin" })).status,
    ).toBe(200);
  });

  it("status flags a file edited by hand on an agent's disk; metrics show it and pass promtool", async () => {
    const generated = await api(server.url, "/admin/gensynchaprx");
    expect(generated.status).toBe(200);
    const inForce = (await api(server.url, "/admin/haproxy")).body;
    // Its slave sync has run: nothing else writes the slave's files while the test edits them.
    await jobEnded(server.url, Number(generated.headers.get("X-Job-Id")) + 1);
    await allInSync();

    appendFileSync(path.join(slave.configDir, "domain2backend.map"), "edited.example bk_default\n");
    const [masterStatus, slaveStatus] = await statuses();
    expect(masterStatus).toMatchObject({ role: "master", state: "in-sync", inSync: true, digest: inForce.digest });
    expect(slaveStatus).toMatchObject({
      role: "slave",
      agentUrl: slave.url,
      state: "modified",
      inSync: false,
      version: inForce.version,
      expectedVersion: inForce.version,
      expectedDigest: inForce.digest,
      lastError: null,
    });
    expect(slaveStatus.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(slaveStatus.digest).not.toBe(inForce.digest);

    const metrics = await getWithRetry(`${server.url}/admin/metrics`, {
      headers: { Authorization: `Bearer ${METRICS_TOKEN}` },
    });
    expect(metrics.status).toBe(200);
    const text = await metrics.text();
    expect(text).toContain(`proxy_haproxy_load_balancer_in_sync{agent="${master.url}",role="master"} 1\n`);
    expect(text).toContain(`proxy_haproxy_load_balancer_in_sync{agent="${slave.url}",role="slave"} 0\n`);
    expect(text).toContain(`proxy_haproxy_version_in_force ${inForce.version}\n`);
    expect(text).toMatch(
      /^proxy_certificate_not_after_timestamp_seconds\{name="example-org",source="provided"\} \d+$/m,
    );
    const checked = spawnSync("promtool", ["check", "metrics"], { input: text, encoding: "utf8" });
    expect({ status: checked.status, output: checked.stdout + checked.stderr }).toEqual({ status: 0, output: "" });
    expect((await getWithRetry(`${server.url}/admin/metrics`)).status).toBe(401);

    // The next generation repairs the slave: the same bundle is applied again over the edited file.
    expect((await api(server.url, "/admin/gensynchaprx")).status).toBe(200);
    await allInSync();
    expect(readFileSync(path.join(slave.configDir, "domain2backend.map"), "utf8")).not.toContain("edited.example");
  });
});
