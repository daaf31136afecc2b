// What a pool member holds: the pooled connection for one pool's options, and the plain-data form of replies that
// crosses the Durable Object RPC boundary (an error reply becomes `{ error }`).
import { PooledConnection } from "./pool";
import type { RedisPoolOptions } from "./options";
import { type Reply, ReplyError } from "./resp";
import { openTransport } from "./topology";

export type WireReply = string | number | null | { error: string } | WireReply[];

export function toWire(reply: Reply): WireReply {
  if (reply instanceof ReplyError) return { error: reply.message };
  if (Array.isArray(reply)) return reply.map(toWire);
  return reply;
}

/** The pooled connection of member `index` of a pool; CLIENT SETNAME tells its (and its extra) connections apart. */
export function createMember(options: RedisPoolOptions, index: number): PooledConnection {
  const name = `ratelimit-${options.role}-${index}`;
  return new PooledConnection(
    (overflow) =>
      openTransport(options.topology, {
        tls: options.tls,
        timeoutMs: options.timeoutMs,
        auth: options.auth,
        clientName: overflow ? `${name}-extra` : name,
      }),
    { windowMs: options.windowMs, onEmpty: options.onEmpty, waitMs: options.waitMs, timeoutMs: options.timeoutMs },
  );
}
