// A rate-limit counter object: one per rate-limit key (COUNTER_OBJECT_LAYOUT=per_key) or one shard of many keys
// (sharded). Wiring only: the counting and writing rules are src/ratelimit/core/counter-table.ts, the rows live in
// the object's SQLite database (src/ratelimit/stores/durable-object/sql-rows.ts). The object sets the write-behind
// timer the table asks for (each write also deletes closed rows), runs the table's sweep at its alarm and drops its
// storage once nothing is left.
import { DurableObject } from "cloudflare:workers";
import { fnv1a32 } from "../src/ratelimit/core/counter-shards";
import { CounterTable, type CounterOperation, type ObjectReply } from "../src/ratelimit/core/counter-table";
import type { CounterReply } from "../src/ratelimit/core/types";
import { counterStoreSettings } from "../src/ratelimit/counter-store-settings";
import { recordCounterObjectActivity } from "../src/ratelimit/stats/counter-objects";
import { SqlCounterRows } from "../src/ratelimit/stores/durable-object/sql-rows";

export type { CounterOperation };

/** Most closed rows one alarm (or one write) deletes; a fuller table is swept by alarms in a row. */
const SWEEP_BATCH = 500;
/**
 * How long after its window's end a row waits for the object's next write to delete it, before the alarm does. A key
 * used again within this never wakes its object by alarm; in workerd, where every object shares one process and one
 * SQLite heap, such wakes added 39 % (and rising) to the objects a soak's calls opened (docs/reliability.md, "Memory").
 */
const SWEEP_DELAY_SECONDS = 600;

export class RateLimitCounter extends DurableObject<Env> {
  private readonly rows: SqlCounterRows;
  private readonly table: CounterTable;
  private writeTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    const settings = counterStoreSettings(env);
    const jitterMax = settings.EXPIRATION_JITTER_MAX_SECONDS;
    this.rows = new SqlCounterRows(ctx.storage);
    this.table = new CounterTable(this.rows, {
      minIdleLifetimeMs: settings.COUNTER_OBJECT_MIN_IDLE_LIFETIME,
      writeBehindMs: settings.COUNTER_WRITE_BEHIND,
      // Fixed per object, so that every instance of it computes the same alarm from the same rows.
      alarmJitterSeconds: jitterMax > 0 ? fnv1a32(ctx.id.toString()) % jitterMax : 0,
      sweepBatch: SWEEP_BATCH,
      sweepDelaySeconds: SWEEP_DELAY_SECONDS,
    });
    recordCounterObjectActivity(env, { objects_started: 1 });
  }

  /**
   * Applies each operation in order (hits 0 only read) and returns each reply: a count, an algorithm's reply, or a
   * leased operation's count and share.
   */
  async increment(operations: CounterOperation[]): Promise<ObjectReply[]> {
    const { replies, writeDueMs } = this.table.increment(operations, Date.now());
    if (writeDueMs !== undefined) this.writeAt(writeDueMs);
    this.report(1);
    return replies;
  }

  /** Each operation's reply as if its hits were 0 (a count is 0 when absent), changing nothing. */
  async read(operations: CounterOperation[]): Promise<CounterReply[]> {
    const replies = this.table.read(operations, Date.now());
    this.report(1);
    return replies;
  }

  override async alarm(): Promise<void> {
    this.cancelWrite();
    const outcome = this.table.sweep(Date.now());
    if (outcome.kind === "empty") await this.rows.dropAll();
    else await this.ctx.storage.setAlarm(outcome.alarmAtMs);
    this.report();
  }

  private writeAt(dueMs: number): void {
    const wait = dueMs - Date.now();
    if (wait <= 0) {
      this.cancelWrite();
      this.table.writeUnwritten(Date.now());
      return;
    }
    this.writeTimer ??= setTimeout(() => {
      this.writeTimer = undefined;
      this.table.writeUnwritten(Date.now());
      this.report();
    }, wait);
  }

  private cancelWrite(): void {
    if (this.writeTimer === undefined) return;
    clearTimeout(this.writeTimer);
    this.writeTimer = undefined;
  }

  /** Adds what the table did, and the `calls` this object answered, to the isolate's statistics. */
  private report(calls = 0): void {
    const activity = this.table.takeActivity();
    recordCounterObjectActivity(this.env, {
      calls,
      operations: activity.operations,
      lookups: activity.lookups,
      rows_written: activity.rowsWritten,
      rows_deleted: activity.rowsDeleted,
      commits: activity.commits,
      leases_granted: activity.leasesGranted,
      leases_returned: activity.leasesReturned,
      leases_expired: activity.leasesExpired,
      lease_units_lent: activity.leaseUnitsLent,
    });
  }
}
