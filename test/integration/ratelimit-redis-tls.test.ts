// BACKEND_TYPE=redis over TLS (KVSTORE_TLS) with AUTH, through a real `wrangler dev` and a redis-server serving TLS
// with certificates made here. A Worker trusts only public CAs; locally wrangler dev adds the CA named by
// NODE_EXTRA_CA_CERTS, which is how this test (and a developer) trusts the test CA.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, tempDir } from "../support/processes.mjs";
import { makeServerCertificate } from "../support/test-certificates.mjs";
import { type LocalServer, redisCli, startRedis } from "../support/local-servers.mjs";
import { type DevServer, refreshProxyConnection, startWranglerDev } from "../support/wrangler-dev.mjs";
import { ADMIN_TOKEN, dailyLimitConfig, dayStart, installFiles } from "../support/ratelimit-dev-server";

const CONFIG = dailyLimitConfig("tls", "client", 2);

let temp: ReturnType<typeof tempDir>;
let redis: LocalServer;
let tlsPort: number;
let plainPort: number;
let trusted: DevServer;
let untrusted: DevServer;

beforeAll(async () => {
  temp = tempDir("redis-tls-");
  const files = makeServerCertificate(temp.dir);
  tlsPort = await freePort();
  plainPort = await freePort();
  redis = await startRedis(
    [
      "--tls-port",
      String(tlsPort),
      "--tls-cert-file",
      files.cert,
      "--tls-key-file",
      files.key,
      "--tls-ca-cert-file",
      files.ca,
      "--tls-auth-clients",
      "no",
      "--requirepass",
      "tls-test-password",
    ],
    plainPort,
  );
  const vars = {
    RATELIMIT_ADMIN_TOKEN: ADMIN_TOKEN,
    BACKEND_TYPE: "redis",
    KVSTORE_URL: `127.0.0.1:${tlsPort}`,
    KVSTORE_TLS: "true",
    KVSTORE_AUTH: "tls-test-password",
    KVSTORE_POOL_SIZE: "2",
    KVSTORE_TIMEOUT: "3s",
  };
  // startWranglerDev hands process.env to wrangler dev: start it after choosing whether the test CA is trusted.
  const previous = process.env.NODE_EXTRA_CA_CERTS;
  process.env.NODE_EXTRA_CA_CERTS = files.ca;
  trusted = await startWranglerDev(vars);
  if (previous === undefined) delete process.env.NODE_EXTRA_CA_CERTS;
  else process.env.NODE_EXTRA_CA_CERTS = previous;
  // Started without the CA: a Worker that cannot verify.
  untrusted = await startWranglerDev(vars);
  for (const server of [trusted, untrusted]) {
    await refreshProxyConnection(server);
    await installFiles(server, { "tls.yaml": CONFIG });
  }
});

afterAll(async () => {
  await trusted?.stop();
  await untrusted?.stop();
  await redis?.stop();
  temp?.remove();
});

const post = async (url: string, value: string) => {
  const response = await fetch(`${url}/json`, {
    method: "POST",
    body: JSON.stringify({ domain: "tls", descriptors: [{ entries: [{ key: "client", value }] }] }),
  });
  return { status: response.status, text: await response.text() };
};

describe("KVSTORE_TLS", () => {
  it("counts over TLS with AUTH when the server's certificate is trusted", async () => {
    const answers = [await post(trusted.url, "a"), await post(trusted.url, "a"), await post(trusted.url, "a")];
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 429]);
    const day = dayStart();
    expect(redisCli(plainPort, "-a", "tls-test-password", "--no-auth-warning", "GET", `tls_client_a_${day}`)).toBe("3");
    // The connections are TLS ones: the server counts them on its TLS port.
    expect(redisCli(plainPort, "-a", "tls-test-password", "--no-auth-warning", "CLIENT", "LIST")).toMatch(
      new RegExp(`laddr=127\\.0\\.0\\.1:${tlsPort} .*name=ratelimit-main-`),
    );
  });

  it("refuses a server whose certificate it cannot verify, telling the caller no address", async () => {
    const answer = await post(untrusted.url, "b");
    expect(answer).toMatchObject({ status: 500, text: "rate limit counter store error" });
  });
});
