// Cluster routing: CRC16 (XMODEM) and hash slots, checked against values Redis itself gives (CLUSTER KEYSLOT).
import { describe, expect, it } from "vitest";
import { crc16, keySlot } from "../../../../src/ratelimit/stores/redis/slots";

describe("keySlot", () => {
  it("computes CRC16-XMODEM", () => {
    expect(crc16(new TextEncoder().encode("123456789"))).toBe(0x31c3);
  });

  it.each([
    ["foo", 12182],
    ["bar", 5061],
    ["hello", 866],
    ["", 0],
  ])("puts %j in slot %i", (key, slot) => {
    expect(keySlot(key)).toBe(slot);
  });

  it("hashes only a non-empty {hash tag}", () => {
    expect(keySlot("{user1000}.following")).toBe(keySlot("user1000"));
    expect(keySlot("{user1000}.followers")).toBe(keySlot("user1000"));
    // An empty {} is no hash tag: the whole key is hashed (redis-server's CLUSTER KEYSLOT foo{}{bar} is 8363).
    expect(keySlot("foo{}{bar}")).toBe(8363);
    expect(keySlot("foo{}{bar}")).not.toBe(keySlot("bar"));
    expect(keySlot("foo{{bar}}zap")).toBe(keySlot("{bar"));
    expect(keySlot("foo{bar}{zap}")).toBe(keySlot("bar"));
  });
});
