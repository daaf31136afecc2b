// The object cache's pure parts: the memcached text protocol, the key rules, the reference's node selection and
// the SRV answers of DNS over HTTPS.
import { describe, expect, it } from "vitest";
import { crc32, pickNode } from "../../../../src/ratelimit/stores/memcache/hashing";
import {
  encodeRequest,
  keyProblem,
  MemcacheReplyError,
  ReplyParser,
} from "../../../../src/ratelimit/stores/memcache/protocol";
import { parseSrvAnswers } from "../../../../src/ratelimit/stores/memcache/srv";

const bytes = (text: string) => new TextEncoder().encode(text);

describe("memcached text protocol", () => {
  it("encodes get, incr and add", () => {
    expect(encodeRequest({ op: "get", keys: ["a", "b"] })).toBe("get a b\r\n");
    expect(encodeRequest({ op: "incr", key: "a", delta: 3 })).toBe("incr a 3\r\n");
    expect(encodeRequest({ op: "add", key: "a", value: 12, ttlSeconds: 3600 })).toBe("add a 0 3600 2\r\n12\r\n");
  });

  it("parses replies of each kind, also when split across chunks", () => {
    const wire =
      "VALUE a 0 2\r\n12\r\nVALUE b 0 1 99\r\n7\r\nEND\r\n5\r\nNOT_FOUND\r\nSTORED\r\nNOT_STORED\r\nSERVER_ERROR out of memory\r\nEND\r\n";
    const parser = new ReplyParser();
    const ops = ["get", "incr", "incr", "add", "add", "incr", "get"] as const;
    const replies = [];
    let op = 0;
    for (const byte of bytes(wire)) {
      parser.push(Uint8Array.of(byte));
      for (let next = parser.next(ops[op]); next; next = op < ops.length ? parser.next(ops[op]) : undefined) {
        replies.push(next.reply);
        op++;
        if (op === ops.length) break;
      }
    }
    expect(replies).toEqual([
      new Map([
        ["a", "12"],
        ["b", "7"],
      ]),
      5,
      "NOT_FOUND",
      "STORED",
      "NOT_STORED",
      new MemcacheReplyError("SERVER_ERROR out of memory"),
      new Map(),
    ]);
  });

  it("accepts keys up to 250 bytes without whitespace or control characters", () => {
    expect(keyProblem("a".repeat(250))).toBeUndefined();
    expect(keyProblem("é".repeat(125))).toBeUndefined();
    expect(keyProblem("é".repeat(126))).toBe(
      `objcache: cache key "${"é".repeat(80)}..." is 252 bytes long; memcached keys are at most 250`,
    );
    for (const bad of ["a b", "a\nb", "a\u007fb", "a\u0000b"])
      expect(keyProblem(bad)).toMatch(/holds whitespace or a control character/);
  });
});

describe("node selection", () => {
  it("is the IEEE CRC-32 of the key modulo the node count, as the reference's memcache client", () => {
    expect(crc32("123456789")).toBe(0xcbf43926);
    expect(crc32("")).toBe(0);
    const nodes = ["n0", "n1", "n2"];
    expect(pickNode("some-key", nodes)).toBe(nodes[crc32("some-key") % 3]);
    expect(pickNode("anything", ["only"])).toBe("only");
  });
});

describe("SRV answers", () => {
  it("keeps SRV records, sorted by priority then target and port, so every instance orders the nodes alike", () => {
    expect(
      parseSrvAnswers([
        { type: 33, data: "20 5 11211 c.example." },
        { type: 5, data: "alias.example." },
        { type: 33, data: "10 1 11212 b.example." },
        { type: 33, data: "10 9 11211 b.example." },
        { type: 33, data: "10 5 11211 a.example." },
        { type: 33, data: "0 0 0 ." },
      ]),
    ).toEqual([
      { host: "a.example", port: 11211 },
      { host: "b.example", port: 11211 },
      { host: "b.example", port: 11212 },
      { host: "c.example", port: 11211 },
    ]);
  });
});
