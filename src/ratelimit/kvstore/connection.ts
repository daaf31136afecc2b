// One RESP connection over cloudflare:sockets: commands are written at once, in call order, and replies are
// matched to their callers first-in first-out, so many callers can share the socket (FIFO pipelining). A reply
// that does not come within the time-out, a closed socket or garbage on the wire fails every caller waiting
// and the connection for good; its owner opens a new one.
import { connect } from "cloudflare:sockets";
import { type Command, encodeCommands, type Reply, ReplyError, ReplyParser } from "./resp";

/**
 * A counter store failure whose message is safe to show callers: composed here from addresses, durations and the
 * server's own error replies, never from credentials.
 */
export class KvstoreError extends Error {
  override name = "KvstoreError";
  constructor(
    message: string,
    /** True when nothing of the failed call reached the server, so it may be tried again without double counting. */
    readonly notSent = false,
  ) {
    super(message);
  }
}

export interface Address {
  host: string;
  port: number;
}

export const formatAddress = (address: Address) =>
  address.host.includes(":") ? `[${address.host}]:${address.port}` : `${address.host}:${address.port}`;

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

interface InFlight {
  count: number;
  replies: Reply[];
  resolve: (replies: Reply[]) => void;
  reject: (error: Error) => void;
  timer: ReturnType<typeof setTimeout>;
}

export function withTimeout<T>(work: Promise<T>, ms: number, message: () => string, notSent = false): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new KvstoreError(message(), notSent)), ms);
    work.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

export class RespConnection {
  private readonly writer: WritableStreamDefaultWriter<Uint8Array>;
  private readonly parser = new ReplyParser();
  private readonly inFlight: InFlight[] = [];
  private failure: Error | undefined;

  private constructor(
    private readonly socket: Socket,
    readonly address: Address,
    private readonly timeoutMs: number,
  ) {
    this.writer = socket.writable.getWriter();
    void this.readLoop(socket.readable.getReader());
  }

  /** Dials, then authenticates and names the connection; fails with a KvstoreError within the time-out. */
  static async open(address: Address, options: ConnectionOptions): Promise<RespConnection> {
    const where = formatAddress(address);
    let socket: Socket;
    try {
      socket = connect({ hostname: address.host, port: address.port }, { secureTransport: options.tls ? "on" : "off", allowHalfOpen: false });
      await withTimeout(socket.opened, options.timeoutMs, () => `kvstore: connecting to ${where} timed out after ${options.timeoutMs} ms`, true);
    } catch (error) {
      if (error instanceof KvstoreError) throw error;
      throw new KvstoreError(`kvstore: cannot connect to ${where}: ${messageOf(error)}`, true);
    }
    const connection = new RespConnection(socket, address, options.timeoutMs);
    const handshake: Command[] = [];
    if (options.auth) {
      handshake.push(options.auth.username === undefined ? ["AUTH", options.auth.password] : ["AUTH", options.auth.username, options.auth.password]);
    }
    if (options.clientName) handshake.push(["CLIENT", "SETNAME", options.clientName]);
    if (handshake.length > 0) {
      let replies: Reply[];
      try {
        replies = await connection.send(handshake);
      } catch (error) {
        connection.close();
        throw new KvstoreError(`kvstore: handshake with ${where} failed: ${messageOf(error)}`, true);
      }
      // A failed CLIENT SETNAME (an ACL without it) is harmless; a failed AUTH is not.
      if (options.auth && replies[0] instanceof ReplyError) {
        connection.close();
        throw new KvstoreError(`kvstore: authentication with ${where} failed: ${replies[0].message}`, true);
      }
    }
    return connection;
  }

  /** True until the connection failed or was closed. */
  get usable(): boolean {
    return this.failure === undefined;
  }

  /** Writes the commands now and resolves with their replies, in order. */
  send(commands: readonly Command[]): Promise<Reply[]> {
    if (this.failure) return Promise.reject(this.failure);
    if (commands.length === 0) return Promise.resolve([]);
    return new Promise<Reply[]>((resolve, reject) => {
      const timer = setTimeout(
        () => this.fail(new KvstoreError(`kvstore: no reply from ${formatAddress(this.address)} within ${this.timeoutMs} ms`)),
        this.timeoutMs,
      );
      this.inFlight.push({ count: commands.length, replies: [], resolve, reject, timer });
      this.writer.write(encodeCommands(commands)).catch((error) => {
        this.fail(new KvstoreError(`kvstore: writing to ${formatAddress(this.address)} failed: ${messageOf(error)}`));
      });
    });
  }

  close(): void {
    this.fail(new KvstoreError(`kvstore: connection to ${formatAddress(this.address)} closed`));
  }

  private fail(error: Error): void {
    if (this.failure) return;
    this.failure = error;
    for (const waiting of this.inFlight.splice(0)) {
      clearTimeout(waiting.timer);
      waiting.reject(error);
    }
    try {
      this.writer.releaseLock();
    } catch {}
    this.socket.close().catch(() => {});
  }

  private async readLoop(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<void> {
    try {
      while (!this.failure) {
        const { value, done } = await reader.read();
        if (done) throw new KvstoreError(`kvstore: ${formatAddress(this.address)} closed the connection`);
        this.parser.push(value);
        for (let next = this.parser.next(); next; next = this.parser.next()) {
          const head = this.inFlight[0];
          if (!head) throw new KvstoreError(`kvstore: ${formatAddress(this.address)} sent a reply nobody asked for`);
          head.replies.push(next.reply);
          if (head.replies.length === head.count) {
            this.inFlight.shift();
            clearTimeout(head.timer);
            head.resolve(head.replies);
          }
        }
      }
    } catch (error) {
      this.fail(error instanceof KvstoreError ? error : new KvstoreError(`kvstore: reading from ${formatAddress(this.address)} failed: ${messageOf(error)}`));
    }
  }
}
