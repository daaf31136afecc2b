// Which shard object holds a rate-limit key in the sharded counter layout (COUNTER_OBJECT_LAYOUT=sharded): a stable
// hash of the key's counter name, so every isolate and every release sends a key to the same shard.

const utf8 = new TextEncoder();

/** 32-bit FNV-1a of the string's UTF-8 bytes: stable, fast and well spread for short keys. */
export function fnv1a32(text: string): number {
  let hash = 0x811c9dc5;
  for (const byte of utf8.encode(text)) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/**
 * The shard object's name. It carries the shard count, so a new count sends every key to a fresh object, and it
 * never ends in "_" as every counter name does, so a shard never shares an object with a per-key counter.
 */
export const shardName = (counterName: string, shards: number): string =>
  `shard ${fnv1a32(counterName) % shards} of ${shards}`;
