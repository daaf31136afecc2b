// The CounterStore over the key-value store, counting as the reference does: per request one pipeline of
// INCRBY key hits + EXPIRE key (window + jitter) for every counter, all in one round trip; reads are GETs. Counters of
// per-second limits go to the per-second store when there is one. Calls go to a pool member (a Durable Object
// holding a connection); with a pool size of 0 each call opens its own connection instead.
import type { CounterIncrement, CounterStore } from "../../core/types";
import { windowSeconds } from "../../core/units";
import type { KvstoreConnection } from "../../../../durable-objects/kvstore-connection";
import { KvstoreError, kvstoreTimeout } from "./connection";
import { createMember, toWire, type WireReply } from "./member";
import type { KvstoreOptions, KvstorePoolOptions } from "./options";
import type { Command } from "./resp";

type Namespace = DurableObjectNamespace<KvstoreConnection>;

/** The member's RPC methods, typed by hand: the generated RPC types of recursive replies are too deep for tsc. */
interface MemberStub {
  run(
    options: KvstorePoolOptions,
    index: number,
    commands: Command[],
  ): Promise<{ replies: WireReply[] } | { failure: string }>;
  active(options: KvstorePoolOptions, index: number, connect: boolean): Promise<boolean>;
}

const member = (namespace: Namespace, pool: KvstorePoolOptions, index: number) =>
  namespace.getByName(memberName(pool, index)) as unknown as MemberStub;

/** Object name of pool member `index`: the pool's settings hash, so a settings change gets fresh connections. */
export const memberName = (pool: KvstorePoolOptions, index: number) => `${pool.role}-${pool.fingerprint}-${index}`;

async function runOnPool(namespace: Namespace, pool: KvstorePoolOptions, commands: Command[]): Promise<WireReply[]> {
  if (pool.poolSize === 0) {
    // No pool: this request's own connection, closed when its answer is in.
    const own = createMember(pool, 0);
    try {
      const replies = await kvstoreTimeout(
        own.run(commands),
        pool.timeoutMs,
        () => `kvstore: no answer within ${pool.timeoutMs} ms`,
      );
      return replies.map(toWire);
    } finally {
      own.close();
    }
  }
  const index = Math.floor(Math.random() * pool.poolSize);
  const answer = await kvstoreTimeout(
    member(namespace, pool, index).run(pool, index, commands),
    pool.timeoutMs,
    () => `kvstore: no answer within ${pool.timeoutMs} ms`,
  );
  if ("failure" in answer) throw new KvstoreError(answer.failure);
  return answer.replies;
}

function integerReply(reply: WireReply | undefined, command: string): number {
  if (typeof reply === "number") return reply;
  if (reply !== null && typeof reply === "object" && "error" in reply) throw new KvstoreError(reply.error);
  if (reply === null && command === "GET") return 0;
  if (typeof reply === "string" && /^-?\d+$/.test(reply)) return Number(reply);
  throw new KvstoreError(`kvstore: unexpected reply to ${command}: ${JSON.stringify(reply)}`);
}

export interface KvstoreCounterStore extends CounterStore {
  /** True when every pool (main, and the per-second one) holds at least one open connection or can open one. */
  healthy(): Promise<boolean>;
}

export function kvstoreCounterStore(namespace: Namespace, options: KvstoreOptions): KvstoreCounterStore {
  const pools = [options.main, ...(options.perSecond ? [options.perSecond] : [])];

  /** Sends each item's commands to its pool (all of a pool's in one call) and returns each item's replies. */
  async function perPool(
    items: CounterIncrement[],
    commandsOf: (item: CounterIncrement) => Command[],
  ): Promise<WireReply[][]> {
    const groups = new Map<KvstorePoolOptions, number[]>();
    items.forEach((item, position) => {
      const pool = options.perSecond && windowSeconds(item) === 1 ? options.perSecond : options.main;
      groups.set(pool, [...(groups.get(pool) ?? []), position]);
    });
    const results = new Array<WireReply[]>(items.length);
    await Promise.all(
      [...groups].map(async ([pool, positions]) => {
        const perItem = positions.map((position) => commandsOf(items[position]));
        const replies = await runOnPool(namespace, pool, perItem.flat());
        let at = 0;
        positions.forEach((position, i) => {
          results[position] = replies.slice(at, at + perItem[i].length);
          at += perItem[i].length;
        });
      }),
    );
    return results;
  }

  const jitter = () => (options.jitterMaxSeconds > 0 ? Math.floor(Math.random() * options.jitterMaxSeconds) : 0);

  return {
    async increment(items) {
      const replies = await perPool(items, (item) => [
        ["INCRBY", item.key, item.hits],
        ["EXPIRE", item.key, windowSeconds(item) + jitter()],
      ]);
      return replies.map(([incremented, expired]) => {
        const count = integerReply(incremented, "INCRBY");
        integerReply(expired, "EXPIRE");
        return count;
      });
    },
    async get(items) {
      const replies = await perPool(items, (item) => [["GET", item.key]]);
      return replies.map(([value]) => integerReply(value, "GET"));
    },
    async healthy() {
      const states = await Promise.all(
        pools.map(async (pool) => {
          if (pool.poolSize === 0) {
            const member = createMember(pool, 0);
            try {
              return await kvstoreTimeout(member.active(true), pool.timeoutMs, () => "timeout").catch(() => false);
            } finally {
              member.close();
            }
          }
          const answers = await Promise.all(
            Array.from({ length: pool.poolSize }, (_, index) =>
              kvstoreTimeout(
                member(namespace, pool, index).active(pool, index, true),
                pool.timeoutMs,
                () => "timeout",
              ).catch(() => false),
            ),
          );
          return answers.some(Boolean);
        }),
      );
      return states.every(Boolean);
    },
  };
}
