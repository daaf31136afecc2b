// One RESP connection over cloudflare:sockets, on the shared pipelined socket: commands are written at once, in call
// order, and replies are matched to their callers first-in first-out, so many callers can share the socket. A
// connection that failed (time-out, close, garbage) is done for good; its owner opens a new one.
import { connect } from "cloudflare:sockets";
import { type Address, formatAddress, messageOf, PipelinedSocket, type Waiter, withTimeout } from "../socket";
import { type Command, encodeCommands, type Reply, ReplyError, ReplyParser } from "./resp";

export { type Address, formatAddress };

/**
 * A counter store failure, composed here from addresses, durations and the server's own error replies, never from
 * credentials: logged for the operator, never shown to callers (addresses, node lists).
 */
export class RedisError extends Error {
  override name = "RedisError";
  constructor(
    message: string,
    /** True when nothing of the failed call reached the server, so it may be tried again without double counting. */
    readonly notSent = false,
  ) {
    super(message);
  }
}

export interface Credentials {
  /** Absent for the single-password form (`requirepass` or the default user). */
  username?: string;
  password: string;
}

export interface ConnectionOptions {
  tls: boolean;
  timeoutMs: number;
  auth?: Credentials;
  /** CLIENT SETNAME, so operators (and tests) can tell the pool's connections apart in CLIENT LIST. */
  clientName?: string;
}

/** One call: its replies are complete once `count` have come. */
interface InFlight extends Waiter {
  count: number;
  replies: Reply[];
  resolve: (replies: Reply[]) => void;
}

/** `work`, or a RedisError with `message()` after `ms`; `notSent` when the commands cannot have reached the server. */
export const redisTimeout = <T>(work: Promise<T>, ms: number, message: () => string, notSent = false): Promise<T> =>
  withTimeout(work, ms, () => new RedisError(message(), notSent));

export class RespConnection extends PipelinedSocket<InFlight> {
  private readonly parser = new ReplyParser();

  private constructor(socket: Socket, address: Address, timeoutMs: number) {
    super(socket, address, timeoutMs, { prefix: "kvstore", type: RedisError });
  }

  /** Dials, then authenticates and names the connection; fails with a RedisError within the time-out. */
  static async open(address: Address, options: ConnectionOptions): Promise<RespConnection> {
    const where = formatAddress(address);
    let socket: Socket;
    try {
      socket = connect(
        { hostname: address.host, port: address.port },
        { secureTransport: options.tls ? "on" : "off", allowHalfOpen: false },
      );
      await redisTimeout(
        socket.opened,
        options.timeoutMs,
        () => `kvstore: connecting to ${where} timed out after ${options.timeoutMs} ms`,
        true,
      );
    } catch (error) {
      if (error instanceof RedisError) throw error;
      throw new RedisError(`kvstore: cannot connect to ${where}: ${messageOf(error)}`, true);
    }
    const connection = new RespConnection(socket, address, options.timeoutMs);
    const handshake: Command[] = [];
    if (options.auth) {
      handshake.push(
        options.auth.username === undefined
          ? ["AUTH", options.auth.password]
          : ["AUTH", options.auth.username, options.auth.password],
      );
    }
    if (options.clientName) handshake.push(["CLIENT", "SETNAME", options.clientName]);
    if (handshake.length > 0) {
      let replies: Reply[];
      try {
        replies = await connection.send(handshake);
      } catch (error) {
        connection.close();
        throw new RedisError(`kvstore: handshake with ${where} failed: ${messageOf(error)}`, true);
      }
      // A failed CLIENT SETNAME (an ACL without it) is harmless; a failed AUTH is not.
      if (options.auth && replies[0] instanceof ReplyError) {
        connection.close();
        throw new RedisError(`kvstore: authentication with ${where} failed: ${replies[0].message}`, true);
      }
    }
    return connection;
  }

  /** Writes the commands now and resolves with their replies, in order. */
  send(commands: readonly Command[]): Promise<Reply[]> {
    if (this.failed) return Promise.reject(this.failed);
    if (commands.length === 0) return Promise.resolve([]);
    return new Promise<Reply[]>((resolve, reject) => {
      this.waiting.push({ count: commands.length, replies: [], resolve, reject, timer: this.replyTimer() });
      this.write(encodeCommands(commands));
    });
  }

  protected consume(bytes: Uint8Array): void {
    this.parser.push(bytes);
    for (let next = this.parser.next(); next; next = this.parser.next()) {
      const head = this.waiting[0];
      if (!head) throw this.error(`${formatAddress(this.address)} sent a reply nobody asked for`);
      head.replies.push(next.reply);
      if (head.replies.length === head.count) this.settleOldest().resolve(head.replies);
    }
  }
}
