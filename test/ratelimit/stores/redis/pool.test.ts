// The key-value store's connection pool against a real redis-server of its own (test/global-setup.ts): while a
// pooled connection is busy (the server is paused for writes), a second caller waits KVSTORE_POOL_ON_EMPTY_WAIT_DURATION
// and then fails (ERROR), goes out on an extra connection (CREATE) or keeps waiting (WAIT). Connections are told
// apart by the names the pool gives them (CLIENT SETNAME). The pipeline window's shared writes show in the server's
// count of reads.
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { descriptor, installConfig } from "../../../support/ratelimit-calls";
import { redis, workerWith } from "../../../support/ratelimit-stores";

const CONFIG =
  "domain: pool\ndescriptors:\n  - key: k\n    rate_limit:\n      unit: hour\n      requests_per_unit: 1000\n";
const PORT = env.TEST_REDIS_POOL_PORT;
/** How long a condition on the server may take to be reached: generous, as the machine may be loaded. */
const REACHED = { timeout: 10_000, interval: 20 };

beforeAll(async () => {
  await installConfig({ "pool.yaml": CONFIG });
});

/** The server's connections, each as its CLIENT LIST fields (name, flags: "b" while its command is held). */
async function connections(): Promise<Record<string, string>[]> {
  const [list] = await redis(PORT, [["CLIENT", "LIST"]]);
  return String(list)
    .split("\n")
    .filter(Boolean)
    .map((line) => Object.fromEntries(line.split(" ").map((field) => field.split(/=(.*)/s, 2))));
}

const extraConnections = async () =>
  (await connections()).map((client) => client.name).filter((name) => name.endsWith("-extra"));
const held = async (name: string) =>
  (await connections()).some((client) => client.name === name && client.flags.includes("b"));

/** How many connections the pools have dialled so far: each names itself once (CLIENT SETNAME). */
async function dialled(): Promise<number> {
  const [info] = await redis(PORT, [["INFO", "commandstats"]]);
  return Number(/cmdstat_client\|setname:calls=(\d+)/.exec(String(info))?.[1] ?? 0);
}

/** The Worker over this file's redis-server, with these settings besides. */
const redisWorker = (vars: Record<string, string>) =>
  workerWith({ BACKEND_TYPE: "redis", KVSTORE_URL: `127.0.0.1:${PORT}`, ...vars });

/** redisWorker with these settings, its counters' keys prefixed with `label`_ so no other test shares them. */
const poolWorker = (label: string, vars: Record<string, string>) =>
  redisWorker({ ...vars, CACHE_KEY_PREFIX: `${label}_` });

/** A request of one hit on k = `value`. */
const poolHit = (value: string) => ({ domain: "pool", descriptors: [descriptor(["k", value])] });

type Pending = ReturnType<ReturnType<typeof workerWith>["rateLimit"]>;

/**
 * Holds the only pooled connection busy (its write held by a server paused for writes for up to `pauseMs`), sends a
 * second request once it is, runs `whileHeld` and then ends the pause. Returns both answers, what `whileHeld` saw and
 * how many connections the pool dialled meanwhile.
 */
async function secondCallerWhileBusy<T>(
  behaviour: string,
  value: string,
  pauseMs: number,
  whileHeld: (first: Pending, second: Pending) => Promise<T>,
) {
  const pool = poolWorker(behaviour, {
    KVSTORE_POOL_SIZE: "1",
    KVSTORE_POOL_ON_EMPTY_BEHAVIOR: behaviour,
    KVSTORE_POOL_ON_EMPTY_WAIT_DURATION: "100ms",
    KVSTORE_TIMEOUT: "30s",
  });
  const request = poolHit(value);
  expect((await pool.rateLimit(request)).status).toBe(200);
  const dialledBefore = await dialled();
  await redis(PORT, [["CLIENT", "PAUSE", String(pauseMs), "WRITE"]]);
  try {
    const first = pool.rateLimit(request);
    await vi.waitUntil(() => held("ratelimit-main-0"), REACHED);
    const second = pool.rateLimit(request);
    const during = await whileHeld(first, second);
    await redis(PORT, [["CLIENT", "UNPAUSE"]]);
    const answers = await Promise.all([first, second]);
    return { answers, during, dialled: (await dialled()) - dialledBefore };
  } finally {
    await redis(PORT, [["CLIENT", "UNPAUSE"]]);
  }
}

describe("KVSTORE_POOL_ON_EMPTY_BEHAVIOR", () => {
  it("ERROR fails the caller that found the pool empty after the wait duration; the busy caller is answered", async () => {
    // The second caller is failed while the first is still held.
    const { answers, dialled } = await secondCallerWhileBusy("ERROR", "error", 30_000, (_, second) => second);
    expect(answers.map((a) => a.status)).toEqual([200, 500]);
    expect(answers[0].body.statuses[0].limitRemaining).toBe(998);
    expect(answers[1].body).toBe("rate limit counter store error");
    expect(dialled).toBe(0);
  });

  it("CREATE sends the waiting caller over an extra connection, closed after use", async () => {
    const { answers, during, dialled } = await secondCallerWhileBusy("CREATE", "create", 30_000, () =>
      vi.waitUntil(async () => {
        const extras = await extraConnections();
        return extras.length > 0 && extras;
      }, REACHED),
    );
    expect(answers.map((a) => a.status)).toEqual([200, 200]);
    expect(answers.map((a) => a.body.statuses[0].limitRemaining).sort()).toEqual([997, 998]);
    expect(during).toEqual(["ratelimit-main-0-extra"]);
    expect(dialled).toBe(1);
    await vi.waitUntil(async () => (await extraConnections()).length === 0, REACHED);
  });

  it("WAIT keeps the caller waiting for the pooled connection", async () => {
    // Nothing shows the second caller waiting, so the pause (1.5 s, far past its 100 ms) ends by itself.
    const { answers, dialled } = await secondCallerWhileBusy("WAIT", "wait", 1_500, (first) => first);
    expect(answers.map((a) => a.status)).toEqual([200, 200]);
    expect(answers.map((a) => a.body.statuses[0].limitRemaining)).toEqual([998, 997]);
    expect(dialled).toBe(0);
  });

  it("fails a call that gets no reply within KVSTORE_TIMEOUT instead of hanging", async () => {
    const slow = poolWorker("timeout", { KVSTORE_POOL_SIZE: "1", KVSTORE_TIMEOUT: "300ms" });
    const request = poolHit("timeout");
    expect((await slow.rateLimit(request)).status).toBe(200);
    await redis(PORT, [["CLIENT", "PAUSE", "30000", "WRITE"]]);
    try {
      const answer = await slow.rateLimit(request);
      expect(answer.status).toBe(500);
      expect(answer.body).toBe("rate limit counter store error");
    } finally {
      await redis(PORT, [["CLIENT", "UNPAUSE"]]);
    }
    // The next call dials a new connection and is answered.
    expect((await slow.rateLimit(request)).status).toBe(200);
  });
});

/** How many reads the server has processed: one per write that reaches it, and one per connection closed. */
async function reads(): Promise<number> {
  const [info] = await redis(PORT, [["INFO", "stats"]]);
  return Number(/total_reads_processed:(\d+)/.exec(String(info))?.[1]);
}

describe("KVSTORE_PIPELINE_WINDOW", () => {
  it("gathers simultaneous callers into shared writes and still counts exactly", async () => {
    // A window far longer than the callers take to arrive, so that all of them go out in the first write: without it
    // the first caller goes alone and the others follow in one or more writes.
    const windowed = poolWorker("window", { KVSTORE_POOL_SIZE: "1", KVSTORE_PIPELINE_WINDOW: "1s" });
    const request = poolHit("window");
    // The first call dials the connection, so that the count below holds the callers' writes only.
    expect((await windowed.rateLimit(request)).status).toBe(200);
    const before = await reads();
    const answers = await Promise.all(Array.from({ length: 40 }, () => windowed.rateLimit(request)));
    // One write for the 40 callers; the others are the first INFO connection's close and the second's INFO.
    expect((await reads()) - before).toBe(3);
    expect(answers.map((a) => a.body.statuses[0].limitRemaining).sort((a: number, b: number) => a - b)).toEqual(
      Array.from({ length: 40 }, (_, i) => 959 + i),
    );
  });
});
