// The CounterStore over the key-value store: a request's counters go in one pipeline, one round trip, and a
// sliding-window or token-bucket operation is one call of its Lua script (scripts.ts), so its read, check and write are
// one atomic step. Calls go to a pool member (a Durable Object holding a connection); with a pool size of 0 each call
// opens its own connection instead.
import { CLOSED_WINDOW_GRACE_MS } from "../../core/counter-table";
import {
  type AlgorithmReply,
  type CounterIncrement,
  type CounterReply,
  type CounterStore,
  PublicStoreError,
  type WindowsOperation,
} from "../../core/types";
import type { KvstoreConnection } from "../../../../durable-objects/kvstore-connection";
import { RedisError, redisTimeout } from "./connection";
import { createMember, toWire, type WireReply } from "./member";
import type { RedisOptions, RedisPoolOptions } from "./options";
import type { Command } from "./resp";
import {
  type ScriptRef,
  scriptShas,
  slidingWindowCommand,
  SLIDING_WINDOW_SCRIPT,
  TOKEN_BUCKET_SCRIPT,
  tokenBucketCommand,
  WINDOWS_SCRIPT,
  windowsCommand,
} from "./scripts";

// Fixed windows count as the reference does: per request one pipeline of INCRBY key hits + EXPIRE key (window + jitter)
// for every counter; reads are GETs. Scripts run as EVALSHA, and as EVAL, once, in a second round trip, for the items
// the server answers NOSCRIPT (its script cache was flushed, or a failover or a new cluster node). Reads run the
// scripts with 0 hits. Counters of per-second limits go to the per-second store when there is one.
//
// Key names: fixed counters and token buckets use the cache key as it is. A sliding window's two keys (its current
// and previous windows) are stored as `{<counter name>}<window start>`, the counter name as a hash tag, so that a
// cluster keeps both in one slot (a script may only touch keys of one slot); always, not only in a cluster, so that
// names do not depend on the topology. (A counter name starting with `}`, possible only with an empty
// CACHE_KEY_PREFIX and a domain starting with `}`, leaves the tag empty: in a cluster the script then fails with
// CROSSSLOT.) A sliding window's current key expires after its life (two windows) plus jitter, a token bucket's
// after its TAT plus the Durable Object store's grace for callers whose clocks run behind (CLOSED_WINDOW_GRACE_MS)
// plus jitter; a refused operation writes nothing. A descriptor's several windows (additional_limits) are one call of
// the windows script, every key named with the counter name as a hash tag, always on the main store (one script call
// touches one server).

type Namespace = DurableObjectNamespace<KvstoreConnection>;

/** The member's RPC methods, typed by hand: the generated RPC types of recursive replies are too deep for tsc. */
interface MemberStub {
  run(
    options: RedisPoolOptions,
    index: number,
    commands: Command[],
  ): Promise<{ replies: WireReply[] } | { failure: string }>;
  active(options: RedisPoolOptions, index: number, connect: boolean): Promise<boolean>;
}

const member = (namespace: Namespace, pool: RedisPoolOptions, index: number) =>
  namespace.getByName(memberName(pool, index)) as unknown as MemberStub;

/** Object name of pool member `index`: the pool's settings hash, so a settings change gets fresh connections. */
export const memberName = (pool: RedisPoolOptions, index: number) => `${pool.role}-${pool.fingerprint}-${index}`;

async function runOnPool(namespace: Namespace, pool: RedisPoolOptions, commands: Command[]): Promise<WireReply[]> {
  if (pool.poolSize === 0) {
    // No pool: this request's own connection, closed when its answer is in.
    const own = createMember(pool, 0);
    try {
      const replies = await redisTimeout(
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
  const answer = await redisTimeout(
    member(namespace, pool, index).run(pool, index, commands),
    pool.timeoutMs,
    () => `kvstore: no answer within ${pool.timeoutMs} ms`,
  );
  if ("failure" in answer) throw new RedisError(answer.failure);
  return answer.replies;
}

/** A server's error reply, which callers see as the reference shows it; a redirect without the node it names. */
const replyFailure = (error: string) => new PublicStoreError(error, error.replace(/^(MOVED|ASK) .*/, "$1"));

const errorOf = (reply: WireReply | undefined): string | undefined =>
  reply !== null && typeof reply === "object" && "error" in reply ? reply.error : undefined;

function integerReply(reply: WireReply | undefined, command: string): number {
  if (typeof reply === "number") return reply;
  const error = errorOf(reply);
  if (error !== undefined) throw replyFailure(error);
  if (reply === null && command === "GET") return 0;
  if (typeof reply === "string" && /^-?\d+$/.test(reply)) return Number(reply);
  throw new RedisError(`kvstore: unexpected reply to ${command}: ${JSON.stringify(reply)}`);
}

/** A script's reply: an array of `length` integers, the first 0 or 1 (admitted). */
function scriptReply(reply: WireReply | undefined, length: number): number[] {
  const error = errorOf(reply);
  if (error !== undefined) throw replyFailure(error);
  if (
    !Array.isArray(reply) ||
    reply.length !== length ||
    !reply.every((value): value is number => typeof value === "number") ||
    (reply[0] !== 0 && reply[0] !== 1)
  )
    throw new RedisError(`kvstore: unexpected reply to a rate limit script: ${JSON.stringify(reply)}`);
  return reply;
}

/** The windows script's reply: admitted, then each window's values in the order its command named them. */
function windowsReply(operation: WindowsOperation, reply: WireReply | undefined): AlgorithmReply {
  const widths = operation.windows.map((window) => (window.algorithm?.kind === "sliding_window" ? 2 : 1));
  const values = scriptReply(reply, 1 + widths.reduce((sum, width) => sum + width, 0));
  const admitted = values[0] === 1;
  let at = 1;
  const windows = operation.windows.map((window) => {
    const algorithm = window.algorithm;
    if (algorithm?.kind === "sliding_window") {
      at += 2;
      return { kind: "sliding_window" as const, admitted, previous: values[at - 2], current: values[at - 1] };
    }
    const value = values[at++];
    return algorithm?.kind === "token_bucket" ? { kind: "token_bucket" as const, admitted, tatMicros: value } : value;
  });
  return { kind: "windows", admitted, windows };
}

function algorithmReply(item: CounterIncrement, reply: WireReply | undefined): AlgorithmReply {
  if (item.algorithm!.kind === "windows") return windowsReply(item.algorithm!, reply);
  if (item.algorithm!.kind === "sliding_window") {
    const [admitted, previous, current] = scriptReply(reply, 3);
    return { kind: "sliding_window", admitted: admitted === 1, previous, current };
  }
  const [admitted, tatMicros] = scriptReply(reply, 2);
  return { kind: "token_bucket", admitted: admitted === 1, tatMicros };
}

/** The scripts named by their text, for a server that does not hold them. */
const BY_TEXT = {
  slidingWindow: { text: SLIDING_WINDOW_SCRIPT },
  tokenBucket: { text: TOKEN_BUCKET_SCRIPT },
  windows: { text: WINDOWS_SCRIPT },
};

/** The server does not hold the script (yet): nothing was run, so the call may be sent again as EVAL. */
const isNoScript = (reply: WireReply | undefined) => errorOf(reply)?.startsWith("NOSCRIPT") ?? false;

export interface RedisCounterStore extends CounterStore {
  /** True when every pool (main, and the per-second one) holds at least one open connection or can open one. */
  healthy(): Promise<boolean>;
  /** True when every pool's server answers a PING (HEALTHCHECK_STORE). */
  reachable(): Promise<boolean>;
}

export function redisCounterStore(namespace: Namespace, options: RedisOptions): RedisCounterStore {
  const pools = [options.main, ...(options.perSecond ? [options.perSecond] : [])];
  return {
    increment: (items) => run(namespace, options, items, true),
    get: (items) => run(namespace, options, items, false),
    async healthy() {
      const states = await Promise.all(pools.map((pool) => poolHealthy(namespace, pool)));
      return states.every(Boolean);
    },
    async reachable() {
      const replies = await Promise.all(pools.map((pool) => runOnPool(namespace, pool, [["PING"]])));
      return replies.every(([reply]) => reply === "PONG");
    },
  };
}

type Scripts = { slidingWindow: ScriptRef; tokenBucket: ScriptRef; windows: ScriptRef };

/** One pipeline per pool; the script calls the server did not know go again as EVAL, once. */
async function run(
  namespace: Namespace,
  options: RedisOptions,
  items: CounterIncrement[],
  counting: boolean,
): Promise<CounterReply[]> {
  // Fixed windows call no script, so a call of only those never hashes the scripts (nor names them).
  const shas = items.some((item) => item.algorithm) ? await scriptShas() : undefined;
  const scripts: Scripts =
    shas === undefined
      ? BY_TEXT
      : {
          slidingWindow: { sha: shas.slidingWindow },
          tokenBucket: { sha: shas.tokenBucket },
          windows: { sha: shas.windows },
        };
  const replies = await perPool(namespace, options, items, (item) => itemCommands(options, item, counting, scripts));
  const unknown = items.flatMap((item, position) =>
    item.algorithm && isNoScript(replies[position][0]) ? [position] : [],
  );
  if (unknown.length > 0) {
    const again = await perPool(
      namespace,
      options,
      unknown.map((position) => items[position]),
      (item) => itemCommands(options, item, counting, BY_TEXT),
    );
    unknown.forEach((position, i) => (replies[position] = again[i]));
  }
  return items.map((item, position) => counterReply(item, replies[position], counting));
}

/** An item's answer from its replies: the script's, the count after INCRBY (EXPIRE checked), or the GET. */
function counterReply(item: CounterIncrement, [first, second]: WireReply[], counting: boolean): CounterReply {
  if (item.algorithm) return algorithmReply(item, first);
  if (!counting) return integerReply(first, "GET");
  const count = integerReply(first, "INCRBY");
  integerReply(second, "EXPIRE");
  return count;
}

/** Sends each item's commands to its pool (all of a pool's in one call) and returns each item's replies. */
async function perPool(
  namespace: Namespace,
  options: RedisOptions,
  items: CounterIncrement[],
  commandsOf: (item: CounterIncrement) => Command[],
): Promise<WireReply[][]> {
  const groups = new Map<RedisPoolOptions, number[]>();
  items.forEach((item, position) => {
    const pool = options.perSecond && item.perSecond === true ? options.perSecond : options.main;
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

const jitter = (options: RedisOptions) =>
  options.jitterMaxSeconds > 0 ? Math.floor(Math.random() * options.jitterMaxSeconds) : 0;

/** Each item's commands: a fixed counter's INCRBY and EXPIRE (GET to read), or one script call. */
function itemCommands(options: RedisOptions, item: CounterIncrement, counting: boolean, scripts: Scripts): Command[] {
  const hits = counting ? item.hits : 0;
  const { algorithm } = item;
  if (algorithm?.kind === "windows")
    return [
      windowsCommand(
        scripts.windows,
        item.counterName,
        hits,
        algorithm,
        (windowSeconds) => windowSeconds + jitter(options),
        CLOSED_WINDOW_GRACE_MS + jitter(options) * 1000,
      ),
    ];
  if (algorithm?.kind === "sliding_window")
    return [
      slidingWindowCommand(
        scripts.slidingWindow,
        item.counterName,
        item.key,
        hits,
        algorithm,
        item.windowSeconds + jitter(options),
      ),
    ];
  // The TAT is on the caller's clock but the key expires on the server's, and jitter may be 0: without the grace a
  // TAT microseconds ahead would be gone a millisecond later, and a caller whose clock runs behind would find its
  // bucket full while the steps still count tokens in use.
  if (algorithm?.kind === "token_bucket")
    return [
      tokenBucketCommand(
        scripts.tokenBucket,
        item.key,
        hits,
        algorithm,
        CLOSED_WINDOW_GRACE_MS + jitter(options) * 1000,
      ),
    ];
  if (!counting) return [["GET", item.key]];
  return [
    ["INCRBY", item.key, hits],
    ["EXPIRE", item.key, item.windowSeconds + jitter(options)],
  ];
}

/** A pool is healthy when one of its members holds an open connection or can open one (its own, without a pool). */
async function poolHealthy(namespace: Namespace, pool: RedisPoolOptions): Promise<boolean> {
  if (pool.poolSize === 0) {
    const own = createMember(pool, 0);
    try {
      return await redisTimeout(own.active(true), pool.timeoutMs, () => "timeout").catch(() => false);
    } finally {
      own.close();
    }
  }
  const answers = await Promise.all(
    Array.from({ length: pool.poolSize }, (_, index) =>
      redisTimeout(member(namespace, pool, index).active(pool, index, true), pool.timeoutMs, () => "timeout").catch(
        () => false,
      ),
    ),
  );
  return answers.some(Boolean);
}
