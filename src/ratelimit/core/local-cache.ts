// In-isolate cache of cache keys known to be over their limit, so that blocked callers stop costing a
// store round trip until the window ends. Bounded in (approximate) bytes; time is passed in.

/** Rough per-entry bookkeeping cost added to the key length when sizing the cache. */
export const LOCAL_CACHE_ENTRY_OVERHEAD_BYTES = 64;

function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code <= 0xdbff) {
      // A surrogate pair is one 4-byte code point.
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}

interface Entry {
  expiresAt: number;
  size: number;
}

/**
 * Least-recently-used map of over-limit keys. A key's entry expires when its window ends: the next window
 * has a different key anyway, so a longer lifetime would only waste room.
 */
export class LocalCache {
  // A Map iterates in insertion order; re-inserting on use keeps the least recently used entry first.
  private readonly entries = new Map<string, Entry>();
  private usedBytes = 0;

  /** @param maxBytes capacity; each entry costs its key's UTF-8 length plus a fixed overhead. */
  constructor(readonly maxBytes: number) {}

  /** Number of live or not yet collected entries. */
  get size(): number {
    return this.entries.size;
  }

  /** Approximate bytes in use. */
  get bytes(): number {
    return this.usedBytes;
  }

  /** True when `key` was marked over limit and its window has not ended at `now` (unix seconds). */
  isOverLimit(key: string, now: number): boolean {
    return this.overLimitUntil(key, now) !== undefined;
  }

  /** When `key` stops being over limit (unix seconds), if it is marked over limit at `now`; a hit refreshes it. */
  overLimitUntil(key: string, now: number): number | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    this.entries.delete(key);
    if (now >= entry.expiresAt) {
      this.usedBytes -= entry.size;
      return undefined;
    }
    this.entries.set(key, entry);
    return entry.expiresAt;
  }

  /**
   * Remembers `key` as over limit until `expiresAt` (unix seconds, the window end). Evicts expired entries
   * first, then least recently used ones, until the new entry fits; an entry larger than the whole cache is
   * not stored.
   */
  markOverLimit(key: string, expiresAt: number, now: number): void {
    const size = utf8Length(key) + LOCAL_CACHE_ENTRY_OVERHEAD_BYTES;
    if (size > this.maxBytes || now >= expiresAt) return;
    this.remove(key);
    if (this.usedBytes + size > this.maxBytes) this.collectExpired(now);
    for (const [oldKey] of this.entries) {
      if (this.usedBytes + size <= this.maxBytes) break;
      this.remove(oldKey);
    }
    this.entries.set(key, { expiresAt, size });
    this.usedBytes += size;
  }

  private collectExpired(now: number): void {
    for (const [key, entry] of this.entries) {
      if (now >= entry.expiresAt) this.remove(key);
    }
  }

  private remove(key: string): void {
    const entry = this.entries.get(key);
    if (entry === undefined) return;
    this.entries.delete(key);
    this.usedBytes -= entry.size;
  }
}
