// The setup the gRPC gateway integration files share: a `wrangler dev` holding their rules, a plain gateway to it and
// the test certificates, or the stand-in upstream; every gateway and client a file starts is stopped after it.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect } from "vitest";
import {
  makeCertificates,
  startFakeUpstream,
  startGateway,
  type Certificates,
  type FakeUpstream,
  type Gateway,
  type RateLimitClient,
} from "./grpc-gateway";
import { freePort } from "./processes.mjs";
import { startWranglerDev, type DevServer } from "./wrangler-dev.mjs";
import { UNLIMITED_AND_BLOCKED_RULES } from "./ratelimit-rules";

export const ADMIN_TOKEN = "integration-admin-token";
const CONFIG = `domain: grpc-it
descriptors:
  - key: client
    rate_limit:
      unit: day
      requests_per_unit: 3
  - key: user
    rate_limit:
      name: per-user
      unit: day
      requests_per_unit: 2
  - key: path
    value: /free
${UNLIMITED_AND_BLOCKED_RULES}
`;

// Set by grpcSuite's beforeAll; the files read them through these live bindings.
export let worker: DevServer;
export let temp: string;
export let certs: Certificates;
export let fake: FakeUpstream;
export let plain: Gateway;
const gateways: Gateway[] = [];
const clients: RateLimitClient[] = [];

/** Stops `item` with the file's other gateways and clients once the file is done. */
export function track<T extends Gateway | RateLimitClient>(item: T): T {
  if ("child" in item) gateways.push(item);
  else clients.push(item);
  return item;
}

/** A gateway to the Worker serving TLS with the test certificates, asking clients for one from the test CA. */
export async function mutualTlsGateway(extra: Record<string, string> = {}): Promise<Gateway> {
  return track(
    await startGateway({
      RATELIMIT_UPSTREAM_URL: worker.url,
      GRPC_PORT: "0",
      GRPC_SERVER_USE_TLS: "true",
      GRPC_SERVER_TLS_CERT: certs.serverCert,
      GRPC_SERVER_TLS_KEY: certs.serverKey,
      GRPC_CLIENT_TLS_CACERT: certs.caPem,
      ...extra,
    }),
  );
}

export const descriptor = (...pairs: [string, string][]) => ({
  entries: pairs.map(([key, value]) => ({ key, value })),
});

/**
 * Sets up the calling file: with `worker`, the test certificates, a `wrangler dev` holding CONFIG and a plain gateway
 * to it; with `upstream`, the stand-in upstream. All of it, and every gateway and client tracked, stops after the file.
 */
export function grpcSuite(parts: { worker?: boolean; upstream?: boolean }): void {
  beforeAll(async () => {
    if (parts.worker) {
      temp = mkdtempSync(path.join(tmpdir(), "grpc-it-"));
      certs = makeCertificates(temp);
      worker = await startWranglerDev({ RATELIMIT_ADMIN_TOKEN: ADMIN_TOKEN });
      const put = await fetch(`${worker.url}/rlconfig/files`, {
        method: "PUT",
        headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
        body: JSON.stringify({ files: { "grpc-it.yaml": CONFIG } }),
      });
      expect(put.status).toBe(200);
    }
    if (parts.upstream) fake = await startFakeUpstream();
    if (parts.worker)
      plain = track(await startGateway({ RATELIMIT_UPSTREAM_URL: worker.url, GRPC_PORT: String(await freePort()) }));
  });

  afterAll(async () => {
    for (const client of clients) client.close();
    await Promise.all(gateways.map((gateway) => gateway.stop()));
    await fake?.close();
    await worker?.stop();
    if (temp) rmSync(temp, { recursive: true, force: true });
  });
}
