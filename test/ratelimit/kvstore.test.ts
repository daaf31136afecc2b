// POST /json with BACKEND_TYPE=redis against a real redis-server (started by test/global-setup.ts): the same
// decisions as the Durable Object store, the reference's INCRBY + EXPIRE with the window plus jitter, the per-second
// store, AUTH in both forms, the reference's REDIS_* names, errors that name the store's problem, the health check
// and the settings a Worker cannot honour.
import { env } from "cloudflare:workers";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { descriptor, installConfig } from "../helpers/ratelimit";
import { redis, workerWith } from "./store-helpers";

const CONFIG = `
domain: rl
descriptors:
  - key: client
    rate_limit:
      unit: hour
      requests_per_unit: 3
  - key: path
    value: /login
    rate_limit:
      name: login
      unit: minute
      requests_per_unit: 2
  - key: path
    value: /free
  - key: unlimited
    rate_limit:
      unlimited: true
  - key: blocked
    rate_limit:
      unit: day
      requests_per_unit: 0
  - key: hot
    rate_limit:
      unit: hour
      requests_per_unit: 100
  - key: wild
    value: api/*
    share_threshold: true
    rate_limit:
      unit: hour
      requests_per_unit: 2
  - key: burst
    rate_limit:
      unit: second
      requests_per_unit: 5
  - key: daily
    rate_limit:
      unit: day
      requests_per_unit: 10
`;

// 2030-01-01T00:00:30Z: 30 s into a minute, 30 s into an hour. Redis expiries are relative, so a frozen clock is fine.
const NOW = Date.UTC(2030, 0, 1, 0, 0, 30);
const HOUR_START = 1893456000;

const URL = `127.0.0.1:${env.TEST_REDIS_PORT}`;
const main = workerWith({ BACKEND_TYPE: "redis", KVSTORE_URL: URL, CACHE_KEY_PREFIX: "suite_" });

beforeAll(async () => {
  vi.useFakeTimers({ toFake: ["Date"], now: NOW });
  await installConfig({ "rl.yaml": CONFIG });
});
afterAll(() => vi.useRealTimers());

describe("the key-value store decides as the Durable Object store does", () => {
  const { rateLimit } = main;

  it("counts a key-only rule per value and answers 429 once over", async () => {
    const request = { domain: "rl", descriptors: [descriptor(["client", "10.0.0.1"])] };
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await rateLimit(request));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 429]);
    expect(answers[0].body).toEqual({
      overallCode: "OK",
      statuses: [{ code: "OK", currentLimit: { requestsPerUnit: 3, unit: "HOUR" }, limitRemaining: 2, durationUntilReset: "3570s" }],
    });
    expect(answers[2].body.statuses[0]).toEqual({
      code: "OK",
      currentLimit: { requestsPerUnit: 3, unit: "HOUR" },
      durationUntilReset: "3570s",
    });
    expect(answers[3].body).toEqual({
      overallCode: "OVER_LIMIT",
      statuses: [{ code: "OVER_LIMIT", currentLimit: { requestsPerUnit: 3, unit: "HOUR" }, durationUntilReset: "3570s" }],
    });
    const other = await rateLimit({ domain: "rl", descriptors: [descriptor(["client", "10.0.0.2"])] });
    expect(other.body.statuses[0].limitRemaining).toBe(2);
    // The counter is the reference's key, in Redis; over-limit hits keep counting, as the reference's do.
    expect(await redis(env.TEST_REDIS_PORT, [["GET", `suite_rl_client_10.0.0.1_${HOUR_START}`]])).toEqual(["4"]);
  });

  it("names the rule in currentLimit and reports the rest of the minute", async () => {
    const answer = await rateLimit({ domain: "rl", descriptors: [descriptor(["path", "/login"])] });
    expect(answer.body.statuses[0]).toEqual({
      code: "OK",
      currentLimit: { requestsPerUnit: 2, unit: "MINUTE", name: "login" },
      limitRemaining: 1,
      durationUntilReset: "30s",
    });
  });

  it("whitelists a key and value without a limit, and gives unknown descriptors OK", async () => {
    const answer = await rateLimit({
      domain: "rl",
      descriptors: [descriptor(["path", "/free"]), descriptor(["nothing", "x"]), { entries: [] }],
    });
    expect(answer).toMatchObject({ status: 200, body: { overallCode: "OK", statuses: [{ code: "OK" }, { code: "OK" }, { code: "OK" }] } });
  });

  it("answers unlimited with the largest uint32 and zero with OVER_LIMIT", async () => {
    const answer = await rateLimit({ domain: "rl", descriptors: [descriptor(["unlimited", "u"]), descriptor(["blocked", "b"])] });
    expect(answer.status).toBe(429);
    expect(answer.body).toEqual({
      overallCode: "OVER_LIMIT",
      statuses: [
        { code: "OK", limitRemaining: 4294967295 },
        { code: "OVER_LIMIT", currentLimit: { unit: "DAY" }, durationUntilReset: "86370s" },
      ],
    });
  });

  it("shares one counter among wildcard values with share_threshold", async () => {
    const first = await rateLimit({ domain: "rl", descriptors: [descriptor(["wild", "api/a"])] });
    const second = await rateLimit({ domain: "rl", descriptors: [descriptor(["wild", "api/b"])] });
    const third = await rateLimit({ domain: "rl", descriptors: [descriptor(["wild", "api/c"])] });
    expect([first.body.statuses[0].limitRemaining, second.body.statuses[0].limitRemaining, third.status]).toEqual([1, undefined, 429]);
  });

  it("answers an unknown domain with OK per descriptor", async () => {
    const answer = await rateLimit({ domain: "nope", descriptors: [descriptor(["a", "b"]), descriptor(["c", "d"])] });
    expect(answer).toEqual({
      status: 200,
      body: { overallCode: "OK", statuses: [{ code: "OK" }, { code: "OK" }] },
      contentType: expect.stringMatching(/^application\/json/),
    });
  });

  it("reads snake_case names, string numbers and enum numbers as proto3 JSON parsers do", async () => {
    const answer = await rateLimit({
      domain: "rl",
      hits_addend: "2",
      descriptors: [{ entries: [{ key: "client", value: "snake" }], limit: { requests_per_unit: "10", unit: 3 } }],
    });
    expect(answer.body.statuses[0]).toEqual({
      code: "OK",
      currentLimit: { requestsPerUnit: 10, unit: "HOUR" },
      limitRemaining: 8,
      durationUntilReset: "3570s",
    });
  });

  it("admits exactly the limit out of 150 concurrent hits on one key (2000 run in test/integration)", async () => {
    const request = { domain: "rl", descriptors: [descriptor(["hot", "one-key"])] };
    const statuses = await Promise.all(Array.from({ length: 150 }, () => rateLimit(request).then((a) => a.status)));
    expect(statuses.filter((s) => s === 200).length).toBe(100);
    expect(statuses.filter((s) => s === 429).length).toBe(50);
  }, 60_000);
});

describe("counting as the reference does", () => {
  it("sets an expiry of the window plus less than EXPIRATION_JITTER_MAX_SECONDS on every key it counts", async () => {
    const jittered = workerWith({ BACKEND_TYPE: "redis", KVSTORE_URL: URL, CACHE_KEY_PREFIX: "ttl_", EXPIRATION_JITTER_MAX_SECONDS: "20" });
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
    const exact = workerWith({ BACKEND_TYPE: "redis", KVSTORE_URL: URL, CACHE_KEY_PREFIX: "exact_", EXPIRATION_JITTER_MAX_SECONDS: "0" });
    await exact.rateLimit({ domain: "rl", descriptors: [descriptor(["path", "/login"])] });
    const [ttl] = (await redis(env.TEST_REDIS_PORT, [["TTL", `exact_rl_path_/login_${HOUR_START}`]])) as number[];
    expect([59, 60]).toContain(ttl);
  });

  it("keeps the other counters still when one descriptor is over, with STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT", async () => {
    const stop = workerWith({ BACKEND_TYPE: "redis", KVSTORE_URL: URL, CACHE_KEY_PREFIX: "stop_", STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT: "true" });
    const request = { domain: "rl", descriptors: [descriptor(["daily", "s"]), descriptor(["client", "s"])] };
    const remaining = [];
    for (let i = 0; i < 5; i++) remaining.push((await stop.rateLimit(request)).body.statuses.map((s: any) => s.limitRemaining ?? 0));
    // client (3/hour) goes over at the 4th request; from then on daily stays where it was.
    expect(remaining).toEqual([[9, 2], [8, 1], [7, 0], [7, 0], [7, 0]]);
    expect(await redis(env.TEST_REDIS_PORT, [["GET", `stop_rl_daily_s_${HOUR_START}`], ["GET", `stop_rl_client_s_${HOUR_START}`]])).toEqual(["3", "5"]);
  });

  it("sends per-second counters to the per-second store and the others to the main store", async () => {
    const split = workerWith({
      BACKEND_TYPE: "redis",
      KVSTORE_URL: URL,
      CACHE_KEY_PREFIX: "split_",
      KVSTORE_PERSECOND: "true",
      KVSTORE_PERSECOND_URL: `127.0.0.1:${env.TEST_REDIS_PERSECOND_PORT}`,
    });
    const answer = await split.rateLimit({ domain: "rl", descriptors: [descriptor(["burst", "b"]), descriptor(["client", "b"])] });
    expect(answer.body.statuses.map((s: any) => s.limitRemaining)).toEqual([4, 2]);
    const second = `split_rl_burst_b_${NOW / 1000}`;
    const hour = `split_rl_client_b_${HOUR_START}`;
    expect(await redis(env.TEST_REDIS_PERSECOND_PORT, [["GET", second], ["GET", hour], ["TTL", second]])).toEqual(["1", null, expect.any(Number)]);
    expect(await redis(env.TEST_REDIS_PORT, [["GET", second], ["GET", hour]])).toEqual([null, "1"]);
  });

  it("opens a connection per request with KVSTORE_POOL_SIZE=0, counting the same way", async () => {
    const direct = workerWith({ BACKEND_TYPE: "redis", KVSTORE_URL: URL, CACHE_KEY_PREFIX: "direct_", KVSTORE_POOL_SIZE: "0" });
    const request = { domain: "rl", descriptors: [descriptor(["client", "direct"])] };
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await direct.rateLimit(request)).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
    expect(await redis(env.TEST_REDIS_PORT, [["GET", `direct_rl_client_direct_${HOUR_START}`]])).toEqual(["4"]);
  });

  it("accepts the reference's REDIS_* names; the spec's KVSTORE_* name wins when both are set", async () => {
    const aliased = workerWith({ BACKEND_TYPE: "redis", REDIS_URL: URL, CACHE_KEY_PREFIX: "alias_" });
    expect((await aliased.rateLimit({ domain: "rl", descriptors: [descriptor(["client", "alias"])] })).status).toBe(200);
    const both = workerWith({ BACKEND_TYPE: "kvstore", REDIS_URL: "127.0.0.1:1", KVSTORE_URL: URL, CACHE_KEY_PREFIX: "alias_" });
    expect((await both.rateLimit({ domain: "rl", descriptors: [descriptor(["client", "alias"])] })).body.statuses[0].limitRemaining).toBe(1);
  });
});

describe("AUTH", () => {
  const authUrl = `127.0.0.1:${env.TEST_REDIS_AUTH_PORT}`;

  it.each([
    ["a password", "test-redis-password"],
    ["user:password", "default:test-redis-password"],
  ])("authenticates with %s", async (_label, auth) => {
    const authed = workerWith({ BACKEND_TYPE: "redis", KVSTORE_URL: authUrl, KVSTORE_AUTH: auth, CACHE_KEY_PREFIX: `auth_${_label.length}_` });
    const answer = await authed.rateLimit({ domain: "rl", descriptors: [descriptor(["client", "auth"])] });
    expect(answer.status).toBe(200);
    expect(answer.body.statuses[0].limitRemaining).toBe(2);
  });

  it("answers 500 with the server's refusal, never the password", async () => {
    const wrong = workerWith({ BACKEND_TYPE: "redis", KVSTORE_URL: authUrl, KVSTORE_AUTH: "not-the-password", KVSTORE_POOL_SIZE: "1" });
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
    expect(answer).toMatchObject({ status: 500, body: "rate limit counter store error: NOAUTH Authentication required." });
  });
});

describe("store errors and health", () => {
  it("answers 500 with the connection error when the store cannot be reached, and health follows with the flag", async () => {
    const port = 1; // nothing listens on port 1
    const down = workerWith({ BACKEND_TYPE: "redis", KVSTORE_URL: `127.0.0.1:${port}`, KVSTORE_POOL_SIZE: "2", KVSTORE_TIMEOUT: "2s" });
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
    const up = workerWith({ BACKEND_TYPE: "redis", KVSTORE_URL: URL, KVSTORE_POOL_SIZE: "2", KVSTORE_HEALTH_CHECK_ACTIVE_CONNECTION: "true" });
    expect(await up.fetch("/healthcheck")).toMatchObject({ status: 200, body: "OK" });
  });

  it.each([
    [{ KVSTORE_URL: "" }, "KVSTORE_URL is required with BACKEND_TYPE=redis"],
    [{ KVSTORE_URL: "/var/run/nutcracker/ratelimit.sock" }, "KVSTORE_URL: a Worker cannot reach a unix socket; give the store's host:port"],
    [{ KVSTORE_SOCKET_TYPE: "unix" }, "KVSTORE_SOCKET_TYPE: a Worker cannot reach a unix socket; use tcp"],
    [{ KVSTORE_URL: "no-port" }, 'KVSTORE_URL: expected host:port, got "no-port"'],
    [{ KVSTORE_TYPE: "sentinel", KVSTORE_URL: "mymaster" }, "KVSTORE_URL: sentinel needs the master name, then at least one sentinel host:port"],
    [{ KVSTORE_TYPE: "cluster" }, "KVSTORE_PIPELINE_WINDOW must be non-zero with KVSTORE_TYPE=cluster (150us to 500us is typical)"],
    [
      { KVSTORE_TLS: "true", KVSTORE_TLS_CACERT: "/etc/ca.pem" },
      "KVSTORE_TLS_CACERT: a Worker's TLS sockets can present no client certificate and trust no private CA; serve the store with a certificate from a public CA (locally, NODE_EXTRA_CA_CERTS=<ca file> for wrangler dev) and authenticate with KVSTORE_AUTH",
    ],
    [{ KVSTORE_TLS: "true", KVSTORE_TLS_SKIP_HOSTNAME_VERIFICATION: "true" }, "KVSTORE_TLS_SKIP_HOSTNAME_VERIFICATION: a Worker's TLS sockets always verify the server's name"],
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
