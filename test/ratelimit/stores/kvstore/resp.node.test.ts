// The RESP codec of the key-value store client: commands as bulk-string arrays, replies parsed from bytes that
// arrive in arbitrary chunks.
import { describe, expect, it } from "vitest";
import { encodeCommands, ProtocolError, ReplyError, ReplyParser } from "../../../../src/ratelimit/stores/kvstore/resp";

const bytes = (text: string) => new TextEncoder().encode(text);
const text = (data: Uint8Array) => new TextDecoder().decode(data);

function parseAll(parser: ReplyParser) {
  const replies = [];
  for (let next = parser.next(); next; next = parser.next()) replies.push(next.reply);
  return replies;
}

describe("encodeCommands", () => {
  it("writes each command as an array of bulk strings, lengths in bytes", () => {
    expect(
      text(
        encodeCommands([
          ["INCRBY", "k_é", 3],
          ["EXPIRE", "k_é", 60],
        ]),
      ),
    ).toBe("*3\r\n$6\r\nINCRBY\r\n$4\r\nk_é\r\n$1\r\n3\r\n*3\r\n$6\r\nEXPIRE\r\n$4\r\nk_é\r\n$2\r\n60\r\n");
  });
});

describe("ReplyParser", () => {
  it("parses every RESP2 reply type", () => {
    const parser = new ReplyParser();
    parser.push(
      bytes("+OK\r\n-ERR wrong\r\n:42\r\n:-1\r\n$5\r\nhello\r\n$-1\r\n*2\r\n$1\r\na\r\n:1\r\n*-1\r\n*0\r\n$0\r\n\r\n"),
    );
    expect(parseAll(parser)).toEqual([
      "OK",
      new ReplyError("ERR wrong"),
      42,
      -1,
      "hello",
      null,
      ["a", 1],
      null,
      [],
      "",
    ]);
    expect(parser.pending).toBe(0);
  });

  it("waits for the rest of a reply split across chunks, byte by byte", () => {
    const parser = new ReplyParser();
    const wire = ":7\r\n$6\r\nab\r\ncd\r\n*2\r\n:1\r\n$3\r\nxyz\r\n";
    const seen = [];
    for (const byte of bytes(wire)) {
      parser.push(Uint8Array.of(byte));
      seen.push(...parseAll(parser));
    }
    expect(seen).toEqual([7, "ab\r\ncd", [1, "xyz"]]);
  });

  it("counts bulk lengths in bytes, not characters", () => {
    const parser = new ReplyParser();
    parser.push(bytes("$3\r\né!\r\n"));
    expect(parseAll(parser)).toEqual(["é!"]);
  });

  it("refuses bytes that are not RESP", () => {
    const parser = new ReplyParser();
    parser.push(bytes("HTTP/1.1 400 Bad Request\r\n"));
    expect(() => parser.next()).toThrow(ProtocolError);
    const unterminated = new ReplyParser();
    unterminated.push(bytes("$2\r\nabcd\r\n"));
    expect(() => unterminated.next()).toThrow("bulk string not terminated by CRLF");
  });
});
