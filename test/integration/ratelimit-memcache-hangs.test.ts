// A hung memcached (SIGSTOP) behind a real `wrangler dev` with BACKEND_TYPE=memcache and the default OBJCACHE_TIMEOUT
// (500 ms): POST /json answers 500 (without the store's detail) within the time-out, not later, and counts again once
// the node resumes (SIGCONT). A node that cannot be reached at all: test/ratelimit/stores/memcache/store.test.ts.
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMemcached, type LocalServer } from "../support/local-servers.mjs";
import { ADMIN_TOKEN, dailyLimitConfig, dayStart, installFiles } from "../support/ratelimit-dev-server";
import { refreshProxyConnection, startWranglerDev, type DevServer } from "../support/wrangler-dev.mjs";

/** The default this file proves. */
const OBJCACHE_TIMEOUT_MS = 500;
/** What a shared 2-core machine may add to the bound before the answer is a hang. */
const SLACK_MS = 1500;

let memcached: LocalServer;
let worker: DevServer;

beforeAll(async () => {
  memcached = await startMemcached();
  worker = await startWranglerDev({
    RATELIMIT_ADMIN_TOKEN: ADMIN_TOKEN,
    BACKEND_TYPE: "memcache",
    OBJCACHE_HOST_PORT: `127.0.0.1:${memcached.port}`,
  });
  await refreshProxyConnection(worker);
  await installFiles(worker, { "mc.yaml": dailyLimitConfig("mc", "client", 1000) });
});

afterAll(async () => {
  await worker?.stop();
  if (memcached?.child.signalCode === null) memcached.child.kill("SIGCONT");
  await memcached?.stop();
});

/** POST /json for one client value, and how long its answer took (a hang fails at 30 s). */
async function decide(value: string): Promise<{ status: number; body: string; ms: number }> {
  const started = Date.now();
  const response = await fetch(`${worker.url}/json`, {
    method: "POST",
    body: JSON.stringify({ domain: "mc", descriptors: [{ entries: [{ key: "client", value }] }] }),
    signal: AbortSignal.timeout(30_000),
  });
  return { status: response.status, body: await response.text(), ms: Date.now() - started };
}

/** The stored count of a key, straight from memcached ("" when absent). */
function storedCount(key: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let reply = "";
    const socket = connect(memcached.port, "127.0.0.1", () => socket.write(`get ${key}\r\n`));
    socket.on("data", (chunk) => {
      reply += chunk;
      if (!reply.endsWith("END\r\n")) return;
      socket.end();
      resolve(/^VALUE \S+ \d+ \d+\r\n(.*)\r\n/.exec(reply)?.[1].trim() ?? "");
    });
    socket.on("error", reject);
  });
}

/** Until the key's count is `expected`: increments land after the answer (waitUntil). */
async function counted(key: string, expected: string) {
  for (let i = 0; i < 100 && (await storedCount(key)) !== expected; i++) await new Promise((r) => setTimeout(r, 50));
  expect(await storedCount(key)).toBe(expected);
}

const remaining = (answer: { body: string }) => JSON.parse(answer.body).statuses[0].limitRemaining as number;

describe("a hung memcached", () => {
  it("answers 500 without the store's detail within OBJCACHE_TIMEOUT, then counts again after SIGCONT", async () => {
    const first = await decide("hang");
    expect(first.status).toBe(200);
    expect(remaining(first)).toBe(999);
    const key = `mc_client_hang_${dayStart()}`;
    await counted(key, "1");
    memcached.child.kill("SIGSTOP");
    try {
      const during = await Promise.all(Array.from({ length: 5 }, () => decide("hang")));
      for (const answer of during) {
        expect(answer.status).toBe(500);
        expect(answer.body).toBe("rate limit counter store error");
        expect(answer.ms).toBeGreaterThanOrEqual(OBJCACHE_TIMEOUT_MS - 100);
        expect(answer.ms).toBeLessThan(OBJCACHE_TIMEOUT_MS + SLACK_MS);
      }
    } finally {
      memcached.child.kill("SIGCONT");
    }
    // The failed calls counted nothing: they failed on their read, before their increments.
    const after = await decide("hang");
    expect(after.status).toBe(200);
    expect(remaining(after)).toBe(998);
    await counted(key, "2");
  });
});
