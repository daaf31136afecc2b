// The key-value store's connection pool against a real redis-server of its own (test/global-setup.ts): while a
// pooled connection is busy (the server is paused for writes), a second caller waits KVSTORE_POOL_ON_EMPTY_WAIT_DURATION
// and then fails (ERROR), goes out on an extra connection (CREATE) or keeps waiting (WAIT). Connections are told
// apart by the names the pool gives them (CLIENT SETNAME).
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { descriptor, installConfig } from "../../../support/ratelimit-calls";
import { redis, workerWith } from "../../../support/ratelimit-stores";

const CONFIG =
  "domain: pool\ndescriptors:\n  - key: k\n    rate_limit:\n      unit: hour\n      requests_per_unit: 1000\n";
const PORT = env.TEST_REDIS_POOL_PORT;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  await installConfig({ "pool.yaml": CONFIG });
});

/** Names of the pool's connections the server knows, sorted. */
async function poolConnections(): Promise<string[]> {
  const [list] = await redis(PORT, [["CLIENT", "LIST"]]);
  return [...String(list).matchAll(/ name=(ratelimit-\S*)/g)].map((match) => match[1]).sort();
}

/** The Worker over this file's redis-server, with these settings besides. */
const redisWorker = (vars: Record<string, string>) =>
  workerWith({ BACKEND_TYPE: "redis", KVSTORE_URL: `127.0.0.1:${PORT}`, ...vars });

/** redisWorker with these settings, its counters' keys prefixed with `label`_ so no other test shares them. */
const poolWorker = (label: string, vars: Record<string, string>) =>
  redisWorker({ ...vars, CACHE_KEY_PREFIX: `${label}_` });

/** A request of one hit on k = `value`. */
const poolHit = (value: string) => ({ domain: "pool", descriptors: [descriptor(["k", value])] });

/**
 * Holds the only pooled connection busy (writes paused for 1.5 s), sends a second request while it is, and returns
 * both answers and the pool's connections seen while both were waiting.
 */
async function secondCallerWhileBusy(behaviour: string, value: string) {
  const pool = poolWorker(behaviour, {
    KVSTORE_POOL_SIZE: "1",
    KVSTORE_POOL_ON_EMPTY_BEHAVIOR: behaviour,
    KVSTORE_POOL_ON_EMPTY_WAIT_DURATION: "100ms",
    KVSTORE_TIMEOUT: "5s",
  });
  const request = poolHit(value);
  expect((await pool.rateLimit(request)).status).toBe(200);
  await redis(PORT, [["CLIENT", "PAUSE", "1500", "WRITE"]]);
  const first = pool.rateLimit(request);
  await sleep(300);
  const second = pool.rateLimit(request);
  await sleep(400);
  const during = await poolConnections();
  const answers = await Promise.all([first, second]);
  return { answers, during };
}

describe("KVSTORE_POOL_ON_EMPTY_BEHAVIOR", () => {
  it("ERROR fails the caller that found the pool empty after the wait duration; the busy caller is answered", async () => {
    const { answers, during } = await secondCallerWhileBusy("ERROR", "error");
    expect(answers.map((a) => a.status)).toEqual([200, 500]);
    expect(answers[0].body.statuses[0].limitRemaining).toBe(998);
    expect(answers[1].body).toBe("rate limit counter store error: kvstore: connection pool empty after waiting 100 ms");
    expect(during.filter((name) => name.endsWith("-extra"))).toEqual([]);
  });

  it("CREATE sends the waiting caller over an extra connection, closed after use", async () => {
    const { answers, during } = await secondCallerWhileBusy("CREATE", "create");
    expect(answers.map((a) => a.status)).toEqual([200, 200]);
    expect(answers.map((a) => a.body.statuses[0].limitRemaining).sort()).toEqual([997, 998]);
    expect(during.filter((name) => name.endsWith("-extra"))).toEqual(["ratelimit-main-0-extra"]);
    await sleep(100);
    expect((await poolConnections()).filter((name) => name.endsWith("-extra"))).toEqual([]);
  });

  it("WAIT keeps the caller waiting for the pooled connection", async () => {
    const { answers, during } = await secondCallerWhileBusy("WAIT", "wait");
    expect(answers.map((a) => a.status)).toEqual([200, 200]);
    expect(answers.map((a) => a.body.statuses[0].limitRemaining)).toEqual([998, 997]);
    expect(during.filter((name) => name.endsWith("-extra"))).toEqual([]);
  });

  it("fails a call that gets no reply within KVSTORE_TIMEOUT instead of hanging", async () => {
    const slow = poolWorker("timeout", { KVSTORE_POOL_SIZE: "1", KVSTORE_TIMEOUT: "300ms" });
    const request = poolHit("timeout");
    expect((await slow.rateLimit(request)).status).toBe(200);
    await redis(PORT, [["CLIENT", "PAUSE", "1000", "WRITE"]]);
    const answer = await slow.rateLimit(request);
    expect(answer.status).toBe(500);
    expect(answer.body).toMatch(
      /^rate limit counter store error: kvstore: no (reply from 127\.0\.0\.1:\d+|answer) within 300 ms$/,
    );
    await sleep(800);
    // The next call dials a new connection and is answered.
    expect((await slow.rateLimit(request)).status).toBe(200);
  });
});

describe("KVSTORE_PIPELINE_WINDOW", () => {
  it("gathers simultaneous callers into shared writes and still counts exactly", async () => {
    const windowed = poolWorker("window", { KVSTORE_POOL_SIZE: "2", KVSTORE_PIPELINE_WINDOW: "2ms" });
    const request = poolHit("window");
    const answers = await Promise.all(Array.from({ length: 40 }, () => windowed.rateLimit(request)));
    expect(answers.map((a) => a.body.statuses[0].limitRemaining).sort((a: number, b: number) => a - b)).toEqual(
      Array.from({ length: 40 }, (_, i) => 960 + i),
    );
  });
});
