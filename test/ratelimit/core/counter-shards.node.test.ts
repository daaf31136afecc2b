// The naming of counter shards (src/ratelimit/core/counter-shards.ts): the hash, and a stable name in range.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { fnv1a32, shardName } from "../../../src/ratelimit/core/counter-shards";

describe("counter shards", () => {
  it("hashes with 32-bit FNV-1a over UTF-8", () => {
    expect(fnv1a32("")).toBe(0x811c9dc5);
    expect(fnv1a32("a")).toBe(0xe40c292c);
    expect(fnv1a32("foobar")).toBe(0xbf9cf968);
    // UTF-8 bytes, not UTF-16 code units: "é" is two bytes.
    expect(fnv1a32("é")).toBe(Math.imul(Math.imul(0x811c9dc5 ^ 0xc3, 0x01000193) ^ 0xa9, 0x01000193) >>> 0);
  });

  it("names a stable shard in range that never ends with an underscore", () => {
    expect(shardName("rl_client_10.0.0.1_", 4)).toBe(`shard ${fnv1a32("rl_client_10.0.0.1_") % 4} of 4`);
    expect(shardName("a", 64)).toBe(`shard ${0xe40c292c % 64} of 64`);
    expect(shardName("a", 64)).toBe("shard 44 of 64");
    expect(shardName("foobar", 1)).toBe("shard 0 of 1");
    fc.assert(
      fc.property(fc.string(), fc.integer({ min: 1, max: 4096 }), (name, shards) => {
        const shard = shardName(name, shards);
        expect(shardName(name, shards)).toBe(shard);
        const match = /^shard (\d+) of (\d+)$/.exec(shard);
        expect(match).not.toBeNull();
        expect(Number(match![1])).toBeLessThan(shards);
        expect(Number(match![2])).toBe(shards);
        expect(shard.endsWith("_")).toBe(false);
      }),
    );
  });
});
