// The memcached text protocol, as far as counting needs it (get, incr, add), and the key rules memcached
// enforces: at most 250 bytes, no whitespace or control characters. Pure code; replies are parsed from bytes.

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export const MAX_KEY_BYTES = 250;

/** A failure with addresses, durations and the server's error text: logged for the operator, never shown to callers. */
export class MemcacheError extends Error {
  override name = "MemcacheError";
}

/** Why memcached cannot hold this key, or undefined when it can. */
export function keyProblem(key: string): string | undefined {
  const shown = key.length > 80 ? `${key.slice(0, 80)}...` : key;
  const bytes = encoder.encode(key);
  if (bytes.length > MAX_KEY_BYTES) {
    return `objcache: cache key "${shown}" is ${bytes.length} bytes long; memcached keys are at most ${MAX_KEY_BYTES}`;
  }
  if (bytes.some((byte) => byte <= 0x20 || byte === 0x7f)) {
    return `objcache: cache key ${JSON.stringify(shown)} holds whitespace or a control character, which memcached keys cannot (descriptor keys and values must not contain them)`;
  }
  return undefined;
}

export type Request =
  | { op: "get"; keys: string[] }
  | { op: "incr"; key: string; delta: number }
  | { op: "add"; key: string; value: number; ttlSeconds: number };

export function encodeRequest(request: Request): string {
  switch (request.op) {
    case "get":
      return `get ${request.keys.join(" ")}\r\n`;
    case "incr":
      return `incr ${request.key} ${request.delta}\r\n`;
    case "add": {
      const data = String(request.value);
      return `add ${request.key} 0 ${request.ttlSeconds} ${encoder.encode(data).length}\r\n${data}\r\n`;
    }
  }
}

export class MemcacheReplyError {
  constructor(readonly message: string) {}
}

/** get: the values found, by key; incr: the new value, or "NOT_FOUND"; add: "STORED" or "NOT_STORED". */
export type Reply = Map<string, string> | number | string | MemcacheReplyError;

export class MemcacheProtocolError extends Error {
  override name = "MemcacheProtocolError";
}

const ERROR_LINE = /^(ERROR|CLIENT_ERROR|SERVER_ERROR)\b ?(.*)$/;

/** Accumulates bytes; `next(op)` returns the reply to a request of that kind once it has fully arrived. */
export class ReplyParser {
  private buffer: Uint8Array = new Uint8Array(0);
  private offset = 0;

  push(chunk: Uint8Array): void {
    const rest = this.buffer.subarray(this.offset);
    const joined = new Uint8Array(rest.length + chunk.length);
    joined.set(rest, 0);
    joined.set(chunk, rest.length);
    this.buffer = joined;
    this.offset = 0;
  }

  private line(from: number): { text: string; end: number } | undefined {
    for (let i = from; i + 1 < this.buffer.length; i++) {
      if (this.buffer[i] === 13 && this.buffer[i + 1] === 10)
        return { text: decoder.decode(this.buffer.subarray(from, i)), end: i + 2 };
    }
    return undefined;
  }

  next(op: Request["op"]): { reply: Reply } | undefined {
    const first = this.line(this.offset);
    if (!first) return undefined;
    const error = ERROR_LINE.exec(first.text);
    if (error) {
      this.offset = first.end;
      return { reply: new MemcacheReplyError(error[2] ? `${error[1]} ${error[2]}` : error[1]) };
    }
    if (op !== "get") {
      this.offset = first.end;
      if (op === "incr" && /^\d+$/.test(first.text)) return { reply: Number(first.text) };
      return { reply: first.text };
    }
    const values = new Map<string, string>();
    let line: { text: string; end: number } | undefined = first;
    for (;;) {
      if (!line) return undefined;
      if (line.text === "END") {
        this.offset = line.end;
        return { reply: values };
      }
      const value = /^VALUE (\S+) \d+ (\d+)(?: \d+)?$/.exec(line.text);
      if (!value)
        throw new MemcacheProtocolError(`unexpected line in a get reply: ${JSON.stringify(line.text.slice(0, 40))}`);
      const start = line.end;
      const end = start + Number(value[2]);
      if (end + 2 > this.buffer.length) return undefined;
      values.set(value[1], decoder.decode(this.buffer.subarray(start, end)));
      line = this.line(end + 2);
    }
  }
}
