// POST /json with BACKEND_TYPE=redis against a real redis-server (started by test/global-setup.ts): the same
// decisions as the Durable Object store, the reference's INCRBY + EXPIRE with the window plus jitter, the per-second
// store, AUTH in both forms, the reference's REDIS_* names, errors that name the store's problem, the health check
// and the settings a Worker cannot honour.
import { env } from "cloudflare:workers";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { descriptor, installConfig } from "../../../helpers/ratelimit";
import { DECISION_CONFIG, decisionSuite, NOW } from "../../decision-suite";
import { redis, workerWith } from "../../store-helpers";

const CONFIG =
  DECISION_CONFIG +
  `
  - key: burst
    rate_limit:
      unit: second
      requests_per_unit: 5
  - key: daily
    rate_limit:
      unit: day
      requests_per_unit: 10
`;

// Redis expiries are relative, so the suite's frozen clock (NOW) is fine.
const HOUR_START = 1893456000;

const URL = `127.0.0.1:${env.TEST_REDIS_PORT}`;
const main = workerWith({ BACKEND_TYPE: "redis", KVSTORE_URL: URL, CACHE_KEY_PREFIX: "suite_" });

beforeAll(async () => {
  vi.useFakeTimers({ toFake: ["Date"], now: NOW });
  await installConfig({ "rl.yaml": CONFIG });
});
afterAll(() => vi.useRealTimers());

describe("the key-value store decides as the Durable Object store does", () => {
  decisionSuite(main.rateLimit, {
    // The counter is the reference's key, in Redis; over-limit hits keep counting, as the reference's do.
    afterKeyOnlyRule: async () =>
      expect(await redis(env.TEST_REDIS_PORT, [["GET", `suite_rl_client_10.0.0.1_${HOUR_START}`]])).toEqual(["4"]),
  });
});

describe("counting as the reference does", () => {
  it("sets an expiry of the window plus less than EXPIRATION_JITTER_MAX_SECONDS on every key it counts", async () => {
    const jittered = workerWith({
      BACKEND_TYPE: "redis",
      KVSTORE_URL: URL,
      CACHE_KEY_PREFIX: "ttl_",
      EXPIRATION_JITTER_MAX_SECONDS: "20",
    });
    const answer = await jittered.rateLimit({
      domain: "rl",
      descriptors: [descriptor(["client", "ttl"]), descriptor(["path", "/login"]), descriptor(["daily", "d"])],
    });
    expect(answer.status).toBe(200);
    const ttls = await redis(env.TEST_REDIS_PORT, [
      ["TTL", `ttl_rl_client_ttl_${HOUR_START}`],
      ["TTL", `ttl_rl_path_/login_${HOUR_START}`],
      ["TTL", `ttl_rl_daily_d_${HOUR_START}`],
    ]);
    const [hour, minute, day] = ttls as number[];
    expect(hour).toBeGreaterThanOrEqual(3600 - 1);
    expect(hour).toBeLessThan(3600 + 20);
    expect(minute).toBeGreaterThanOrEqual(60 - 1);
    expect(minute).toBeLessThan(60 + 20);
    expect(day).toBeGreaterThanOrEqual(86400 - 1);
    expect(day).toBeLessThan(86400 + 20);
  });

  it("without jitter, the expiry is exactly the window", async () => {
    const exact = workerWith({
      BACKEND_TYPE: "redis",
      KVSTORE_URL: URL,
      CACHE_KEY_PREFIX: "exact_",
      EXPIRATION_JITTER_MAX_SECONDS: "0",
    });
    await exact.rateLimit({ domain: "rl", descriptors: [descriptor(["path", "/login"])] });
    const [ttl] = (await redis(env.TEST_REDIS_PORT, [["TTL", `exact_rl_path_/login_${HOUR_START}`]])) as number[];
    expect([59, 60]).toContain(ttl);
  });

  it("keeps the other counters still when one descriptor is over, with STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT", async () => {
    const stop = workerWith({
      BACKEND_TYPE: "redis",
      KVSTORE_URL: URL,
      CACHE_KEY_PREFIX: "stop_",
      STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT: "true",
    });
    const request = { domain: "rl", descriptors: [descriptor(["daily", "s"]), descriptor(["client", "s"])] };
    const remaining = [];
    for (let i = 0; i < 5; i++)
      remaining.push((await stop.rateLimit(request)).body.statuses.map((s: any) => s.limitRemaining ?? 0));
    // client (3/hour) goes over at the 4th request; from then on daily stays where it was.
    expect(remaining).toEqual([
      [9, 2],
      [8, 1],
      [7, 0],
      [7, 0],
      [7, 0],
    ]);
    expect(
      await redis(env.TEST_REDIS_PORT, [
        ["GET", `stop_rl_daily_s_${HOUR_START}`],
        ["GET", `stop_rl_client_s_${HOUR_START}`],
      ]),
    ).toEqual(["3", "5"]);
  });

  it("sends per-second counters to the per-second store and the others to the main store", async () => {
    const split = workerWith({
      BACKEND_TYPE: "redis",
      KVSTORE_URL: URL,
      CACHE_KEY_PREFIX: "split_",
      KVSTORE_PERSECOND: "true",
      KVSTORE_PERSECOND_URL: `127.0.0.1:${env.TEST_REDIS_PERSECOND_PORT}`,
    });
    const answer = await split.rateLimit({
      domain: "rl",
      descriptors: [descriptor(["burst", "b"]), descriptor(["client", "b"])],
    });
    expect(answer.body.statuses.map((s: any) => s.limitRemaining)).toEqual([4, 2]);
    const second = `split_rl_burst_b_${NOW / 1000}`;
    const hour = `split_rl_client_b_${HOUR_START}`;
    expect(
      await redis(env.TEST_REDIS_PERSECOND_PORT, [
        ["GET", second],
        ["GET", hour],
        ["TTL", second],
      ]),
    ).toEqual(["1", null, expect.any(Number)]);
    expect(
      await redis(env.TEST_REDIS_PORT, [
        ["GET", second],
        ["GET", hour],
      ]),
    ).toEqual([null, "1"]);
  });

  it("opens a connection per request with KVSTORE_POOL_SIZE=0, counting the same way", async () => {
    const direct = workerWith({
      BACKEND_TYPE: "redis",
      KVSTORE_URL: URL,
      CACHE_KEY_PREFIX: "direct_",
      KVSTORE_POOL_SIZE: "0",
    });
    const request = { domain: "rl", descriptors: [descriptor(["client", "direct"])] };
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await direct.rateLimit(request)).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
    expect(await redis(env.TEST_REDIS_PORT, [["GET", `direct_rl_client_direct_${HOUR_START}`]])).toEqual(["4"]);
  });

  it("accepts the reference's REDIS_* names; the spec's KVSTORE_* name wins when both are set", async () => {
    const aliased = workerWith({ BACKEND_TYPE: "redis", REDIS_URL: URL, CACHE_KEY_PREFIX: "alias_" });
    expect((await aliased.rateLimit({ domain: "rl", descriptors: [descriptor(["client", "alias"])] })).status).toBe(
      200,
    );
    const both = workerWith({
      BACKEND_TYPE: "kvstore",
      REDIS_URL: "127.0.0.1:1",
      KVSTORE_URL: URL,
      CACHE_KEY_PREFIX: "alias_",
    });
    expect(
      (await both.rateLimit({ domain: "rl", descriptors: [descriptor(["client", "alias"])] })).body.statuses[0]
        .limitRemaining,
    ).toBe(1);
  });
});

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

  it("answers 500 with the server's refusal, never the password", async () => {
    const wrong = workerWith({
      BACKEND_TYPE: "redis",
      KVSTORE_URL: authUrl,
      KVSTORE_AUTH: "not-the-password",
      KVSTORE_POOL_SIZE: "1",
    });
    const answer = await wrong.rateLimit({ domain: "rl", descriptors: [descriptor(["client", "auth"])] });
    expect(answer.status).toBe(500);
    expect(answer.contentType).toMatch(/^text\/plain/);
    expect(answer.body).toBe(
      `rate limit counter store error: kvstore: authentication with ${authUrl} failed: WRONGPASS invalid username-password pair or user is disabled.`,
    );
    expect(answer.body).not.toContain("not-the-password");
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
  it("answers 500 with the connection error when the store cannot be reached, and health follows with the flag", async () => {
    const port = 1; // nothing listens on port 1
    const down = workerWith({
      BACKEND_TYPE: "redis",
      KVSTORE_URL: `127.0.0.1:${port}`,
      KVSTORE_POOL_SIZE: "2",
      KVSTORE_TIMEOUT: "2s",
    });
    const answer = await down.rateLimit({ domain: "rl", descriptors: [descriptor(["client", "down"])] });
    expect(answer.status).toBe(500);
    expect(answer.body).toMatch(/^rate limit counter store error: kvstore: cannot connect to 127\.0\.0\.1:1: /);
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
    const up = workerWith({
      BACKEND_TYPE: "redis",
      KVSTORE_URL: URL,
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
    [{ KVSTORE_URL: "no-port" }, 'KVSTORE_URL: expected host:port, got "no-port"'],
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
    const refused = workerWith({ BACKEND_TYPE: "redis", KVSTORE_URL: URL, ...vars });
    const error = vi.spyOn(console, "error").mockImplementation(() => {});
    const answer = await refused.rateLimit({ domain: "rl", descriptors: [descriptor(["client", "x"])] });
    error.mockRestore();
    expect(answer.status).toBe(500);
    expect(answer.body).toContain(message);
    expect(answer.body).toMatch(/^ratelimit settings are invalid: /);
  });
});
