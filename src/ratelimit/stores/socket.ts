// A socket (cloudflare:sockets) shared by many callers first in first out: requests are written at once, in call
// order, and replies go to the oldest caller waiting. A reply missing after the time-out, a closed socket or garbage
// on the wire fails every caller waiting and the socket for good; its owner opens a new one. The key-value store's
// RESP connection and the object cache's memcached connection build on it, and share its addresses and time-outs.
import { invalidSetting } from "../../shared/settings";

export interface Address {
  host: string;
  port: number;
}

export const formatAddress = (address: Address) =>
  address.host.includes(":") ? `[${address.host}]:${address.port}` : `${address.host}:${address.port}`;

/**
 * `host:port` or `[ipv6]:port`, from the setting `variable` (named in the error). Throws SettingsError, which never
 * quotes the text: a URL given by mistake may carry the store's password.
 */
export function parseHostPort(text: string, variable: string): Address {
  const match = /^\[([^\]]+)\]:(\d+)$/.exec(text.trim()) ?? /^([^:\s]+):(\d+)$/.exec(text.trim());
  const port = match ? Number(match[2]) : NaN;
  if (!match || !(port > 0 && port < 65536)) {
    const hint = text.includes("://") ? ", without a scheme (credentials go in the AUTH settings)" : "";
    throw invalidSetting("ratelimit", variable, `expected host:port with a port from 1 to 65535${hint}`);
  }
  return { host: match[1], port };
}

/** Settles like `work`, or rejects with the store's `timeoutError()` when `ms` pass first. */
export function withTimeout<T>(work: Promise<T>, ms: number, timeoutError: () => Error): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(timeoutError()), ms);
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

export const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** One caller waiting for its replies. */
export interface Waiter {
  reject: (error: Error) => void;
  timer: ReturnType<typeof setTimeout>;
}

/** How a store names its failures: its message prefix ("kvstore") and its error class (safe to show callers). */
export interface SocketErrors {
  prefix: string;
  type: new (message: string) => Error;
}

export abstract class PipelinedSocket<W extends Waiter> {
  /** Callers waiting, oldest first. */
  protected readonly waiting: W[] = [];
  private readonly writer: WritableStreamDefaultWriter<Uint8Array>;
  private failure: Error | undefined;

  protected constructor(
    private readonly socket: Socket,
    readonly address: Address,
    protected readonly timeoutMs: number,
    private readonly errors: SocketErrors,
  ) {
    this.writer = socket.writable.getWriter();
    void this.readLoop(socket.readable.getReader());
  }

  /** True until the socket failed or was closed. */
  get usable(): boolean {
    return this.failure === undefined;
  }

  /** The failure that ended the socket, if it has ended. */
  protected get failed(): Error | undefined {
    return this.failure;
  }

  /** A store error with the store's prefix. */
  protected error(message: string): Error {
    return new this.errors.type(`${this.errors.prefix}: ${message}`);
  }

  /** A time-out for one waiter: no reply within it fails the socket (and so every waiter). */
  protected replyTimer(): ReturnType<typeof setTimeout> {
    return setTimeout(
      () => this.fail(this.error(`no reply from ${formatAddress(this.address)} within ${this.timeoutMs} ms`)),
      this.timeoutMs,
    );
  }

  protected write(bytes: Uint8Array): void {
    this.writer.write(bytes).catch((error) => {
      this.fail(this.error(`writing to ${formatAddress(this.address)} failed: ${messageOf(error)}`));
    });
  }

  /** Removes the oldest waiter (its replies are complete) and stops its time-out. */
  protected settleOldest(): W {
    const head = this.waiting.shift()!;
    clearTimeout(head.timer);
    return head;
  }

  /** Takes the bytes just read and settles the waiters whose replies are complete; throws on garbage. */
  protected abstract consume(bytes: Uint8Array): void;

  close(): void {
    this.fail(this.error(`connection to ${formatAddress(this.address)} closed`));
  }

  protected fail(error: Error): void {
    if (this.failure) return;
    this.failure = error;
    for (const waiter of this.waiting.splice(0)) {
      clearTimeout(waiter.timer);
      waiter.reject(error);
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
        if (done) throw this.error(`${formatAddress(this.address)} closed the connection`);
        this.consume(value);
      }
    } catch (error) {
      this.fail(
        error instanceof this.errors.type
          ? error
          : this.error(`reading from ${formatAddress(this.address)} failed: ${messageOf(error)}`),
      );
    }
  }
}
