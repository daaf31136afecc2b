// The Node gateway's transports to a real `wrangler dev`: TLS with certificate reload, mutual TLS, a unix socket,
// connection age (GOAWAY), and settings refused at start.
import grpc from "@grpc/grpc-js";
import { copyFileSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { gatewayRefusing, rateLimitClient, startGateway } from "../support/grpc-gateway";
import { certs, descriptor, grpcSuite, mutualTlsGateway, temp, track, worker } from "../support/ratelimit-grpc-suite";

grpcSuite({ worker: true });

describe("transport security and sockets", () => {
  it("serves TLS and picks up new certificate files without a restart", async () => {
    const cert = path.join(temp, "live-server.pem");
    const key = path.join(temp, "live-server.key");
    copyFileSync(certs.serverCert, cert);
    copyFileSync(certs.serverKey, key);
    const gateway = track(
      await startGateway({
        RATELIMIT_UPSTREAM_URL: worker.url,
        GRPC_PORT: "0",
        GRPC_SERVER_USE_TLS: "true",
        GRPC_SERVER_TLS_CERT: cert,
        GRPC_SERVER_TLS_KEY: key,
      }),
    );
    const trusting = (ca: string) => grpc.credentials.createSsl(readFileSync(ca));
    const request = { domain: "grpc-it", descriptors: [descriptor(["path", "/free"])] };
    const first = track(rateLimitClient(gateway.target, trusting(certs.caPem)));
    expect(await first.shouldRateLimit(request)).toMatchObject({ ok: true, value: { overallCode: "OK" } });
    const insecure = track(rateLimitClient(gateway.target));
    expect(await insecure.shouldRateLimit(request, 3000)).toMatchObject({ ok: false, code: grpc.status.UNAVAILABLE });

    // Replace the files; new connections get the new certificate once the watcher has seen the change.
    copyFileSync(certs.newServerKey, key);
    copyFileSync(certs.newServerCert, cert);
    let renewed;
    for (let attempt = 0; attempt < 40; attempt++) {
      const client = track(rateLimitClient(gateway.target, trusting(certs.newCaPem)));
      renewed = await client.shouldRateLimit(request, 3000);
      client.close();
      if (renewed.ok) break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(renewed).toMatchObject({ ok: true, value: { overallCode: "OK" } });
    expect(gateway.output()).toContain("grpc-gateway: TLS files reloaded");
    const stale = track(rateLimitClient(gateway.target, trusting(certs.caPem)));
    expect(await stale.shouldRateLimit(request, 3000)).toMatchObject({ ok: false, code: grpc.status.UNAVAILABLE });
  });

  it("requires a client certificate from the client CA, naming GRPC_CLIENT_TLS_SAN, under mutual TLS", async () => {
    const gateway = await mutualTlsGateway({ GRPC_CLIENT_TLS_SAN: "client.example" });
    const ca = readFileSync(certs.caPem);
    const withCertificate = (cert: string, key: string) =>
      grpc.credentials.createSsl(ca, readFileSync(key), readFileSync(cert));
    const request = { domain: "grpc-it", descriptors: [descriptor(["path", "/free"])] };

    const good = track(rateLimitClient(gateway.target, withCertificate(certs.clientCert, certs.clientKey)));
    expect(await good.shouldRateLimit(request)).toMatchObject({ ok: true, value: { overallCode: "OK" } });
    expect(await good.check("ratelimit")).toEqual({ ok: true, value: { status: "SERVING" } });

    const anonymous = track(rateLimitClient(gateway.target, grpc.credentials.createSsl(ca)));
    expect(await anonymous.shouldRateLimit(request, 3000)).toMatchObject({ ok: false, code: grpc.status.UNAVAILABLE });

    const otherName = track(
      rateLimitClient(gateway.target, withCertificate(certs.otherClientCert, certs.otherClientKey)),
    );
    expect(await otherName.shouldRateLimit(request)).toEqual({
      ok: false,
      code: grpc.status.UNAUTHENTICATED,
      details: "client certificate does not name client.example",
    });
  });

  it("serves on a unix socket with GRPC_UDS", async () => {
    const socket = path.join(temp, "gateway.sock");
    const gateway = track(await startGateway({ RATELIMIT_UPSTREAM_URL: worker.url, GRPC_UDS: socket }));
    expect(gateway.target).toBe(`unix:${socket}`);
    const client = track(rateLimitClient(gateway.target));
    expect(
      await client.shouldRateLimit({ domain: "grpc-it", descriptors: [descriptor(["unlimited", "uds"])] }),
    ).toEqual({
      ok: true,
      value: { overallCode: "OK", statuses: [{ code: "OK", limitRemaining: 4294967295 }] },
    });
  });

  it("sends a GOAWAY at GRPC_MAX_CONNECTION_AGE, and the client reconnects", async () => {
    const gateway = track(
      await startGateway({
        RATELIMIT_UPSTREAM_URL: worker.url,
        GRPC_PORT: "0",
        GRPC_MAX_CONNECTION_AGE: "500ms",
        GRPC_MAX_CONNECTION_AGE_GRACE: "1s",
      }),
    );
    const client = track(rateLimitClient(gateway.target));
    const request = { domain: "grpc-it", descriptors: [descriptor(["path", "/free"])] };
    expect(await client.shouldRateLimit(request)).toMatchObject({ ok: true });
    // Without a GOAWAY an idle channel stays READY for half an hour (grpc-js's idle timeout).
    const states = [];
    for (let i = 0; i < 100 && states.at(-1) !== grpc.connectivityState.IDLE; i++) {
      states.push(client.channel.getConnectivityState(false));
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(states.at(-1)).toBe(grpc.connectivityState.IDLE);
    expect(await client.shouldRateLimit(request)).toMatchObject({ ok: true });
  });

  it("refuses malformed settings at start, naming the variable", async () => {
    expect(await gatewayRefusing({ GRPC_MAX_CONNECTION_AGE: "soon" })).toEqual({
      code: 1,
      output: expect.stringContaining(
        'invalid gateway settings: GRPC_MAX_CONNECTION_AGE: expected a duration such as \\"10s\\"',
      ),
    });
    expect(await gatewayRefusing({ GRPC_SERVER_USE_TLS: "true" })).toEqual({
      code: 1,
      output: expect.stringContaining("GRPC_SERVER_TLS_CERT: is required when GRPC_SERVER_USE_TLS is true"),
    });
  });
});
