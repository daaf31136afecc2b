// RESP2, the Redis wire protocol: commands encoded as arrays of bulk strings, and an incremental reply parser
// that works on bytes (bulk lengths are byte counts), fed whatever chunks the socket delivers. Pure code.

/** One command: the name and its arguments, e.g. ["INCRBY", key, 3]. */
export type Command = (string | number)[];

/** An error reply (`-ERR ...`): a value, not a thrown error, so one failed command does not hide the others. */
export class ReplyError {
  constructor(readonly message: string) {}
}

export type Reply = string | number | null | ReplyError | Reply[];

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const CR = 13;
const LF = 10;

/** Encodes commands back to back, ready for one write. */
export function encodeCommands(commands: readonly Command[]): Uint8Array {
  let text = "";
  for (const command of commands) {
    text += `*${command.length}\r\n`;
    for (const argument of command) {
      const value = String(argument);
      text += `$${encoder.encode(value).length}\r\n${value}\r\n`;
    }
  }
  return encoder.encode(text);
}

/** Thrown when the bytes are not RESP: the connection can no longer be trusted. */
export class ProtocolError extends Error {
  override name = "ProtocolError";
}

/**
 * Accumulates bytes and hands out complete replies in order. `next()` returns undefined until a whole
 * reply has arrived; partial input stays buffered for the following chunk.
 */
export class ReplyParser {
  private buffer: Uint8Array = new Uint8Array(0);
  private offset = 0;

  push(chunk: Uint8Array): void {
    if (this.offset >= this.buffer.length) {
      this.buffer = chunk;
    } else {
      const rest = this.buffer.subarray(this.offset);
      const joined = new Uint8Array(rest.length + chunk.length);
      joined.set(rest, 0);
      joined.set(chunk, rest.length);
      this.buffer = joined;
    }
    this.offset = 0;
  }

  /** The next complete reply, or undefined when more bytes are needed. */
  next(): { reply: Reply } | undefined {
    const parsed = this.parse(this.offset);
    if (parsed === undefined) return undefined;
    this.offset = parsed.end;
    return { reply: parsed.reply };
  }

  /** Bytes received but not yet consumed by a complete reply. */
  get pending(): number {
    return this.buffer.length - this.offset;
  }

  private lineEnd(from: number): number {
    for (let i = from; i + 1 < this.buffer.length; i++) {
      if (this.buffer[i] === CR && this.buffer[i + 1] === LF) return i;
    }
    return -1;
  }

  private parse(at: number): { reply: Reply; end: number } | undefined {
    if (at >= this.buffer.length) return undefined;
    const eol = this.lineEnd(at + 1);
    if (eol < 0) return undefined;
    const type = this.buffer[at];
    const line = decoder.decode(this.buffer.subarray(at + 1, eol));
    const afterLine = eol + 2;
    switch (type) {
      case 0x2b: // '+'
        return { reply: line, end: afterLine };
      case 0x2d: // '-'
        return { reply: new ReplyError(line), end: afterLine };
      case 0x3a: // ':'
        return { reply: integer(line), end: afterLine };
      case 0x24: {
        // '$'
        const length = integer(line);
        if (length < 0) return { reply: null, end: afterLine };
        const end = afterLine + length + 2;
        if (end > this.buffer.length) return undefined;
        if (this.buffer[end - 2] !== CR || this.buffer[end - 1] !== LF)
          throw new ProtocolError("bulk string not terminated by CRLF");
        return { reply: decoder.decode(this.buffer.subarray(afterLine, afterLine + length)), end };
      }
      case 0x2a: {
        // '*'
        const count = integer(line);
        if (count < 0) return { reply: null, end: afterLine };
        const items: Reply[] = [];
        let position = afterLine;
        for (let i = 0; i < count; i++) {
          const item = this.parse(position);
          if (item === undefined) return undefined;
          items.push(item.reply);
          position = item.end;
        }
        return { reply: items, end: position };
      }
      default:
        throw new ProtocolError(`unexpected reply type byte ${type}`);
    }
  }
}

function integer(text: string): number {
  if (!/^-?\d+$/.test(text)) throw new ProtocolError(`malformed integer ${JSON.stringify(text.slice(0, 20))}`);
  return Number(text);
}

/**
 * The key a counting command works on, for routing in a cluster: its first argument, or for a script call (EVAL and
 * EVALSHA name the script, then the number of keys, then the keys) its first key.
 */
export function commandKey(command: Command): string | undefined {
  const name = String(command[0]).toUpperCase();
  if (name === "EVAL" || name === "EVALSHA") return Number(command[2]) > 0 ? String(command[3]) : undefined;
  return command.length > 1 ? String(command[1]) : undefined;
}
