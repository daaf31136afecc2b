// One Durable Object per rate-limit key (the cache key without its window): it counts that key's hits per
// fixed window. Storage and RPC only; the decision logic lives in src/ratelimit/core.
//
// Storage (key-value API): key = the full cache key (window start included), value = [count, windowEnd] with
// windowEnd the Unix second at which the window closes. An alarm at the earliest windowEnd deletes closed windows,
// and everything once none is left, so storage never grows without bound.
//
// Counting is exact: the object is single-threaded, the first read of a key happens behind the input gate, and
// every later step is synchronous, so concurrent callers never interleave between read and write. Changed counters
// are written behind, at most once a second per object (WRITE_BEHIND_MS), with allowUnconfirmed: the caller gets its
// count without waiting for the disk, and a busy object writes once a second instead of once a call, which is what
// lets it keep up with a hot key. If the object crashed, the hits of at most the last second would be lost (an
// undercount, so at most that many extra admissions): far less than the reference's Redis risks with its default
// snapshotting. Eviction only happens to an object idle for many seconds, by when its writes are done.
import { DurableObject } from "cloudflare:workers";

export interface CounterOperation {
  key: string;
  hits: number;
  windowEnd: number;
}

type Stored = [count: number, windowEnd: number];

/** The longest a changed counter waits to be written; see the header. */
const WRITE_BEHIND_MS = 1000;

export class RateLimitCounter extends DurableObject<Env> {
  /** Counts known to this instance; storage is read once per key per instance. */
  private readonly counts = new Map<string, Stored>();
  /** Milliseconds of the alarm we know is set; undefined until this instance has set or read it. */
  private alarmAt: number | null | undefined;

  /** Counters changed since the last write, written together when the write-behind timer fires. */
  private unwritten: Record<string, Stored> | null = null;

  private writeBehind(changed: Record<string, Stored>): void {
    if (this.unwritten === null) {
      this.unwritten = {};
      setTimeout(() => this.writeUnwritten(), WRITE_BEHIND_MS);
    }
    Object.assign(this.unwritten, changed);
  }

  private writeUnwritten(): void {
    if (this.unwritten === null) return;
    void this.ctx.storage.put(this.unwritten, { allowUnconfirmed: true });
    this.unwritten = null;
  }

  /** Loads the keys this instance has not seen yet (absent keys count 0). */
  private async load(operations: { key: string; windowEnd: number }[]): Promise<void> {
    const missing = [...new Set(operations.filter((op) => !this.counts.has(op.key)).map((op) => op.key))];
    if (missing.length === 0) return;
    const stored = await this.ctx.storage.get<Stored>(missing);
    for (const op of operations) {
      if (!this.counts.has(op.key)) this.counts.set(op.key, stored.get(op.key) ?? [0, op.windowEnd]);
    }
  }

  /**
   * Adds each operation's hits (0 only reads) and returns each counter after it, in order.
   */
  async increment(operations: CounterOperation[]): Promise<number[]> {
    await this.load(operations);
    const changed: Record<string, Stored> = {};
    const counts = operations.map((op) => {
      const entry = this.counts.get(op.key)!;
      if (op.hits > 0) {
        entry[0] += op.hits;
        changed[op.key] = entry;
      }
      return entry[0];
    });
    if (Object.keys(changed).length > 0) {
      this.writeBehind(changed);
      await this.scheduleExpiry(Math.min(...operations.map((op) => op.windowEnd)) * 1000);
    }
    return counts;
  }

  /** Current values of the given counters (0 when absent), without changing them. */
  async read(keys: string[]): Promise<number[]> {
    await this.load(keys.map((key) => ({ key, windowEnd: 0 })));
    return keys.map((key) => this.counts.get(key)![0]);
  }

  private async scheduleExpiry(windowEndMs: number): Promise<void> {
    if (this.alarmAt === undefined) this.alarmAt = await this.ctx.storage.getAlarm();
    if (this.alarmAt === null || this.alarmAt > windowEndMs) {
      this.alarmAt = windowEndMs;
      await this.ctx.storage.setAlarm(windowEndMs);
    }
  }

  override async alarm(): Promise<void> {
    this.writeUnwritten();
    const nowSeconds = Date.now() / 1000;
    const stored = await this.ctx.storage.list<Stored>();
    const closed = [...stored].filter(([, [, windowEnd]]) => windowEnd <= nowSeconds).map(([key]) => key);
    for (const key of closed) this.counts.delete(key);
    const open = [...stored].filter(([, [, windowEnd]]) => windowEnd > nowSeconds);
    if (open.length === 0) {
      this.counts.clear();
      this.alarmAt = null;
      await this.ctx.storage.deleteAll();
      return;
    }
    await this.ctx.storage.delete(closed);
    this.alarmAt = Math.min(...open.map(([, [, windowEnd]]) => windowEnd)) * 1000;
    await this.ctx.storage.setAlarm(this.alarmAt);
  }
}
