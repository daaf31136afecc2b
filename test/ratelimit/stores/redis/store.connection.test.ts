// POST /json with BACKEND_TYPE=redis when reaching the store is the problem: AUTH in both forms, errors that tell
// callers only the server's own reply (never an address or the password; the operator's log has the detail), the
// health check, and the settings a Worker cannot honour.
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { descriptor } from "../../../support/ratelimit-calls";
import { atNowWithConfig } from "../../../support/ratelimit-decision-suite";
import { refusedAnswer, workerWith } from "../../../support/ratelimit-stores";
import { CONFIG, redisWorker } from "./store-fixtures";

atNowWithConfig({ "rl.yaml": CONFIG });

/** Runs `work`, keeping what it logs as errors out of the test output; returns its result and those lines. */
async function loggingErrors<T>(work: () => Promise<T>): Promise<{ result: T; logged: string[] }> {
  const error = vi.spyOn(console, "error").mockImplementation(() => {});
  try {
    const result = await work();
    return { result, logged: error.mock.calls.map((call) => String(call[0])) };
  } finally {
    error.mockRestore();
  }
}

describe("AUTH", () => {
  const authUrl = `127.0.0.1:${env.TEST_REDIS_AUTH_PORT}`;

  it.each([
    ["a password", "test-redis-password"],
    ["user:password", "default:test-redis-password"],
  ])("authenticates with %s", async (_label, auth) => {
    const authed = workerWith({
      BACKEND_TYPE: "redis",
      KVSTORE_URL: authUrl,
      KVSTORE_AUTH: auth,
      CACHE_KEY_PREFIX: `auth_${_label.length}_`,
    });
    const answer = await authed.rateLimit({ domain: "rl", descriptors: [descriptor(["client", "auth"])] });
    expect(answer.status).toBe(200);
    expect(answer.body.statuses[0].limitRemaining).toBe(2);
  });

  it("answers 500 without the address or the password when AUTH is refused, and logs the refusal", async () => {
    const wrong = workerWith({
      BACKEND_TYPE: "redis",
      KVSTORE_URL: authUrl,
      KVSTORE_AUTH: "not-the-password",
      KVSTORE_POOL_SIZE: "1",
    });
    const { result: answer, logged } = await loggingErrors(() =>
      wrong.rateLimit({ domain: "rl", descriptors: [descriptor(["client", "auth"])] }),
    );
    expect(answer).toEqual({
      status: 500,
      body: "rate limit counter store error",
      contentType: expect.stringMatching(/^text\/plain/),
    });
    const refusal = `kvstore: authentication with ${authUrl} failed: WRONGPASS invalid username-password pair or user is disabled.`;
    expect(
      logged.filter((line) => line.includes("ratelimit: counter store failed") && line.includes(refusal)),
    ).toHaveLength(1);
    expect(logged.join("\n")).not.toContain("not-the-password");
  });

  it("answers 500 naming NOAUTH when no password is configured", async () => {
    const none = workerWith({ BACKEND_TYPE: "redis", KVSTORE_URL: authUrl, KVSTORE_POOL_SIZE: "1" });
    const answer = await none.rateLimit({ domain: "rl", descriptors: [descriptor(["client", "auth"])] });
    expect(answer).toMatchObject({
      status: 500,
      body: "rate limit counter store error: NOAUTH Authentication required.",
    });
  });
});

describe("store errors and health", () => {
  it("answers 500 without the address when the store cannot be reached, logs it, and health follows with the flag", async () => {
    const port = 1; // nothing listens on port 1
    const down = workerWith({
      BACKEND_TYPE: "redis",
      KVSTORE_URL: `127.0.0.1:${port}`,
      KVSTORE_POOL_SIZE: "2",
      KVSTORE_TIMEOUT: "2s",
    });
    const { result: answer, logged } = await loggingErrors(() =>
      down.rateLimit({ domain: "rl", descriptors: [descriptor(["client", "down"])] }),
    );
    expect(answer).toEqual({
      status: 500,
      body: "rate limit counter store error",
      contentType: expect.stringMatching(/^text\/plain/),
    });
    const detail = logged.filter((line) => line.includes("ratelimit: counter store failed"));
    expect(detail).toHaveLength(1);
    expect(detail[0]).toContain("kvstore: cannot connect to 127.0.0.1:1: ");
    // Without KVSTORE_HEALTH_CHECK_ACTIVE_CONNECTION the store does not take part in health.
    expect((await down.fetch("/healthcheck")).status).toBe(200);
    const checked = workerWith({
      BACKEND_TYPE: "redis",
      KVSTORE_URL: `127.0.0.1:${port}`,
      KVSTORE_POOL_SIZE: "2",
      KVSTORE_HEALTH_CHECK_ACTIVE_CONNECTION: "true",
    });
    expect(await checked.fetch("/healthcheck")).toEqual({ status: 500, body: "", contentType: null });
  });

  it("is healthy with the flag while the pool holds a connection", async () => {
    const up = redisWorker({
      KVSTORE_POOL_SIZE: "2",
      KVSTORE_HEALTH_CHECK_ACTIVE_CONNECTION: "true",
    });
    expect(await up.fetch("/healthcheck")).toMatchObject({ status: 200, body: "OK" });
  });

  it.each([
    [{ KVSTORE_URL: "" }, "KVSTORE_URL is required with BACKEND_TYPE=redis"],
    [
      { KVSTORE_URL: "/var/run/nutcracker/ratelimit.sock" },
      "KVSTORE_URL: a Worker cannot reach a unix socket; give the store's host:port",
    ],
    [{ KVSTORE_SOCKET_TYPE: "unix" }, "KVSTORE_SOCKET_TYPE: a Worker cannot reach a unix socket; use tcp"],
    [{ KVSTORE_URL: "no-port" }, "KVSTORE_URL: expected host:port with a port from 1 to 65535"],
    [
      { KVSTORE_URL: "redis://:s3cr3t@cache:6379" },
      "KVSTORE_URL: expected host:port with a port from 1 to 65535, without a scheme (credentials go in the AUTH settings)",
    ],
    [
      { KVSTORE_TYPE: "sentinel", KVSTORE_URL: "mymaster" },
      "KVSTORE_URL: sentinel needs the master name, then at least one sentinel host:port",
    ],
    [
      { KVSTORE_TYPE: "cluster" },
      "KVSTORE_PIPELINE_WINDOW must be non-zero with KVSTORE_TYPE=cluster (150us to 500us is typical)",
    ],
    [
      { KVSTORE_TLS: "true", KVSTORE_TLS_CACERT: "/etc/ca.pem" },
      "KVSTORE_TLS_CACERT: a Worker's TLS sockets can present no client certificate and trust no private CA; serve the store with a certificate from a public CA (locally, NODE_EXTRA_CA_CERTS=<ca file> for wrangler dev) and authenticate with KVSTORE_AUTH",
    ],
    [
      { KVSTORE_TLS: "true", KVSTORE_TLS_SKIP_HOSTNAME_VERIFICATION: "true" },
      "KVSTORE_TLS_SKIP_HOSTNAME_VERIFICATION: a Worker's TLS sockets always verify the server's name",
    ],
    [{ KVSTORE_PERSECOND: "true" }, "KVSTORE_PERSECOND_URL is required with BACKEND_TYPE=redis"],
    [{ KVSTORE_POOL_ON_EMPTY_BEHAVIOR: "SOMETIMES" }, "KVSTORE_POOL_ON_EMPTY_BEHAVIOR: Invalid option"],
  ])("refuses settings a Worker cannot honour: %j", async (vars, message) => {
    const answer = await refusedAnswer(redisWorker(vars), { domain: "rl", descriptors: [descriptor(["client", "x"])] });
    expect(answer.status).toBe(500);
    expect(answer.body).toContain(message);
    expect(answer.body).toMatch(/^ratelimit settings are invalid: /);
  });
});
