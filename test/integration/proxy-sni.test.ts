// Which certificate a real haproxy presents, by SNI, through the generated crt-list (issue 27, item 5): a wildcard
// certificate the administrator provided for one project is presented for that project's domain only; another
// project's name under the same wildcard, a name nobody holds and a client without SNI get the fallback certificate.
// And a version stored before the crt-list existed is restored as it was: haproxy loads certs/ again, no crt-list is
// left behind on the agent's disk, and the next generation brings the crt-list back.
import { existsSync, readFileSync } from "node:fs";
import { connect as tlsConnect } from "node:tls";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  api,
  executeSql,
  haproxyCheck,
  proxyVars,
  startAgent,
  until,
  viaHaproxy,
  type Agent,
} from "../support/proxy-haproxy-agent";
import { expectStatus } from "../support/expect-status";
import { freePort, tempDir } from "../support/processes.mjs";
import { requireBinary } from "../support/system-programs.mjs";
import { makeCa, makeLeaf } from "../support/test-certificates.mjs";
import { startWranglerDev, type DevServer } from "../support/wrangler-dev.mjs";

const WILDCARD = "*.sni.example";
const FALLBACK = "fallback.invalid";

let server: DevServer;
let master: Agent;
let httpPort: number;
let httpsPort: number;

/** The common name of the certificate haproxy presents for `servername` (none: the client sends no SNI). */
function presented(servername?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const options = { host: "127.0.0.1", port: httpsPort, rejectUnauthorized: false };
    const socket = tlsConnect(servername ? { ...options, servername } : options, () => {
      const name = String(socket.getPeerCertificate().subject.CN);
      socket.end();
      resolve(name);
    });
    socket.on("error", reject);
  });
}

/** Waits until haproxy presents `expected` for `servername`: a reload takes effect a moment after the agent answers. */
const presentedOnce = (servername: string, expected: string) =>
  until(`haproxy to present ${expected} for ${servername}`, async () =>
    (await presented(servername)) === expected ? true : undefined,
  );

async function call(pathName: string, method = "GET", body?: unknown) {
  const response = await api(server.url, pathName, method, body);
  expectStatus(response, 200, `${method} ${pathName}`);
  return response;
}

beforeAll(async () => {
  requireBinary("haproxy");
  httpPort = await freePort();
  httpsPort = await freePort();
  master = await startAgent({ runHaproxy: true });
  server = await startWranglerDev(proxyVars(master, { http: httpPort, https: httpsPort }));

  // Two projects side by side under the wildcard (siblings: neither name is under or above the other).
  for (const [project, domainName] of [
    ["snia", "x.sni.example"],
    ["snib", "y.sni.example"],
  ]) {
    await call("/admin/projects", "POST", { label: project });
    await call(`/backends/${project}`, "POST", { label: "nocontent", domainForwardings: [{ domainName }] });
  }
  const { dir, remove } = tempDir("sni-certificate-");
  makeCa(dir, "ca", "sni test CA");
  makeLeaf(dir, "wild", "ca", `subjectAltName=DNS:${WILDCARD}\nextendedKeyUsage=serverAuth\n`, WILDCARD);
  await call("/admin/certificates/sni-wild", "PUT", {
    certificatePem: readFileSync(path.join(dir, "wild.pem"), "utf8"),
    privateKeyPem: readFileSync(path.join(dir, "wild.key"), "utf8"),
    projects: ["snia"],
  });
  remove();
});

afterAll(async () => {
  await server?.stop();
  await master?.stop();
});

describe("the certificate haproxy presents by SNI", () => {
  it("is the one provided for a project for that project's domain only; other names get the fallback", async () => {
    await call("/admin/gensynchaprx");
    const active = (await api(server.url, "/admin/haproxy")).body;
    expect(active.files["crt-list.txt"]).toBe(
      "# certificate file, then the host names it is offered for (generated, DO NOT EDIT)\n" +
        "certs/sni-wild.pem x.sni.example\n",
    );
    expect(readFileSync(path.join(master.configDir, "crt-list.txt"), "utf8")).toBe(active.files["crt-list.txt"]);
    expect(active.files["haproxy.cfg"]).toContain(
      `    bind 127.0.0.1:${httpsPort} ssl crt fallback.pem crt-list crt-list.txt alpn h2,http/1.1\n`,
    );
    const check = haproxyCheck(path.join(master.configDir, "haproxy.cfg"));
    expect({ status: check.status, alerts: check.output.includes("[ALERT]") }).toEqual({ status: 0, alerts: false });

    await presentedOnce("x.sni.example", WILDCARD);
    // Another project's name the wildcard covers, a name nobody holds, no SNI at all: the fallback.
    expect(await presented("y.sni.example")).toBe(FALLBACK);
    expect(await presented("nobody.sni.example")).toBe(FALLBACK);
    expect(await presented()).toBe(FALLBACK);
    // The https redirect agrees: only the domain the certificate serves is sent to https.
    expect(await viaHaproxy(httpPort, "x.sni.example", "/a")).toMatchObject({
      status: 301,
      headers: { location: `https://x.sni.example:${httpsPort}/a` },
    });
    expect((await viaHaproxy(httpPort, "y.sni.example", "/a")).status).toBe(204);
  });

  it("restores a version stored before the crt-list as it was, leaving no crt-list behind", async () => {
    await call("/admin/gensynchaprx");
    const current = (await api(server.url, "/admin/haproxy")).body;
    // What a version generated before the crt-list holds: the bind loads the directory, and no crt-list file.
    await executeSql(
      server,
      `update haproxy_version_files set content = replace(content, 'crt-list crt-list.txt', 'crt certs/') ` +
        `where version_id = ${current.version} and name = 'haproxy.cfg'; ` +
        `delete from haproxy_version_files where version_id = ${current.version} and name = 'crt-list.txt'`,
    );
    const restored = await call(`/admin/haproxy/versions/${current.version}/activate`, "POST");
    expect(restored.body.warnings).toEqual([
      `INFO: version ${restored.body.payload.value} restores version ${current.version}`,
    ]);
    const config = readFileSync(path.join(master.configDir, "haproxy.cfg"), "utf8");
    expect(config).toContain(`    bind 127.0.0.1:${httpsPort} ssl crt fallback.pem crt certs/ alpn h2,http/1.1\n`);
    expect(existsSync(path.join(master.configDir, "crt-list.txt"))).toBe(false);
    // That version runs as it always did: haproxy picks among certs/ by the certificates' own names.
    await presentedOnce("y.sni.example", WILDCARD);
    expect(await presented("x.sni.example")).toBe(WILDCARD);
    const status = (await api(server.url, "/admin/haproxy/status")).body;
    expect(status).toMatchObject([{ role: "master", state: "in-sync", inSync: true }]);

    // The next generation brings the crt-list back.
    await call("/admin/gensynchaprx");
    expect(readFileSync(path.join(master.configDir, "crt-list.txt"), "utf8")).toBe(
      "# certificate file, then the host names it is offered for (generated, DO NOT EDIT)\n" +
        "certs/sni-wild.pem x.sni.example\n",
    );
    await presentedOnce("y.sni.example", FALLBACK);
    expect(await presented("x.sni.example")).toBe(WILDCARD);
  });
});
