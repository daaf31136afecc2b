// Certificate maintenance end to end against a local pebble ACME server issuing short-lived (6-day) certificates:
// /maintenance/start obtains certificates over HTTP-01 (pebble connects to haproxy, which forwards the challenge path
// to the Worker), stores them, runs a gensynchaprx, and haproxy then serves them. A domain pebble cannot validate
// fails once and is not tried again the same day. Renewal follows pebble's ACME Renewal Information (RFC 9773): a
// certificate whose window has begun is renewed, naming the old one in `replaces`, one whose window has not is not,
// and the CA is not asked again before its Retry-After.
//
// pebble is Debian trixie's 2.6.0 (../support/pebble.mjs), which serves `renewalInfo` and checks `replaces`. Its window
// for a certificate is fixed by the certificate (a third of the lifetime before its end, give or take a day: the
// second half of a 6-day certificate, less the last day), except for a revoked certificate, whose window began an
// hour ago: so the test revokes a certificate (signed with its own key, as its holder may) to open its window, as a CA
// does when it asks for early renewal. The CA's side is read from pebble's log: the renewalInfo requests, and which
// order replaces which (naming orders, whose issued serials it logs too).
//
// Trust: pebble serves its ACME directory over HTTPS with a certificate from a CA made here; wrangler dev's outbound
// fetch trusts the PEM bundle in NODE_EXTRA_CA_CERTS (miniflare passes it to workerd), so the Worker talks to pebble
// over verified HTTPS exactly as it talks to Let's Encrypt in production.
import { TRUST_FILE } from "../support/pebble-trust";
import { copyFileSync, readFileSync, rmSync } from "node:fs";
import { request as httpsRequest } from "node:https";
import path from "node:path";
import { connect as tlsConnect, type TLSSocket } from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ADMIN_USER,
  adminCall,
  api,
  jobEnded,
  proxyVars,
  startAgent,
  startBackendServer,
  startRelay,
  tempDir,
  until,
  viaHaproxy,
  type Agent,
} from "../support/proxy-haproxy-agent";
import {
  pebbleLog,
  pebbleOutput,
  pebbleRoot,
  revoke,
  serialHex,
  startPebble,
  stopPebble,
} from "../support/pebble-acme";
import { expectStatus } from "../support/expect-status";
import { freePort } from "../support/processes.mjs";
import { requireBinary } from "../support/system-programs.mjs";
import { startWranglerDev, type DevServer } from "../support/wrangler-dev.mjs";

let work: string;
let server: DevServer;
let master: Agent;
let relay: Awaited<ReturnType<typeof startRelay>>;
let backend: Awaited<ReturnType<typeof startBackendServer>>;
let httpPort: number;
let httpsPort: number;
let pebblePort: number;
const DOMAIN = "shop.pebble.test";
/** A second certificate, whose renewal window has not begun. */
const CALM = "calm.pebble.test";
const BROKEN = "broken.pebble.test";
const HOUR = 3_600_000;
const MINUTE = 60_000;
/** pebble's certificateValidityPeriod (seconds): the 6-day certificates public CAs begin to issue. */
const VALIDITY_SECONDS = 6 * 86_400;
/** notAfter - notBefore of pebble's certificates: it ends them a second before the period is over. */
const PEBBLE_LIFETIME_MS = VALIDITY_SECONDS * 1000 - 1000;

beforeAll(async () => {
  requireBinary("haproxy");
  work = tempDir("pebble");
  httpPort = await freePort();
  httpsPort = await freePort();
  // HTTP-01 validation connects to <domain>:httpPort, which is haproxy's http frontend.
  pebblePort = await startPebble(work, httpPort, VALIDITY_SECONDS);

  backend = await startBackendServer("shop", "127.0.0.1");
  relay = await startRelay();
  master = await startAgent({ runHaproxy: true });
  copyFileSync(path.join(work, "ca.pem"), TRUST_FILE);
  server = await startWranglerDev(
    proxyVars(
      master,
      { http: httpPort, https: httpsPort },
      {
        HAPROXY_ACME_BACKEND_URL: `http://127.0.0.1:${relay.port}`,
        ACME_DIRECTORY_URL: `https://127.0.0.1:${pebblePort}/dir`,
        ACME_EMAIL: "hostmaster@pebble.test",
        // The container listens on this machine's loopback, which a real installation refuses.
        PROXY_ADDRESS_EXCEPTIONS: "::ffff:127.0.0.0/104",
      },
    ),
  );
  relay.setTarget(server.port);

  const call = adminCall(server.url);
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
    domainOperations: [DOMAIN, CALM, BROKEN].map((domainName) => ({
      operation: "CREATE",
      domainName,
      projectLabel: "acme",
      backendLabel: "shop",
      enableSSL: true,
    })),
  });
  // haproxy must run (and forward the challenge path) before the CA validates.
  expectStatus(await api(server.url, "/admin/gensynchaprx"), 200, "gensynchaprx");
}, 180_000);

afterAll(async () => {
  await server?.stop();
  await master?.stop();
  stopPebble();
  relay?.server.close();
  backend?.server.close();
  rmSync(TRUST_FILE, { force: true });
  delete process.env.NODE_EXTRA_CA_CERTS;
});

/** The serial (lower-case hex, no leading zeros) /admin/certificates lists for a domain's ACME certificate. */
const listedSerial = (listed: { name: string; serialNumber: string }[], domainName: string) =>
  serialHex(listed.find((c) => c.name === `acme_${domainName}`)!.serialNumber);

/** The serial number (lower-case hex, no leading zeros) of the certificate haproxy serves for a name, or undefined. */
function servedSerial(servername: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    const socket = tlsConnect({ host: "127.0.0.1", port: httpsPort, servername, rejectUnauthorized: false }, () => {
      const serial = socket.getPeerCertificate().serialNumber;
      socket.end();
      resolve(serial && serialHex(serial));
    });
    socket.on("error", () => resolve(undefined));
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
        `^INFO: Certificate acme_${DOMAIN} obtained from CN=Pebble Intermediate CA [0-9a-f]+, valid until \\d{4}-[^;]+$`,
      ),
    );
    expect(
      run.warnings.filter((w: string) => w.startsWith(`INFO: Certificate acme_${CALM} obtained from `)),
    ).toHaveLength(1);
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
    const stored = listed.find((c: { name: string }) => c.name === `acme_${DOMAIN}`);
    expect(stored).toMatchObject({ source: "acme", domainNames: [DOMAIN], file: `certs/acme_${DOMAIN}.pem` });
    expect(Date.parse(stored.notAfter) - Date.parse(stored.notBefore)).toBe(PEBBLE_LIFETIME_MS);
    // Nothing was asked about before a certificate existed, and no order replaced another.
    expect(pebbleLog(0)).toEqual({
      renewalInfoRequests: 0,
      issued: [listedSerial(listed, CALM), listedSerial(listed, DOMAIN)],
      replacements: [],
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

  it("renews the certificate whose ARI window has begun, naming it in `replaces`, and not the one whose window has not", async () => {
    const before = (await api(server.url, "/admin/certificates")).body;
    // Revoked, the shop's certificate gets a window that has begun; the calm one's begins half way through its life.
    await revoke(readFileSync(path.join(master.configDir, "certs", `acme_${DOMAIN}.pem`), "utf8"));
    const logFrom = pebbleOutput.length;
    const startedAt = Date.now();
    const started = await api(server.url, "/maintenance/start");
    const run = await jobEnded(server.url, Number(started.headers.get("X-Job-Id")), 120_000);
    const endedAt = Date.now();
    expect(run.state).toBe("succeeded");
    const renewed = new RegExp(
      `^INFO: Certificate acme_${DOMAIN} obtained from CN=Pebble Intermediate CA [0-9a-f]+, valid until \\S+; renewed in the CA's renewal window (\\S+) to (\\S+)$`,
    );
    expect(run.warnings).toEqual([
      expect.stringMatching(
        new RegExp(
          `^WARN: no new attempt for ${BROKEN} before \\d{4}-\\d\\d-\\d\\dT00:00:00\\.000Z: the last one failed \\(`,
        ),
      ),
      expect.stringMatching(renewed),
      expect.stringMatching(/^INFO: certificates changed: HAProxy configuration job \d+ queued$/),
    ]);
    // pebble's window for a revoked certificate: half an hour, from an hour before it was asked.
    const [, windowStart, windowEnd] = renewed.exec(run.warnings[1])!;
    expect(Date.parse(windowEnd) - Date.parse(windowStart)).toBe(30 * MINUTE);
    expect(Date.parse(windowStart)).toBeGreaterThanOrEqual(startedAt - HOUR);
    expect(Date.parse(windowStart)).toBeLessThanOrEqual(endedAt - HOUR);
    const queued = Number(/job (\d+) queued$/.exec(run.warnings.at(-1))![1]);
    expect(await jobEnded(server.url, queued)).toMatchObject({ kind: "gensynchaprx", state: "succeeded" });

    // Both certificates were asked about (pebble knew them by their IDs); only the shop's was ordered again, and the
    // order named the revoked certificate in `replaces`.
    const listed = (await api(server.url, "/admin/certificates")).body;
    expect(listedSerial(listed, DOMAIN)).not.toBe(listedSerial(before, DOMAIN));
    expect(listedSerial(listed, CALM)).toBe(listedSerial(before, CALM));
    expect(pebbleLog(logFrom)).toEqual({
      renewalInfoRequests: 2,
      issued: [listedSerial(listed, DOMAIN)],
      replacements: [{ issued: listedSerial(listed, DOMAIN), replaced: listedSerial(before, DOMAIN) }],
    });
    // haproxy serves the renewed certificate.
    await until("haproxy to serve the renewed certificate", async () =>
      (await servedSerial(DOMAIN)) === listedSerial(listed, DOMAIN) ? true : undefined,
    );
  });

  it("does not try a failed domain again the same day, nor renew a fresh certificate, nor ask before Retry-After", async () => {
    const logFrom = pebbleOutput.length;
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
    // pebble's Retry-After (6 hours) for the calm certificate has not passed; the renewed one is new to the Worker,
    // and its window (pebble's for a certificate not revoked) has not begun.
    expect(pebbleLog(logFrom)).toEqual({ renewalInfoRequests: 1, issued: [], replacements: [] });
  });
});
