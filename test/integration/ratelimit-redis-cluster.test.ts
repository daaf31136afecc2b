// KVSTORE_TYPE=cluster through a real `wrangler dev`: a cluster of 3 masters created here (redis-cli --cluster
// create). Each counter goes to the node owning its slot; when a slot moves the Worker follows MOVED, and while a
// slot is being migrated it follows ASK.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keySlot } from "../../src/ratelimit/stores/redis/slots";
import { freePort, tempDir } from "../support/processes.mjs";
import { type LocalServer, redisCli, startRedis } from "../support/local-servers.mjs";
import { type DevServer, startWranglerDev } from "../support/wrangler-dev.mjs";
import { ADMIN_TOKEN, dailyLimitConfig, dayStart, installFiles } from "../support/ratelimit-dev-server";

const CONFIG = dailyLimitConfig("cl", "client", 1000);

let temp: ReturnType<typeof tempDir>;
const nodes: LocalServer[] = [];
let ports: number[];
let worker: DevServer;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const keyOf = (value: string) => `cl_client_${value}_${dayStart()}`;
const nodeId = (port: number) => redisCli(port, "CLUSTER", "MYID");

/** The port of the node that owns `slot`, from CLUSTER SLOTS as node 0 sees it. */
function ownerOf(slot: number): number {
  const nodesText = redisCli(ports[0], "CLUSTER", "NODES");
  for (const line of nodesText.split("\n")) {
    const fields = line.split(" ");
    const port = Number(fields[1].split(":")[1].split("@")[0]);
    for (const range of fields.slice(8)) {
      const [start, end] = range.split("-").map(Number);
      if (slot >= start && slot <= (end ?? start)) return port;
    }
  }
  throw new Error(`no owner for slot ${slot}`);
}

function setSlotEverywhere(slot: number, port: number) {
  for (const node of ports) redisCli(node, "CLUSTER", "SETSLOT", String(slot), "NODE", nodeId(port));
}

beforeAll(async () => {
  temp = tempDir("redis-cluster-");
  ports = [await freePort(), await freePort(), await freePort()];
  for (const port of ports) {
    // The bus port too comes from freePort: the default, port + 10000, may lie where the kernel picks ports.
    const busPort = String(await freePort());
    const clusterArgs = ["--cluster-enabled", "yes", "--cluster-port", busPort, "--cluster-config-file"];
    nodes.push(await startRedis([...clusterArgs, `nodes-${port}.conf`, "--dir", temp.dir], port));
  }
  const created = redisCli(
    ports[0],
    "--cluster",
    "create",
    ...ports.map((port) => `127.0.0.1:${port}`),
    "--cluster-replicas",
    "0",
    "--cluster-yes",
  );
  expect(created).toContain("[OK] All 16384 slots covered.");
  for (let i = 0; i < 100 && !ports.every((port) => /cluster_state:ok/.test(redisCli(port, "CLUSTER", "INFO"))); i++)
    await sleep(100);
  worker = await startWranglerDev({
    RATELIMIT_ADMIN_TOKEN: ADMIN_TOKEN,
    BACKEND_TYPE: "redis",
    KVSTORE_TYPE: "cluster",
    KVSTORE_URL: ports.map((port) => `127.0.0.1:${port}`).join(","),
    KVSTORE_PIPELINE_WINDOW: "150us",
    KVSTORE_POOL_SIZE: "1",
    KVSTORE_TIMEOUT: "5s",
  });
  await installFiles(worker, { "cl.yaml": CONFIG });
});

afterAll(async () => {
  await worker?.stop();
  for (const node of nodes) await node.stop();
  temp?.remove();
});

async function post(...values: string[]) {
  const response = await fetch(`${worker.url}/json`, {
    method: "POST",
    body: JSON.stringify({
      domain: "cl",
      descriptors: values.map((value) => ({ entries: [{ key: "client", value }] })),
    }),
  });
  const text = await response.text();
  return { status: response.status, body: response.status === 500 ? text : JSON.parse(text) };
}

const get = (port: number, key: string) => redisCli(port, "GET", key);

describe("KVSTORE_TYPE=cluster", () => {
  it("counts every key of a request on the node owning its slot", async () => {
    // Two values per node, chosen by slot so that every node gets some.
    const values: string[] = [];
    const perNode = new Map<number, number>();
    for (let i = 0; values.length < 6; i++) {
      const owner = ownerOf(keySlot(keyOf(`spread-${i}`)));
      if ((perNode.get(owner) ?? 0) < 2) {
        perNode.set(owner, (perNode.get(owner) ?? 0) + 1);
        values.push(`spread-${i}`);
      }
    }
    expect((await post(...values)).body.statuses.map((s: any) => s.limitRemaining)).toEqual(Array(6).fill(999));
    const answer = await post(...values);
    expect(answer.body.statuses.map((s: any) => s.limitRemaining)).toEqual(Array(6).fill(998));
    const owners = values.map((value) => ownerOf(keySlot(keyOf(value))));
    expect(new Set(owners).size).toBe(3);
    values.forEach((value, i) => {
      expect(get(owners[i], keyOf(value))).toBe("2");
      expect(Number(redisCli(owners[i], "TTL", keyOf(value)))).toBeGreaterThan(86_000);
    });
  });

  it("follows MOVED after a slot changed owner", async () => {
    const key = keyOf("moving");
    const slot = keySlot(key);
    expect((await post("moving")).body.statuses[0].limitRemaining).toBe(999);
    const from = ownerOf(slot);
    const to = ports.find((port) => port !== from)!;
    redisCli(to, "CLUSTER", "SETSLOT", String(slot), "IMPORTING", nodeId(from));
    redisCli(from, "CLUSTER", "SETSLOT", String(slot), "MIGRATING", nodeId(to));
    expect(redisCli(from, "MIGRATE", "127.0.0.1", String(to), key, "0", "5000")).toBe("OK");
    setSlotEverywhere(slot, to);
    // The Worker still maps the slot to the old owner: it gets MOVED and counts on the new one.
    expect((await post("moving")).body.statuses[0].limitRemaining).toBe(998);
    expect(get(to, key)).toBe("2");
    expect((await post("moving")).body.statuses[0].limitRemaining).toBe(997);
  });

  it("follows ASK while a slot is being migrated", async () => {
    // A key never counted yet, in a slot now migrating: the old owner does not have it, so it answers ASK.
    const key = keyOf("asking");
    const slot = keySlot(key);
    const from = ownerOf(slot);
    const to = ports.find((port) => port !== from)!;
    redisCli(to, "CLUSTER", "SETSLOT", String(slot), "IMPORTING", nodeId(from));
    redisCli(from, "CLUSTER", "SETSLOT", String(slot), "MIGRATING", nodeId(to));
    expect((await post("asking")).body.statuses[0].limitRemaining).toBe(999);
    // The counter went to the importing node, not to the (still) owning one.
    expect([
      redisCli(to, "CLUSTER", "COUNTKEYSINSLOT", String(slot)),
      redisCli(from, "CLUSTER", "COUNTKEYSINSLOT", String(slot)),
    ]).toEqual(["1", "0"]);
    expect(redisCli(to, "-c", "GET", key)).toBe("1");
    setSlotEverywhere(slot, to);
    expect((await post("asking")).body.statuses[0].limitRemaining).toBe(998);
  });
});
