// One member of the key-value store's connection pool: it holds a Redis-protocol connection across requests (a
// Worker's sockets die with their request) and shares it among its callers, first in first out. RPC only; the client
// lives in src/ratelimit/stores/redis. The pool is KVSTORE_POOL_SIZE such objects, named by the settings' hash.
import { DurableObject } from "cloudflare:workers";
import type { PooledConnection } from "../src/ratelimit/stores/redis/pool";
import { createMember, toWire, type WireReply } from "../src/ratelimit/stores/redis/member";
import type { RedisPoolOptions } from "../src/ratelimit/stores/redis/options";
import type { Command } from "../src/ratelimit/stores/redis/resp";

export class KvstoreConnection extends DurableObject<Env> {
  private member: PooledConnection | undefined;
  private fingerprint: string | undefined;

  private memberFor(options: RedisPoolOptions, index: number): PooledConnection {
    if (!this.member || this.fingerprint !== options.fingerprint) {
      this.member?.close();
      this.member = createMember(options, index);
      this.fingerprint = options.fingerprint;
    }
    return this.member;
  }

  /**
   * Runs the commands on this member's connection. Error replies come back as `{ error }` values and a failed call
   * as `{ failure }` (a returned value, not a throw, so the runtime does not report it as an uncaught error).
   */
  async run(
    options: RedisPoolOptions,
    index: number,
    commands: Command[],
  ): Promise<{ replies: WireReply[] } | { failure: string }> {
    try {
      return { replies: (await this.memberFor(options, index).run(commands)).map(toWire) };
    } catch (error) {
      return { failure: error instanceof Error ? error.message : String(error) };
    }
  }

  /** Whether this member holds an open connection, dialling first when `connect` and it holds none. */
  async active(options: RedisPoolOptions, index: number, connect: boolean): Promise<boolean> {
    return this.memberFor(options, index).active(connect);
  }
}
