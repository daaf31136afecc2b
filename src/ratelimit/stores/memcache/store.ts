// The CounterStore over the object cache (memcached), counting as the reference does: read every counter with one
// `get` per node, decide from the values read plus this request's hits, and increment after answering (waitUntil):
// `incr`, and on a miss `add` with the window's expiry (then `incr` again if another caller added it first). So
// concurrent requests may briefly exceed a limit, as the spec warns. A node's connection lives for one request.
import { logError } from "../../../shared/log";
import { type CounterIncrement, type CounterStore, PublicStoreError } from "../../core/types";
import { type Address, formatAddress } from "../socket";
import { MemcacheConnection, MemcacheError } from "./connection";
import { pickNode } from "./hashing";
import { keyProblem, MemcacheReplyError, type Reply, type Request } from "./protocol";
import type { MemcacheOptions } from "./options";
import { lookupSrv } from "./srv";

/** Per isolate: the nodes an SRV record named, and when (refreshed after OBJCACHE_SRV_REFRESH when that is > 0). */
const srvNodes = new Map<string, { nodes: Address[]; at: number }>();

async function nodesOf(options: MemcacheOptions): Promise<Address[]> {
  if (options.nodes) return options.nodes;
  const { name, refreshMs, dohUrl } = options.srv!;
  const known = srvNodes.get(name);
  if (known && (refreshMs === 0 || Date.now() - known.at < refreshMs)) return known.nodes;
  try {
    const nodes = await lookupSrv(name, dohUrl, options.timeoutMs);
    srvNodes.set(name, { nodes, at: Date.now() });
    return nodes;
  } catch (error) {
    if (!known) throw error;
    // Keep counting on the nodes we know; try the lookup again on the next request.
    logError("ratelimit: objcache SRV refresh failed, keeping the known nodes", error);
    return known.nodes;
  }
}

/** memcached reads an expiry above 30 days as a Unix time, so long windows are sent as one. */
const THIRTY_DAYS = 2592000;
const expiryOf = (ttlSeconds: number) =>
  ttlSeconds > THIRTY_DAYS ? Math.floor(Date.now() / 1000) + ttlSeconds : ttlSeconds;

/** The connections of one request, one per node, opened on first use. */
class Session {
  private readonly connections = new Map<string, Promise<MemcacheConnection>>();

  constructor(private readonly options: MemcacheOptions) {}

  async send(node: Address, requests: Request[]): Promise<Reply[]> {
    const where = formatAddress(node);
    let connection = this.connections.get(where);
    if (!connection) {
      connection = MemcacheConnection.open(node, this.options.tls, this.options.timeoutMs);
      connection.catch(() => {});
      this.connections.set(where, connection);
    }
    return (await connection).send(requests);
  }

  close(): void {
    for (const connection of this.connections.values())
      connection.then(
        (c) => c.close(),
        () => {},
      );
  }
}

/**
 * Checks what memcached can count. It has no atomic read-check-write, so the configuration refuses the sliding-window
 * and token-bucket algorithms with this store; an algorithm operation reaching it is a bug, not a request to degrade.
 */
function checkItems(items: readonly CounterIncrement[]): void {
  for (const item of items) {
    if (item.algorithm)
      throw new Error(`objcache: the ${item.algorithm.kind} algorithm is not supported by BACKEND_TYPE=memcache`);
    const problem = keyProblem(item.key);
    // The caller's own key and what memcached accepts: the caller is told what to change.
    if (problem) throw new PublicStoreError(problem);
  }
}

/** Current value of each distinct key (0 when absent), one multi-key get per node. */
async function readAll(session: Session, nodes: Address[], keys: string[]): Promise<Map<string, number>> {
  const byNode = new Map<Address, string[]>();
  for (const key of new Set(keys)) {
    const node = pickNode(key, nodes);
    byNode.set(node, [...(byNode.get(node) ?? []), key]);
  }
  const values = new Map<string, number>();
  await Promise.all(
    [...byNode].map(async ([node, nodeKeys]) => {
      const [reply] = await session.send(node, [{ op: "get", keys: nodeKeys }]);
      // Callers see the server's reply (SERVER_ERROR ...), not the node.
      if (reply instanceof MemcacheReplyError)
        throw new PublicStoreError(`objcache: get failed on ${formatAddress(node)}: ${reply.message}`, reply.message);
      if (!(reply instanceof Map))
        throw new MemcacheError(`objcache: unexpected reply to get from ${formatAddress(node)}`);
      for (const key of nodeKeys) {
        const text = reply.get(key);
        values.set(key, text === undefined ? 0 : Number.parseInt(text.trim(), 10) || 0);
      }
    }),
  );
  return values;
}

/** The increments of one request, after its answer: incr; on a miss add; if someone added first, incr again. */
async function incrementAll(
  session: Session,
  nodes: Address[],
  items: readonly CounterIncrement[],
  jitterMax: number,
): Promise<void> {
  const hitsByKey = new Map<string, { hits: number; ttl: number }>();
  for (const item of items) {
    if (item.hits <= 0) continue;
    const entry = hitsByKey.get(item.key);
    if (entry) entry.hits += item.hits;
    else
      hitsByKey.set(item.key, {
        hits: item.hits,
        ttl: item.windowSeconds + (jitterMax > 0 ? Math.floor(Math.random() * jitterMax) : 0),
      });
  }
  const byNode = new Map<Address, string[]>();
  for (const key of hitsByKey.keys()) {
    const node = pickNode(key, nodes);
    byNode.set(node, [...(byNode.get(node) ?? []), key]);
  }
  await Promise.all(
    [...byNode].map(async ([node, keys]) => {
      const check = (reply: Reply, op: string) => {
        if (reply instanceof MemcacheReplyError)
          throw new MemcacheError(`objcache: ${op} failed on ${formatAddress(node)}: ${reply.message}`);
      };
      const incremented = await session.send(
        node,
        keys.map((key) => ({ op: "incr", key, delta: hitsByKey.get(key)!.hits })),
      );
      incremented.forEach((reply) => check(reply, "incr"));
      const missing = keys.filter((_, i) => incremented[i] === "NOT_FOUND");
      if (missing.length === 0) return;
      const added = await session.send(
        node,
        missing.map((key) => ({
          op: "add",
          key,
          value: hitsByKey.get(key)!.hits,
          ttlSeconds: expiryOf(hitsByKey.get(key)!.ttl),
        })),
      );
      added.forEach((reply) => check(reply, "add"));
      const raced = missing.filter((_, i) => added[i] === "NOT_STORED");
      if (raced.length === 0) return;
      const again = await session.send(
        node,
        raced.map((key) => ({ op: "incr", key, delta: hitsByKey.get(key)!.hits })),
      );
      again.forEach((reply) => check(reply, "incr"));
    }),
  );
}

/**
 * @param defer keeps the asynchronous increments alive after the answer (the request's waitUntil).
 */
export function memcacheCounterStore(options: MemcacheOptions, defer: (work: Promise<unknown>) => void): CounterStore {
  return {
    async increment(items) {
      checkItems(items);
      const nodes = await nodesOf(options);
      const session = new Session(options);
      let current: Map<string, number>;
      try {
        current = await readAll(
          session,
          nodes,
          items.map((item) => item.key),
        );
      } catch (error) {
        session.close();
        throw error;
      }
      // This request's own hits count at once, also when one key appears twice in it.
      const counts = items.map((item) => {
        const after = current.get(item.key)! + item.hits;
        current.set(item.key, after);
        return after;
      });
      defer(
        incrementAll(session, nodes, items, options.jitterMaxSeconds)
          .catch((error) => logError("ratelimit: objcache increment failed", error))
          .finally(() => session.close()),
      );
      return counts;
    },
    async get(items) {
      checkItems(items);
      const nodes = await nodesOf(options);
      const session = new Session(options);
      try {
        const current = await readAll(
          session,
          nodes,
          items.map((item) => item.key),
        );
        return items.map((item) => current.get(item.key)!);
      } finally {
        session.close();
      }
    },
  };
}

/** Whether every node answers a get (HEALTHCHECK_STORE); a failure to reach one is false, never thrown. */
export async function memcacheReachable(options: MemcacheOptions): Promise<boolean> {
  const session = new Session(options);
  try {
    const nodes = await nodesOf(options);
    const replies = await Promise.all(
      nodes.map((node) => session.send(node, [{ op: "get", keys: ["ratelimit_healthcheck_probe"] }])),
    );
    return replies.every(([reply]) => reply instanceof Map);
  } catch {
    return false;
  } finally {
    session.close();
  }
}
