// One Durable Object per rate-limit key (the cache key without its window): it holds that key's counters
// per fixed window in its SQLite storage. Storage and RPC only; the decision logic lives in src/ratelimit/core.
//
// Storage: table counters(key TEXT PRIMARY KEY, count INTEGER, window_end INTEGER) where key is the full
// cache key (window start included) and window_end the Unix second at which the window closes. An alarm at the
// earliest window_end deletes closed windows, and the whole object once it holds none, so storage never grows.
import { DurableObject } from "cloudflare:workers";

export interface CounterOperation {
  key: string;
  hits: number;
  windowEnd: number;
}

export class RateLimitCounter extends DurableObject<Env> {
  /** Milliseconds of the alarm we know is set; undefined until this instance has set or read it. */
  private alarmAt: number | null | undefined;
  /** deleteAll() drops the table with everything else, so it is (re)created lazily. */
  private tableReady = false;

  private ensureTable(): void {
    if (this.tableReady) return;
    this.ctx.storage.sql.exec(
      "CREATE TABLE IF NOT EXISTS counters (key TEXT PRIMARY KEY, count INTEGER NOT NULL, window_end INTEGER NOT NULL)",
    );
    this.tableReady = true;
  }

  /**
   * Adds each operation's hits (0 reads) and returns each counter after it, in order. The whole call runs
   * synchronously against SQLite, so concurrent callers are serialised and no hit is lost.
   */
  async increment(operations: CounterOperation[]): Promise<number[]> {
    this.ensureTable();
    const counts = operations.map(
      (op) =>
        this.ctx.storage.sql
          .exec<{ count: number }>(
            `INSERT INTO counters (key, count, window_end) VALUES (?1, ?2, ?3)
             ON CONFLICT(key) DO UPDATE SET count = count + ?2 RETURNING count`,
            op.key,
            op.hits,
            op.windowEnd,
          )
          .one().count,
    );
    const earliestEnd = Math.min(...operations.map((op) => op.windowEnd)) * 1000;
    if (this.alarmAt === undefined) this.alarmAt = await this.ctx.storage.getAlarm();
    if (this.alarmAt === null || this.alarmAt > earliestEnd) {
      this.alarmAt = earliestEnd;
      await this.ctx.storage.setAlarm(earliestEnd);
    }
    return counts;
  }

  /** Current values of the given counters (0 when absent), without changing them. */
  async read(keys: string[]): Promise<number[]> {
    this.ensureTable();
    return keys.map(
      (key) =>
        this.ctx.storage.sql.exec<{ count: number }>("SELECT count FROM counters WHERE key = ?1", key).toArray()[0]
          ?.count ?? 0,
    );
  }

  override async alarm(): Promise<void> {
    this.ensureTable();
    const nowSeconds = Date.now() / 1000;
    this.ctx.storage.sql.exec("DELETE FROM counters WHERE window_end <= ?1", nowSeconds);
    const next = this.ctx.storage.sql
      .exec<{ next: number | null }>("SELECT min(window_end) AS next FROM counters")
      .one().next;
    if (next === null) {
      this.alarmAt = null;
      this.tableReady = false;
      await this.ctx.storage.deleteAll();
    } else {
      this.alarmAt = next * 1000;
      await this.ctx.storage.setAlarm(this.alarmAt);
    }
  }
}
