// One memcached connection for the length of a request (a Worker's sockets die with their request): requests are
// written at once and their replies matched first in first out. A missing reply within the time-out, a closed
// socket or garbage on the wire fails every waiting request and the connection.
import { connect } from "cloudflare:sockets";
import { type Address, formatAddress, withTimeout } from "../kvstore/connection";
import { encodeRequest, ObjcacheError, type Reply, ReplyParser, type Request } from "./protocol";

export { ObjcacheError };

interface Waiting {
  op: Request["op"];
  resolve: (reply: Reply) => void;
  reject: (error: Error) => void;
  timer: ReturnType<typeof setTimeout>;
}

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));
const encoder = new TextEncoder();

export class MemcacheConnection {
  private readonly writer: WritableStreamDefaultWriter<Uint8Array>;
  private readonly parser = new ReplyParser();
  private readonly waiting: Waiting[] = [];
  private failure: Error | undefined;

  private constructor(
    private readonly socket: Socket,
    readonly address: Address,
    private readonly timeoutMs: number,
  ) {
    this.writer = socket.writable.getWriter();
    void this.readLoop(socket.readable.getReader());
  }

  static async open(address: Address, tls: boolean, timeoutMs: number): Promise<MemcacheConnection> {
    const where = formatAddress(address);
    try {
      const socket = connect({ hostname: address.host, port: address.port }, { secureTransport: tls ? "on" : "off", allowHalfOpen: false });
      await withTimeout(socket.opened, timeoutMs, () => `objcache: connecting to ${where} timed out after ${timeoutMs} ms`);
      return new MemcacheConnection(socket, address, timeoutMs);
    } catch (error) {
      throw new ObjcacheError(messageOf(error).startsWith("objcache:") ? messageOf(error) : `objcache: cannot connect to ${where}: ${messageOf(error)}`);
    }
  }

  /** Writes all requests in one write and resolves with their replies, in order. */
  send(requests: readonly Request[]): Promise<Reply[]> {
    if (this.failure) return Promise.reject(this.failure);
    const replies = requests.map(
      (request) =>
        new Promise<Reply>((resolve, reject) => {
          const timer = setTimeout(
            () => this.fail(new ObjcacheError(`objcache: no reply from ${formatAddress(this.address)} within ${this.timeoutMs} ms`)),
            this.timeoutMs,
          );
          this.waiting.push({ op: request.op, resolve, reject, timer });
        }),
    );
    this.writer.write(encoder.encode(requests.map(encodeRequest).join(""))).catch((error) => {
      this.fail(new ObjcacheError(`objcache: writing to ${formatAddress(this.address)} failed: ${messageOf(error)}`));
    });
    return Promise.all(replies);
  }

  close(): void {
    this.fail(new ObjcacheError(`objcache: connection to ${formatAddress(this.address)} closed`));
  }

  private fail(error: Error): void {
    if (this.failure) return;
    this.failure = error;
    for (const waiting of this.waiting.splice(0)) {
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
        if (done) throw new ObjcacheError(`objcache: ${formatAddress(this.address)} closed the connection`);
        this.parser.push(value);
        while (this.waiting.length > 0) {
          const parsed = this.parser.next(this.waiting[0].op);
          if (!parsed) break;
          const head = this.waiting.shift()!;
          clearTimeout(head.timer);
          head.resolve(parsed.reply);
        }
      }
    } catch (error) {
      this.fail(error instanceof ObjcacheError ? error : new ObjcacheError(`objcache: reading from ${formatAddress(this.address)} failed: ${messageOf(error)}`));
    }
  }
}
