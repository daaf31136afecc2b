// Certificate maintenance end to end against a local pebble ACME server: /maintenance/start obtains certificates over
// HTTP-01 (pebble connects to haproxy, which forwards the challenge path to the Worker), stores them, runs a
// gensynchaprx, and haproxy then serves them. A domain pebble cannot validate fails once and is not tried again the
// same day.
//
// Trust: pebble serves its ACME directory over HTTPS with a certificate from a CA made here; wrangler dev's outbound
// fetch trusts the PEM bundle in NODE_EXTRA_CA_CERTS (miniflare passes it to workerd), so the Worker talks to pebble
// over verified HTTPS exactly as it talks to Let's Encrypt in production.
import { TRUST_FILE } from "./proxy-pebble-trust";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { createSocket, type Socket } from "node:dgram";
import { copyFileSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { Agent as HttpsAgent, get as httpsGet, request as httpsRequest } from "node:https";
import path from "node:path";
import type { TLSSocket } from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ADMIN_PASSWORD,
  ADMIN_USER,
  AGENT_TOKEN,
  api,
  jobEnded,
  startAgent,
  startBackendServer,
  startRelay,
  tempDir,
  until,
  viaHaproxy,
  type Agent,
} from "./proxy-helpers";
import { freePort, requireBinary, startWranglerDev, type DevServer } from "../support/servers.mjs";

let work: string;
let pebble: ChildProcess;
let pebbleOutput = "";
let dns: Socket;
let server: DevServer;
let master: Agent;
let relay: Awaited<ReturnType<typeof startRelay>>;
let backend: Awaited<ReturnType<typeof startBackendServer>>;
let httpPort: number;
let httpsPort: number;
let managementPort: number;
const DOMAIN = "shop.pebble.test";
const BROKEN = "broken.pebble.test";

/** A DNS server for pebble's validation: A 127.0.0.1 for every name, NXDOMAIN for broken.*, no AAAA records. */
function startDns(port: number): Promise<Socket> {
  const socket = createSocket("udp4");
  socket.on("message", (query, remote) => {
    let offset = 12;
    const labels: string[] = [];
    while (query[offset] !== 0) {
      labels.push(query.subarray(offset + 1, offset + 1 + query[offset]).toString("ascii"));
      offset += query[offset] + 1;
    }
    const questionEnd = offset + 5;
    const type = query.readUInt16BE(offset + 1);
    const name = labels.join(".").toLowerCase();
    const missing = name.startsWith("broken.");
    const answers = !missing && type === 1 ? 1 : 0;
    const header = Buffer.alloc(12);
    query.copy(header, 0, 0, 2);
    header.writeUInt16BE(0x8580 | (missing ? 3 : 0), 2);
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(answers, 6);
    const answer = Buffer.from([0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 127, 0, 0, 1]);
    socket.send(
      Buffer.concat([header, query.subarray(12, questionEnd), answers ? answer : Buffer.alloc(0)]),
      remote.port,
      remote.address,
    );
  });
  return new Promise((resolve) => socket.bind(port, "127.0.0.1", () => resolve(socket)));
}

function openssl(args: string[]) {
  const result = spawnSync("openssl", args, { cwd: work, encoding: "utf8" });
  if (result.status !== 0) throw new Error(`openssl ${args.join(" ")} failed: ${result.stderr}`);
}

beforeAll(async () => {
  requireBinary("haproxy");
  requireBinary("pebble");
  requireBinary("openssl");
  work = tempDir("pebble");

  // The CA wrangler dev trusts, and pebble's listener certificate from it.
  openssl([
    "req",
    "-x509",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:P-256",
    "-nodes",
    "-keyout",
    "ca.key",
    "-out",
    "ca.pem",
    "-days",
    "2",
    "-subj",
    "/CN=integration test CA",
  ]);
  openssl([
    "req",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:P-256",
    "-nodes",
    "-keyout",
    "pebble.key",
    "-out",
    "pebble.csr",
    "-subj",
    "/CN=localhost",
  ]);
  writeFileSync(path.join(work, "san.ext"), "subjectAltName=DNS:localhost,IP:127.0.0.1\n");
  openssl([
    "x509",
    "-req",
    "-in",
    "pebble.csr",
    "-CA",
    "ca.pem",
    "-CAkey",
    "ca.key",
    "-CAcreateserial",
    "-out",
    "pebble.pem",
    "-days",
    "2",
    "-extfile",
    "san.ext",
  ]);

  httpPort = await freePort();
  httpsPort = await freePort();
  const dnsPort = await freePort();
  const pebblePort = await freePort();
  managementPort = await freePort();
  dns = await startDns(dnsPort);
  const config = {
    pebble: {
      listenAddress: `127.0.0.1:${pebblePort}`,
      managementListenAddress: `127.0.0.1:${managementPort}`,
      certificate: path.join(work, "pebble.pem"),
      privateKey: path.join(work, "pebble.key"),
      // HTTP-01 validation connects to <domain>:httpPort, which is haproxy's http frontend.
      httpPort,
      tlsPort: await freePort(),
      ocspResponderURL: "",
      externalAccountBindingRequired: false,
    },
  };
  writeFileSync(path.join(work, "pebble.json"), JSON.stringify(config));
  pebble = spawn("pebble", ["-config", path.join(work, "pebble.json"), "-dnsserver", `127.0.0.1:${dnsPort}`], {
    env: { ...process.env, PEBBLE_VA_NOSLEEP: "1" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  pebble.stdout!.on("data", (chunk) => (pebbleOutput += chunk));
  pebble.stderr!.on("data", (chunk) => (pebbleOutput += chunk));
  await until(
    `pebble to listen\n${pebbleOutput}`,
    async () => (pebbleOutput.includes("Listening on") ? true : undefined),
    20_000,
  );

  backend = await startBackendServer("shop", "127.0.0.1");
  relay = await startRelay();
  master = await startAgent({ runHaproxy: true });
  copyFileSync(path.join(work, "ca.pem"), TRUST_FILE);
  server = await startWranglerDev({
    PROXY_ADMIN_USERNAME: ADMIN_USER,
    PROXY_ADMIN_PASSWORD: ADMIN_PASSWORD,
    HAPROXY_AGENT_URL: master.url,
    HAPROXY_AGENT_TOKEN: AGENT_TOKEN,
    HAPROXY_HTTP_PORT: String(httpPort),
    HAPROXY_HTTPS_PORT: String(httpsPort),
    HAPROXY_BIND_ADDRESS: "127.0.0.1",
    HAPROXY_ACME_BACKEND_URL: `http://127.0.0.1:${relay.port}`,
    ACME_DIRECTORY_URL: `https://127.0.0.1:${pebblePort}/dir`,
    ACME_EMAIL: "hostmaster@pebble.test",
    // The container listens on this machine's loopback, which a real installation refuses.
    PROXY_ADDRESS_EXCEPTIONS: "::ffff:127.0.0.0/104",
  });
  relay.setTarget(server.port);

  const call = async (pathName: string, method: string, body: unknown) => {
    const response = await api(server.url, pathName, method, body);
    expect({ pathName, status: response.status, body: response.body }).toMatchObject({ status: 200 });
    return response.body;
  };
  await call("/admin/projects", "POST", { label: "acme" });
  await call("/admin/hosts", "POST", { hostname: "node1.example.net", ipv6: "2001:db8::1" });
  const container = (
    await call("/containers/acme", "POST", { label: "web", hostname: "node1.example.net", ipv6: "::ffff:127.0.0.1" })
  ).payload.value;
  await call("/backends/acme", "POST", {
    label: "shop",
    port: backend.port,
    backendContainers: [{ containerId: container }],
  });
  await call("/domains/massupdate", "POST", {
    domainOperations: [DOMAIN, BROKEN].map((domainName) => ({
      operation: "CREATE",
      domainName,
      projectLabel: "acme",
      backendLabel: "shop",
      enableSSL: true,
    })),
  });
  // haproxy must run (and forward the challenge path) before the CA validates.
  // (status and body together, so that a failure shows the cause the administrator is told)
  const generated = await api(server.url, "/admin/gensynchaprx");
  expect({ status: generated.status, body: generated.body }).toMatchObject({ status: 200 });
}, 180_000);

afterAll(async () => {
  await server?.stop();
  await master?.stop();
  pebble?.kill("SIGTERM");
  dns?.close();
  relay?.server.close();
  backend?.server.close();
  rmSync(TRUST_FILE, { force: true });
  delete process.env.NODE_EXTRA_CA_CERTS;
});

/** pebble's root certificate (it makes a new one at every start). */
function pebbleRoot(): Promise<string> {
  return new Promise((resolve, reject) => {
    const ca = readFileSync(path.join(work, "ca.pem"));
    httpsGet(
      {
        host: "127.0.0.1",
        port: managementPort,
        path: "/roots/0",
        ca,
        servername: "localhost",
        agent: new HttpsAgent({ ca }),
      },
      (response) => {
        let body = "";
        response.on("data", (chunk) => (body += chunk));
        response.on("end", () => resolve(body));
      },
    ).on("error", reject);
  });
}

describe("certificates from a local ACME server", () => {
  let runId: number;

  it("obtains a certificate over HTTP-01, stores it and runs a gensynchaprx", async () => {
    const started = await api(server.url, "/maintenance/start");
    expect(started.status).toBe(200);
    expect(started.body).toBe("");
    runId = Number(started.headers.get("X-Job-Id"));
    const run = await jobEnded(server.url, runId, 120_000);
    expect(run).toMatchObject({ kind: "certificates", state: "succeeded", trigger: `api (${ADMIN_USER})` });
    const obtained = run.warnings.find((w: string) => w.startsWith(`INFO: Certificate acme_${DOMAIN} obtained from `));
    expect(obtained).toMatch(
      new RegExp(
        `^INFO: Certificate acme_${DOMAIN} obtained from CN=Pebble Intermediate CA [0-9a-f]+, valid until \\d{4}-`,
      ),
    );
    expect(run.warnings.find((w: string) => w.includes(BROKEN))).toMatch(
      new RegExp(`^WARN: no certificate for ${BROKEN}: .+; next attempt on \\d{4}-\\d\\d-\\d\\dT00:00:00\\.000Z$`),
    );
    const queued = /^INFO: certificates changed: HAProxy configuration job (\d+) queued$/.exec(run.warnings.at(-1));
    expect(queued).not.toBeNull();
    expect(await jobEnded(server.url, Number(queued![1]))).toMatchObject({
      kind: "gensynchaprx",
      state: "succeeded",
      trigger: `certificates run ${runId}`,
    });

    const listed = (await api(server.url, "/admin/certificates")).body;
    expect(listed.find((c: { name: string }) => c.name === `acme_${DOMAIN}`)).toMatchObject({
      source: "acme",
      domainNames: [DOMAIN],
      file: `certs/acme_${DOMAIN}.pem`,
    });
    const active = (await api(server.url, "/admin/haproxy")).body;
    expect(active.files["domain2cert.map"]).toContain(`${DOMAIN} certs/acme_${DOMAIN}.pem\n`);
    expect(active.files["domain2cert.map"]).not.toContain(BROKEN);
  });

  it("haproxy serves the issued certificate, which chains to pebble's root", async () => {
    // haproxy reloads in the background after the agent's answer: wait for the new workers.
    const redirect = await until("haproxy to load the certificate", async () => {
      const answer = await viaHaproxy(httpPort, DOMAIN, "/basket");
      return answer.status === 301 ? answer : undefined;
    });
    expect(redirect.headers.location).toBe(`https://${DOMAIN}:${httpsPort}/basket`);
    const root = await pebbleRoot();
    const answer = await until(
      "haproxy to serve the certificate",
      () =>
        new Promise<{ status: number; body: string; authorized: boolean; names: string } | undefined>((resolve) => {
          const request = httpsRequest(
            {
              host: "127.0.0.1",
              port: httpsPort,
              path: "/basket",
              servername: DOMAIN,
              headers: { Host: DOMAIN },
              ca: root,
              agent: false,
            },
            (response) => {
              let body = "";
              response.on("data", (chunk) => (body += chunk));
              response.on("end", () => {
                const socket = response.socket as TLSSocket;
                resolve({
                  status: response.statusCode!,
                  body,
                  authorized: socket.authorized,
                  names: socket.getPeerCertificate().subjectaltname ?? "",
                });
              });
            },
          );
          request.on("error", () => resolve(undefined));
          request.end();
        }),
    );
    expect(answer).toEqual({ status: 200, body: "shop /basket", authorized: true, names: `DNS:${DOMAIN}` });
  });

  it("does not try a failed domain again the same day, nor renew a fresh certificate", async () => {
    const started = await api(server.url, "/maintenance/start");
    const run = await jobEnded(server.url, Number(started.headers.get("X-Job-Id")), 60_000);
    expect(run.state).toBe("succeeded");
    expect(run.warnings).toEqual([
      expect.stringMatching(
        new RegExp(
          `^WARN: no new attempt for ${BROKEN} before \\d{4}-\\d\\d-\\d\\dT00:00:00\\.000Z: the last one failed \\(`,
        ),
      ),
    ]);
  });
});
