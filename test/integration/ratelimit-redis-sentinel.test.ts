// KVSTORE_TYPE=sentinel through a real `wrangler dev`: a master, a replica and a redis-sentinel started here. The
// Worker asks the sentinel for the master; a failover during traffic moves the counting to the new master without a
// restart, and no request hangs.
import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, tempDir } from "../support/processes.mjs";
import { type LocalServer, redisCli, startRedis, startServer } from "../support/local-servers.mjs";
import { type DevServer, startWranglerDev } from "../support/wrangler-dev.mjs";
import { ADMIN_TOKEN, dailyLimitConfig, dayStart, installFiles } from "../support/ratelimit-dev-server";

const CONFIG = dailyLimitConfig("sent", "client", 100000);
const TIMEOUT_MS = 5000;

let temp: ReturnType<typeof tempDir>;
const servers: LocalServer[] = [];
let masterPort: number;
let replicaPort: number;
let sentinelPort: number;
let worker: DevServer;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(check: () => boolean, what: string, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

const masterNamed = () => redisCli(sentinelPort, "SENTINEL", "get-master-addr-by-name", "mymaster").split("\n")[1];

beforeAll(async () => {
  temp = tempDir("redis-sentinel-");
  masterPort = await freePort();
  replicaPort = await freePort();
  sentinelPort = await freePort();
  servers.push(await startRedis([], masterPort));
  servers.push(await startRedis(["--replicaof", "127.0.0.1", String(masterPort)], replicaPort));
  const conf = path.join(temp.dir, "sentinel.conf");
  writeFileSync(
    conf,
    [
      `port ${sentinelPort}`,
      "bind 127.0.0.1",
      `dir ${temp.dir}`,
      `sentinel monitor mymaster 127.0.0.1 ${masterPort} 1`,
      "sentinel down-after-milliseconds mymaster 1000",
      "sentinel failover-timeout mymaster 10000",
      "",
    ].join("\n"),
  );
  servers.push(await startServer("redis-sentinel", [conf], sentinelPort));
  // A failover needs a replica the sentinel knows and that is in sync.
  await until(
    () => /flags\nslave\n/.test(redisCli(sentinelPort, "SENTINEL", "replicas", "mymaster")),
    "the sentinel to see the replica",
  );
  await until(() => /master_link_status:up/.test(redisCli(replicaPort, "INFO", "replication")), "the replica to sync");
  worker = await startWranglerDev({
    RATELIMIT_ADMIN_TOKEN: ADMIN_TOKEN,
    BACKEND_TYPE: "redis",
    KVSTORE_TYPE: "sentinel",
    KVSTORE_URL: `mymaster,127.0.0.1:${await freePort()},127.0.0.1:${sentinelPort}`,
    KVSTORE_POOL_SIZE: "3",
    KVSTORE_TIMEOUT: `${TIMEOUT_MS}ms`,
  });
  await installFiles(worker, { "sent.yaml": CONFIG });
});

afterAll(async () => {
  await worker?.stop();
  for (const server of servers.reverse()) await server.stop();
  temp?.remove();
});

async function post(value: string): Promise<{ status: number; text: string }> {
  const response = await fetch(`${worker.url}/json`, {
    method: "POST",
    body: JSON.stringify({ domain: "sent", descriptors: [{ entries: [{ key: "client", value }] }] }),
    signal: AbortSignal.timeout(TIMEOUT_MS + 10_000),
  });
  return { status: response.status, text: await response.text() };
}

describe("KVSTORE_TYPE=sentinel", () => {
  it("counts on the master the sentinel names (skipping a sentinel that is down)", async () => {
    expect(masterNamed()).toBe(String(masterPort));
    for (let i = 0; i < 3; i++) expect((await post("before")).status).toBe(200);
    expect(redisCli(masterPort, "GET", `sent_client_before_${dayStart()}`)).toBe("3");
  });

  it("follows a failover during traffic: no request hangs, and counting goes on on the new master", async () => {
    let stop = false;
    const answers: { status: number; text: string }[] = [];
    const traffic = Promise.all(
      Array.from({ length: 4 }, async () => {
        while (!stop) answers.push(await post("during"));
      }),
    );
    await sleep(500);
    expect(redisCli(sentinelPort, "SENTINEL", "FAILOVER", "mymaster")).toBe("OK");
    await until(() => masterNamed() === String(replicaPort), "the sentinel to name the replica");
    await until(() => /role:slave/.test(redisCli(masterPort, "INFO", "replication")), "the old master to be demoted");
    await sleep(1500);
    stop = true;
    await traffic;

    // Every request was answered: counted, or (only for calls in flight when the old master dropped its
    // clients) refused as a store failure, never left hanging, and never naming a node.
    const statuses = new Set(answers.map((answer) => answer.status));
    expect([...statuses].every((status) => status === 200 || status === 500)).toBe(true);
    for (const answer of answers.filter((a) => a.status === 500)) {
      expect(answer.text).toMatch(/^rate limit counter store error(: [A-Z]+ .*)?$/);
      expect(answer.text).not.toMatch(/127\.0\.0\.1|kvstore/);
    }
    expect(answers.filter((a) => a.status === 500).length).toBeLessThanOrEqual(4);
    expect(answers.at(-1)!.status).toBe(200);

    // After the failover, each hit is counted once on the new master.
    const key = `sent_client_after_${dayStart()}`;
    for (let i = 0; i < 10; i++) expect((await post("after")).status).toBe(200);
    expect(redisCli(replicaPort, "GET", key)).toBe("10");
  });
});
