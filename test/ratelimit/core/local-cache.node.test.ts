// The size-bounded local cache of over-limit keys.

import { describe, expect, it } from "vitest";
import { LOCAL_CACHE_ENTRY_OVERHEAD_BYTES, LocalCache } from "../../../src/ratelimit/core/local-cache";

const entrySize = (key: string) => key.length + LOCAL_CACHE_ENTRY_OVERHEAD_BYTES;

describe("LocalCache", () => {
  it("remembers a key until its window ends", () => {
    const cache = new LocalCache(1024);
    cache.markOverLimit("d_k_v_60", 120, 70);
    expect(cache.isOverLimit("d_k_v_60", 70)).toBe(true);
    expect(cache.isOverLimit("d_k_v_60", 119)).toBe(true);
    expect(cache.isOverLimit("d_k_v_60", 120)).toBe(false);
    expect(cache.size).toBe(0);
    expect(cache.bytes).toBe(0);
  });

  it("does not know keys that were never marked", () => {
    expect(new LocalCache(1024).isOverLimit("nothing", 0)).toBe(false);
  });

  it("counts each entry as its key length plus a fixed overhead", () => {
    const cache = new LocalCache(1024);
    cache.markOverLimit("abc", 10, 0);
    cache.markOverLimit("héllo", 10, 0);
    expect(cache.bytes).toBe(3 + 64 + 6 + 64);
    cache.markOverLimit("abc", 20, 0);
    expect(cache.bytes).toBe(3 + 64 + 6 + 64);
  });

  it("evicts the least recently used entry when full", () => {
    const cache = new LocalCache(entrySize("key-a") * 2);
    cache.markOverLimit("key-a", 100, 0);
    cache.markOverLimit("key-b", 100, 0);
    // Using key-a makes key-b the least recently used.
    expect(cache.isOverLimit("key-a", 1)).toBe(true);
    cache.markOverLimit("key-c", 100, 1);
    expect(cache.isOverLimit("key-b", 2)).toBe(false);
    expect(cache.isOverLimit("key-a", 2)).toBe(true);
    expect(cache.isOverLimit("key-c", 2)).toBe(true);
    expect(cache.size).toBe(2);
    expect(cache.bytes).toBe(entrySize("key-a") * 2);
  });

  it("drops expired entries before evicting live ones", () => {
    const cache = new LocalCache(entrySize("key-a") * 2);
    cache.markOverLimit("key-a", 100, 0);
    cache.markOverLimit("key-b", 10, 0);
    cache.markOverLimit("key-c", 100, 50);
    expect(cache.isOverLimit("key-a", 51)).toBe(true);
    expect(cache.isOverLimit("key-c", 51)).toBe(true);
  });

  it("never stores an entry larger than the whole cache, nor an already expired one", () => {
    const cache = new LocalCache(70);
    cache.markOverLimit("this-key-is-too-long", 100, 0);
    cache.markOverLimit("k", 5, 5);
    expect(cache.size).toBe(0);
  });
});
