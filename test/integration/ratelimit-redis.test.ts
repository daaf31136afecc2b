// BACKEND_TYPE=redis through a real `wrangler dev` and a real redis-server: exact admission under 2000 concurrent
// hits, and a store that goes away mid-run, by hanging (stopped) or by closing (killed): requests answer errors
// within KVSTORE_TIMEOUT, health follows with KVSTORE_HEALTH_CHECK_ACTIVE_CONNECTION, and service resumes by
// itself when the store comes back.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../support/processes.mjs";
import { type LocalServer, redisCli, startRedis } from "../support/local-servers.mjs";
import { type DevServer, lostByProxy, refreshProxyConnection, startWranglerDev } from "../support/wrangler-dev.mjs";
import { ADMIN_TOKEN, dailyLimitConfig, dayStart, installFiles } from "../support/ratelimit-dev-server";

const CONFIG = dailyLimitConfig("burst", "hot", 100);
const TIMEOUT_MS = 3000;

let redisPort: number;
let redis: LocalServer;
/**
 * KVSTORE_TIMEOUT 30s: the burst's 2000 callers queue for the 4 connections, and with the reference's 10 s one CI run
 * on a slow 2-core machine answered 10 of them 500. This test is about exactness; the bound has tests of its own.
 */
let burst: DevServer;
/** A short KVSTORE_TIMEOUT and the health check on connections. */
let away: DevServer;

beforeAll(async () => {
  redisPort = await freePort();
  redis = await startRedis([], redisPort);
  const vars = {
    RATELIMIT_ADMIN_TOKEN: ADMIN_TOKEN,
    BACKEND_TYPE: "redis",
    KVSTORE_URL: `127.0.0.1:${redisPort}`,
    KVSTORE_POOL_SIZE: "4",
  };
  [burst, away] = await Promise.all([
    startWranglerDev({ ...vars, KVSTORE_TIMEOUT: "30s" }),
    startWranglerDev({ ...vars, KVSTORE_TIMEOUT: `${TIMEOUT_MS}ms`, KVSTORE_HEALTH_CHECK_ACTIVE_CONNECTION: "true" }),
  ]);
  for (const server of [burst, away]) {
    await refreshProxyConnection(server);
    await installFiles(server, { "burst.yaml": CONFIG });
  }
});

afterAll(async () => {
  console.log(`requests wrangler dev's proxy lost and post sent again: ${resent}`);
  await Promise.all([burst?.stop(), away?.stop()]);
  if (redis?.child.signalCode === null) redis.child.kill("SIGCONT");
  await redis?.stop();
});

const body = (value: string) =>
  JSON.stringify({ domain: "burst", descriptors: [{ entries: [{ key: "hot", value }] }] });

/**
 * How many POSTs wrangler dev's proxy lost and `post` sent again. While 2000 requests wait for the pool, the proxy
 * sends some on connections workerd closes for idleness, and answers them 503 "Your worker restarted mid-request"
 * though nothing restarted (workers-sdk issue 14641; one CI run met it once in 2000). Such a request never reached
 * the Worker; were one counted there, the store's exact count below would show it.
 */
let resent = 0;

/** POST /json, sent once more if the proxy lost it; the signal fails the call when no answer comes within `boundMs`. */
async function post(
  server: DevServer,
  value: string,
  boundMs: number,
): Promise<{ status: number; text: string; ms: number }> {
  const started = performance.now();
  for (let attempt = 1; ; attempt++) {
    const response = await fetch(`${server.url}/json`, {
      method: "POST",
      body: body(value),
      signal: AbortSignal.timeout(boundMs),
    });
    const text = await response.text();
    if (attempt === 1 && lostByProxy(response.status, text)) {
      resent++;
      continue;
    }
    return { status: response.status, text, ms: performance.now() - started };
  }
}

/** Well past KVSTORE_TIMEOUT: an answer later than this is a hang. */
const BOUND_MS = TIMEOUT_MS + 10_000;
const health = async () => (await fetch(`${away.url}/healthcheck`, { signal: AbortSignal.timeout(BOUND_MS) })).status;

describe("the key-value store through wrangler dev", () => {
  it("admits exactly 100 of 2000 concurrent hits on a key limited to 100, and sets the window's expiry", async () => {
    for (let i = 0; i < 5; i++) expect((await post(burst, "warm-up", 60_000)).status).toBe(200);
    const answers = await Promise.all(Array.from({ length: 2000 }, () => post(burst, "one-key", 120_000)));
    const counts: Record<number, number> = {};
    for (const { status } of answers) counts[status] = (counts[status] ?? 0) + 1;
    // What any other answer said, so that a failure names its cause (the pool's wait, or the runtime's own error).
    const others = new Set(answers.filter(({ status }) => status !== 200 && status !== 429).map(({ text }) => text));
    expect({ counts, others: [...others] }).toEqual({ counts: { 200: 100, 429: 1900 }, others: [] });
    expect(redisCli(redisPort, "GET", `burst_hot_one-key_${dayStart()}`)).toBe("2000");
    const ttl = Number(redisCli(redisPort, "TTL", `burst_hot_one-key_${dayStart()}`));
    expect(ttl).toBeGreaterThan(86_400 - 60);
    expect(ttl).toBeLessThanOrEqual(86_400 + 300);
  });

  it("answers errors within KVSTORE_TIMEOUT while the store hangs, and counts again once it is back", async () => {
    expect((await post(away, "hang", BOUND_MS)).status).toBe(200);
    // Every pool member now holds an open connection; a hung store keeps them open, so only an answer counts.
    expect(await health()).toBe(200);
    redis.child.kill("SIGSTOP");
    try {
      expect(await health()).toBe(500);
      const during = await Promise.all(Array.from({ length: 10 }, () => post(away, "hang", BOUND_MS)));
      expect(during.map((answer) => answer.status)).toEqual(Array(10).fill(500));
      for (const answer of during) expect(answer.text).toBe("rate limit counter store error");
      expect(await health()).toBe(500);
    } finally {
      redis.child.kill("SIGCONT");
    }
    expect(await health()).toBe(200);
    expect((await post(away, "hang", BOUND_MS)).status).toBe(200);
  });

  it("answers errors at once while the store is down, fails health, and resumes by itself when it comes back", async () => {
    expect(await health()).toBe(200);
    expect((await post(away, "away", BOUND_MS)).status).toBe(200);

    await redis.stop();
    const during = await Promise.all(Array.from({ length: 20 }, () => post(away, "away", BOUND_MS)));
    expect(during.map((answer) => answer.status)).toEqual(Array(20).fill(500));
    for (const answer of during) {
      expect(answer.text).toBe("rate limit counter store error");
      // A refused connection answers at once, not at KVSTORE_TIMEOUT (measured: about 125 ms, 20 at a time).
      expect(answer.ms).toBeLessThan(1000);
    }
    expect(await health()).toBe(500);

    redis = await startRedis([], redisPort);
    expect(await health()).toBe(200);
    const after = await post(away, "away", BOUND_MS);
    expect(after.status).toBe(200);
    // A fresh server: the count starts again.
    expect(JSON.parse(after.text).statuses[0].limitRemaining).toBe(99);
  });
});
