// One memcached connection for the length of a request (a Worker's sockets die with their request), on the shared
// pipelined socket: requests are written at once and their replies matched first in first out.
import { connect } from "cloudflare:sockets";
import { type Address, formatAddress, messageOf, PipelinedSocket, type Waiter, withTimeout } from "../socket";
import { encodeRequest, MemcacheError, type Reply, ReplyParser, type Request } from "./protocol";

export { MemcacheError };

/** One request: the parser needs its operation to read the reply. */
interface Waiting extends Waiter {
  op: Request["op"];
  resolve: (reply: Reply) => void;
}

const encoder = new TextEncoder();

export class MemcacheConnection extends PipelinedSocket<Waiting> {
  private readonly parser = new ReplyParser();

  private constructor(socket: Socket, address: Address, timeoutMs: number) {
    super(socket, address, timeoutMs, { prefix: "objcache", type: MemcacheError });
  }

  static async open(address: Address, tls: boolean, timeoutMs: number): Promise<MemcacheConnection> {
    const where = formatAddress(address);
    try {
      const socket = connect(
        { hostname: address.host, port: address.port },
        { secureTransport: tls ? "on" : "off", allowHalfOpen: false },
      );
      await withTimeout(
        socket.opened,
        timeoutMs,
        () => new MemcacheError(`objcache: connecting to ${where} timed out after ${timeoutMs} ms`),
      );
      return new MemcacheConnection(socket, address, timeoutMs);
    } catch (error) {
      throw new MemcacheError(
        messageOf(error).startsWith("objcache:")
          ? messageOf(error)
          : `objcache: cannot connect to ${where}: ${messageOf(error)}`,
      );
    }
  }

  /** Writes all requests in one write and resolves with their replies, in order. */
  send(requests: readonly Request[]): Promise<Reply[]> {
    if (this.failed) return Promise.reject(this.failed);
    const replies = requests.map(
      (request) =>
        new Promise<Reply>((resolve, reject) => {
          this.waiting.push({ op: request.op, resolve, reject, timer: this.replyTimer() });
        }),
    );
    this.write(encoder.encode(requests.map(encodeRequest).join("")));
    return Promise.all(replies);
  }

  protected consume(bytes: Uint8Array): void {
    this.parser.push(bytes);
    while (this.waiting.length > 0) {
      const parsed = this.parser.next(this.waiting[0].op);
      if (!parsed) break;
      this.settleOldest().resolve(parsed.reply);
    }
  }
}
