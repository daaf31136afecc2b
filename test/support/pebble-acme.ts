// pebble as the certificate suite's ACME CA: started on loopback ports with a DNS responder of its own, asked over
// HTTPS with the CA made for it, made to revoke a certificate, and its log read for what the CA saw. One pebble per
// test file: the state below is the module's.
import { spawn, type ChildProcess } from "node:child_process";
import { createSocket, type Socket } from "node:dgram";
import { createPrivateKey, createPublicKey, sign } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import type { IncomingHttpHeaders } from "node:http";
import { request as httpsRequest } from "node:https";
import path from "node:path";
import { until } from "./proxy-haproxy-agent";
import { ensurePebble } from "./pebble.mjs";
import { freePort } from "./processes.mjs";
import { makeCa, makeLeaf } from "./test-certificates.mjs";

/** Everything pebble has written so far (a live binding: importers read it as it grows). */
export let pebbleOutput = "";
let work: string;
let pebble: ChildProcess;
let dns: Socket;
let pebblePort: number;
let managementPort: number;
/** The path of pebble's renewalInfo resource, as its directory names it. */
let renewalInfoPath: string;

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

/**
 * Starts pebble in `dir` with a listener certificate from a CA made there (`ca.pem`, for the Worker to trust), its
 * HTTP-01 validation connecting to `httpPort` and its certificates valid `validitySeconds`; resolves to its ACME port
 * once it listens and its directory offers renewalInfo.
 */
export async function startPebble(dir: string, httpPort: number, validitySeconds: number): Promise<number> {
  const pebbleBinary = await ensurePebble();
  work = dir;

  // The CA wrangler dev trusts, and pebble's listener certificate from it.
  makeCa(work, "ca", "integration test CA");
  makeLeaf(work, "pebble", "ca", "subjectAltName=DNS:localhost,IP:127.0.0.1\n", "localhost");

  const dnsPort = await freePort();
  pebblePort = await freePort();
  managementPort = await freePort();
  dns = await startDns(dnsPort);
  const config = {
    pebble: {
      listenAddress: `127.0.0.1:${pebblePort}`,
      managementListenAddress: `127.0.0.1:${managementPort}`,
      certificate: path.join(work, "pebble.pem"),
      privateKey: path.join(work, "pebble.key"),
      // HTTP-01 validation connects to <domain>:httpPort.
      httpPort,
      tlsPort: await freePort(),
      ocspResponderURL: "",
      externalAccountBindingRequired: false,
      certificateValidityPeriod: validitySeconds,
    },
  };
  writeFileSync(path.join(work, "pebble.json"), JSON.stringify(config));
  pebble = spawn(pebbleBinary, ["-config", path.join(work, "pebble.json"), "-dnsserver", `127.0.0.1:${dnsPort}`], {
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
  const { renewalInfo } = await pebbleDirectory();
  if (typeof renewalInfo !== "string") throw new Error(`${pebbleBinary} offers no renewalInfo: it predates ARI`);
  renewalInfoPath = new URL(renewalInfo).pathname;
  return pebblePort;
}

/** Stops pebble and its DNS responder. */
export function stopPebble(): void {
  pebble?.kill("SIGTERM");
  dns?.close();
}

/** A request to pebble's ACME or management listener (HTTPS with a certificate of the CA made here). */
function pebbleRequest(
  port: number,
  pathName: string,
  init: { method?: string; body?: string } = {},
): Promise<{ status: number; headers: IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const request = httpsRequest(
      {
        host: "127.0.0.1",
        port,
        path: pathName,
        method: init.method ?? "GET",
        headers: init.body === undefined ? {} : { "Content-Type": "application/jose+json" },
        ca: readFileSync(path.join(work, "ca.pem")),
        servername: "localhost",
        agent: false,
      },
      (response) => {
        let body = "";
        response.on("data", (chunk) => (body += chunk));
        response.on("end", () => resolve({ status: response.statusCode!, headers: response.headers, body }));
      },
    );
    request.on("error", reject);
    request.end(init.body);
  });
}

/** pebble's root certificate (it makes a new one at every start). */
export const pebbleRoot = async () => (await pebbleRequest(managementPort, "/roots/0")).body;

const pebbleDirectory = async () =>
  JSON.parse((await pebbleRequest(pebblePort, "/dir")).body) as Record<string, unknown> & {
    newNonce: string;
    revokeCert: string;
  };

const base64url = (value: string | Buffer) => Buffer.from(value).toString("base64url");

/**
 * Revokes a certificate at pebble (RFC 8555 §7.6) by a JWS signed with the certificate's own key, both read from the
 * PEM file haproxy serves (the chain, then the key). pebble refuses a share of good nonces: a refused one is retried
 * with the nonce it sent back.
 */
export async function revoke(bundle: string): Promise<void> {
  const certificate = /-----BEGIN CERTIFICATE-----([^-]+)-----END CERTIFICATE-----/.exec(bundle)![1];
  const key = createPrivateKey(
    /-----BEGIN [A-Z ]*PRIVATE KEY-----[^-]+-----END [A-Z ]*PRIVATE KEY-----/.exec(bundle)![0],
  );
  const directory = await pebbleDirectory();
  const payload = base64url(
    JSON.stringify({ certificate: Buffer.from(certificate.replace(/\s/g, ""), "base64").toString("base64url") }),
  );
  let nonce = (await pebbleRequest(pebblePort, new URL(directory.newNonce).pathname, { method: "HEAD" })).headers[
    "replay-nonce"
  ];
  const jwk = createPublicKey(key).export({ format: "jwk" });
  for (let attempt = 1; ; attempt++) {
    const header = base64url(JSON.stringify({ alg: "ES256", jwk, nonce, url: directory.revokeCert }));
    const signature = sign("sha256", Buffer.from(`${header}.${payload}`), { key, dsaEncoding: "ieee-p1363" });
    const answer = await pebbleRequest(pebblePort, new URL(directory.revokeCert).pathname, {
      method: "POST",
      body: JSON.stringify({ protected: header, payload, signature: base64url(signature) }),
    });
    if (answer.status === 200) return;
    if (attempt >= 5 || !answer.body.includes("urn:ietf:params:acme:error:badNonce"))
      throw new Error(`pebble refused the revocation: HTTP ${answer.status} ${answer.body}`);
    nonce = answer.headers["replay-nonce"];
  }
}

export const serialHex = (serial: string) => serial.toLowerCase().replace(/^0+(?=.)/, "");

/**
 * What pebble's log tells from offset `from` on: how many renewalInfo requests it had, the serials it issued (in
 * order), and for each order that replaced another (its `replaces`), the new serial and the replaced one.
 */
export function pebbleLog(from: number) {
  const issuedBy = new Map(
    [...pebbleOutput.matchAll(/Issued certificate serial ([0-9a-f]+) for order (\S+)/g)].map(([, serial, order]) => [
      order,
      serialHex(serial),
    ]),
  );
  const since = pebbleOutput.slice(from);
  return {
    renewalInfoRequests: since.split("\n").filter((line) => line.includes(`GET ${renewalInfoPath}/ -> calling handler`))
      .length,
    issued: [...since.matchAll(/Issued certificate serial ([0-9a-f]+) for order/g)].map(([, serial]) =>
      serialHex(serial),
    ),
    replacements: [...since.matchAll(/ARI: order "([^"]+)" is a replacement of "([^"]+)"/g)].map(([, order, old]) => ({
      issued: issuedBy.get(order),
      replaced: issuedBy.get(old),
    })),
  };
}
