// The RESP codec of the key-value store client: commands as bulk-string arrays, replies parsed from bytes that
// arrive in arbitrary chunks; the key a command is routed by in a cluster, script calls included, and the script calls
// of the sliding window and the token bucket (scripts.ts): their arguments, and both windows of one counter in one slot.
import { createHash } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  commandKey,
  encodeCommands,
  ProtocolError,
  ReplyError,
  ReplyParser,
} from "../../../../src/ratelimit/stores/redis/resp";
import {
  scriptShas,
  SLIDING_WINDOW_SCRIPT,
  slidingWindowCommand,
  slidingWindowKey,
  TOKEN_BUCKET_SCRIPT,
  WINDOWS_SCRIPT,
  tokenBucketCommand,
} from "../../../../src/ratelimit/stores/redis/scripts";
import { keySlot } from "../../../../src/ratelimit/stores/redis/slots";

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

describe("commandKey", () => {
  it("routes a counting command by its first argument, and a keyless one nowhere", () => {
    expect(commandKey(["INCRBY", "rl_a_60", 3])).toBe("rl_a_60");
    expect(commandKey(["GET", "rl_a_60"])).toBe("rl_a_60");
    expect(commandKey(["PING"])).toBeUndefined();
  });

  it("routes a script call by its first key, after the script and the number of keys", () => {
    expect(commandKey(["EVALSHA", "0123abcd", 2, "{rl_a_}120", "{rl_a_}60", 1, 5, "0.5", 130])).toBe("{rl_a_}120");
    expect(commandKey(["EVAL", "return 1", 1, "rl_a_tb", 1])).toBe("rl_a_tb");
    expect(commandKey(["evalsha", "0123abcd", "1", "rl_a_tb"])).toBe("rl_a_tb");
    expect(commandKey(["EVAL", "return 1", 0])).toBeUndefined();
  });
});

describe("the script calls", () => {
  const sliding = {
    kind: "sliding_window" as const,
    previousKey: "rl_client_10.0.0.1_60",
    limit: 5,
    previousWeight: 0.1 + 0.2,
  };

  it("name both windows under the counter name as a hash tag, the weight as JavaScript's shortest string", () => {
    const command = slidingWindowCommand(
      { sha: "0123abcd" },
      "rl_client_10.0.0.1_",
      "rl_client_10.0.0.1_120",
      2,
      sliding,
      250,
    );
    expect(command).toEqual([
      "EVALSHA",
      "0123abcd",
      2,
      "{rl_client_10.0.0.1_}120",
      "{rl_client_10.0.0.1_}60",
      2,
      5,
      "0.30000000000000004",
      250,
    ]);
    expect(
      slidingWindowCommand({ text: "return 1" }, "rl_client_10.0.0.1_", "rl_client_10.0.0.1_120", 0, sliding, 250),
    ).toEqual([
      "EVAL",
      "return 1",
      2,
      "{rl_client_10.0.0.1_}120",
      "{rl_client_10.0.0.1_}60",
      0,
      5,
      "0.30000000000000004",
      250,
    ]);
    // The cluster routes the call by the current window's key; the previous window's is in the same slot.
    expect(keySlot(commandKey(command)!)).toBe(keySlot("rl_client_10.0.0.1_"));
    expect(keySlot(String(command[4]))).toBe(keySlot("rl_client_10.0.0.1_"));
    expect(() => slidingWindowKey("rl_other_", "rl_client_10.0.0.1_120")).toThrow(
      "kvstore: key rl_client_10.0.0.1_120 does not start with its counter name",
    );
  });

  it("keep any counter's two windows in one slot unless its name starts with the tag's closing brace", () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1 }).filter((name) => !name.startsWith("}")),
        fc.nat(1e9),
        (counterName, start) => {
          const current = slidingWindowKey(counterName, `${counterName}${start + 60}`);
          const previous = slidingWindowKey(counterName, `${counterName}${start}`);
          expect(keySlot(current)).toBe(keySlot(previous));
        },
      ),
    );
  });

  it("call the token bucket with its key, hits, burst, interval, the caller's clock and the expiry margin", () => {
    const operation = {
      kind: "token_bucket" as const,
      burst: 10,
      emissionIntervalMicros: 360_000_000,
      nowMicros: 1_893_456_030_123_456,
    };
    const command = tokenBucketCommand({ sha: "0123abcd" }, "rl_client_a_tb", 1, operation, 7_000);
    expect(command).toEqual([
      "EVALSHA",
      "0123abcd",
      1,
      "rl_client_a_tb",
      1,
      10,
      360_000_000,
      1_893_456_030_123_456,
      7_000,
    ]);
    expect(commandKey(command)).toBe("rl_client_a_tb");
    // Integers this large go on the wire whole, never in exponent form.
    expect(new TextDecoder().decode(encodeCommands([command]))).toContain("$16\r\n1893456030123456\r\n");
  });

  it("name the scripts by their SHA-1", async () => {
    const sha1 = (text: string) => createHash("sha1").update(text).digest("hex");
    expect(await scriptShas()).toEqual({
      slidingWindow: sha1(SLIDING_WINDOW_SCRIPT),
      tokenBucket: sha1(TOKEN_BUCKET_SCRIPT),
      windows: sha1(WINDOWS_SCRIPT),
    });
  });
});
