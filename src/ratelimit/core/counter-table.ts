// The counters of one counter object (a Durable Object holding one rate-limit key, or one shard of many keys),
// as pure logic over a synchronous row store: what to count in memory, what to write and when, and which rows the
// alarm deletes. The Durable Object (durable-objects/rate-limit-counter.ts) wires it to SQLite, its alarm and a timer.
import { slidingWindowStep, tokenBucketStep } from "./algorithms";
import { expiredLeases, type LeaseAsk, leaseStep, type LeaseReply } from "./counter-leases";
import type {
  CounterAlgorithmOperation,
  CounterReply,
  SingleAlgorithmReply,
  WindowSpec,
  WindowsOperation,
  WindowsReply,
} from "./types";

// Memory is the authority while the object lives; storage is what a later instance of the object starts from. Hence:
// - A hit whose window ends within `minIdleLifetimeMs` is never written. The platform keeps an object in memory for at
//   least that long after its last call (10 s in workerd), so this instance outlives the window and no later instance
//   can need the hit. A window no longer than that is never written, so it is never looked up either.
// - Other hits are written behind: `writeBehindMs` after the first unwritten one, all rows and the alarm in one commit.
//   A crash (not an eviction) loses at most that interval's hits: an undercount, so that many extra admissions.
// - Closed rows go lazily: each write first deletes up to `sweepBatch` of them, in the same commit, and moves the alarm
//   to the earliest row left. The alarm is due only `sweepDelaySeconds` (plus this object's jitter) after the earliest
//   stored window's end, so a key used again within that never wakes by its alarm: only a key gone idle is opened
//   once more, to delete its rows in batches of `sweepBatch` and drop its storage once nothing is left. (An alarm
//   opens its object where no caller's bound on open objects sees it, e.g. admission.ts; with one at every window's
//   end, a soak's 7000 per-key counters in workerd were opened 39 % more often than called, and rising.)
// Counting stays exact because each step here is synchronous and the object is single-threaded.
//
// Besides fixed-window counters, an operation may carry an algorithm (core/algorithms.ts), applied as one step:
// - sliding window: the current window's count and the previous window's (same counter name, so same object) are
//   weighed; the previous key's own window ends one window before the current key's, i.e. where the current window
//   does, so it stays readable exactly as long as anything weighs it.
// - token bucket: the entry holds the TAT in microseconds instead of a count. Its state matters until the TAT, so it is
//   written only when the TAT lies more than `minIdleLifetimeMs` ahead of the caller's clock (a bucket whose burst
//   refills within that never is, nor is looked up); its window end is the latest one an operation brought, which the
//   TAT never passes.
// - windows (a rule's additional_limits): each window's step as above, checked first; the hits go to every window only
//   when every window admits them, so a refused operation changes none of them.
// A refused operation changes nothing, so it writes nothing.
//
// A fixed-window operation may also carry a lease ask (core/counter-leases.ts): its hits are counted as any others,
// then a share of the remaining quota is lent and counted too; what the holders still hold when the window's entry
// leaves memory is counted as expired.

/** One counter operation as the object receives it: `hits` 0 only reads. */
export interface CounterOperation {
  key: string;
  hits: number;
  /** Unix second after which nothing reads this key again. */
  windowEnd: number;
  /** How long the key lives, in seconds (twice the window for a sliding window, whose next window reads it). */
  windowSeconds: number;
  /** Absent for a fixed-window counter. */
  algorithm?: CounterAlgorithmOperation;
  /** Fixed window only: count the hits, then lend (or take back) a share; the reply is then a LeaseReply. */
  lease?: LeaseAsk;
}

/** What the object answers an operation: a count, an algorithm's reply, or a leased operation's reply. */
export type ObjectReply = CounterReply | LeaseReply;

/** One stored counter. */
export interface CounterRow {
  key: string;
  /** The count; for a token bucket, its TAT in whole microseconds. */
  count: number;
  windowEnd: number;
}

/** The object's storage, synchronous (SQLite in the object's own process). */
export interface CounterRows {
  /** The stored row of `key`, if any. */
  find(key: string): CounterRow | undefined;
  /** Writes these rows (inserting or replacing) and, when given, moves the alarm to `alarmAtMs`: one commit. */
  commit(rows: CounterRow[], alarmAtMs: number | undefined): void;
  /** The earliest window end among the stored rows, if any. */
  earliestWindowEnd(): number | undefined;
  /** Deletes at most `limit` rows whose window ended at or before `nowSeconds`; returns how many it deleted. */
  deleteClosed(nowSeconds: number, limit: number): number;
}

export interface CounterTableOptions {
  /** How long the platform surely keeps an idle object in memory; windows ending sooner are not written. */
  minIdleLifetimeMs: number;
  /** How long a hit that must be written may wait, gathering later ones into the same commit. */
  writeBehindMs: number;
  /** Seconds added to every alarm of this object, so that objects whose windows end together wake apart. */
  alarmJitterSeconds: number;
  /** How long after a window's end its row may wait for a later write to delete it before the alarm does. */
  sweepDelaySeconds: number;
  /** Most rows one alarm, or one write, deletes. */
  sweepBatch: number;
}

/** What the object counted and wrote, for its statistics. */
export interface CounterTableActivity {
  operations: number;
  lookups: number;
  rowsWritten: number;
  rowsDeleted: number;
  commits: number;
  leasesGranted: number;
  leasesReturned: number;
  /** Leases whose holder still held units when their window's entry left memory. */
  leasesExpired: number;
  leaseUnitsLent: number;
}

/** What the alarm asks of the object after its sweep. */
export type SweepOutcome =
  { kind: "again"; alarmAtMs: number } | { kind: "next"; alarmAtMs: number } | { kind: "empty" };

interface Entry {
  /** The count, or a token bucket's TAT (0: none). */
  count: number;
  windowEnd: number;
  /** A fixed window's holders of leases (counter-leases.ts); absent until it lends. */
  holders?: Map<string, number>;
}

/** An entry stays in memory this long after its window closes, for callers whose clocks run a little behind. */
export const CLOSED_WINDOW_GRACE_MS = 10_000;

export const emptyActivity = (): CounterTableActivity => ({
  operations: 0,
  lookups: 0,
  rowsWritten: 0,
  rowsDeleted: 0,
  commits: 0,
  leasesGranted: 0,
  leasesReturned: 0,
  leasesExpired: 0,
  leaseUnitsLent: 0,
});

export class CounterTable {
  private readonly entries = new Map<string, Entry>();
  /** Keys by window end, so closed windows leave memory without a scan of every entry. */
  private readonly keysByWindowEnd = new Map<number, Set<string>>();
  private earliestInMemory = Infinity;
  /** Keys whose count is newer than storage and must be written. */
  private readonly unwritten = new Set<string>();
  /** When the pending write is due; undefined when nothing waits. */
  private writeDueMs: number | undefined;
  /** The alarm this object has set (or found implied by its rows); null: none; undefined: not known yet. */
  private alarmAtMs: number | null | undefined;
  private activity = emptyActivity();

  constructor(
    private readonly rows: CounterRows,
    private readonly options: CounterTableOptions,
  ) {}

  /**
   * Applies each operation in order and returns each reply: a fixed counter's count after it, or the algorithm's
   * reply. `writeDueMs` is set when a write waits: the object calls `writeUnwritten` then (at once when the
   * write-behind interval is 0).
   */
  increment(operations: CounterOperation[], nowMs: number): { replies: ObjectReply[]; writeDueMs: number | undefined } {
    this.forgetClosed(nowMs);
    const replies = operations.map((operation) => this.apply(operation, nowMs));
    this.activity.operations += operations.length;
    if (this.unwritten.size > 0 && this.writeDueMs === undefined) this.writeDueMs = nowMs + this.options.writeBehindMs;
    return { replies, writeDueMs: this.writeDueMs };
  }

  /** Each operation's reply as if its hits were 0 (a fixed counter's count, 0 when absent), changing nothing. */
  read(operations: CounterOperation[], nowMs: number): CounterReply[] {
    this.forgetClosed(nowMs);
    this.activity.operations += operations.length;
    return operations.map(
      (operation) => this.apply({ ...operation, hits: 0, lease: undefined }, nowMs) as CounterReply,
    );
  }

  /**
   * Writes every unwritten counter of a window still open at `nowMs`, after deleting up to one batch of closed rows,
   * and moves the alarm where the rows left need it: one commit.
   */
  writeUnwritten(nowMs: number): void {
    this.writeDueMs = undefined;
    if (this.unwritten.size === 0) return;
    const rows: CounterRow[] = [];
    let earliestEnd = Infinity;
    for (const key of this.unwritten) {
      const entry = this.entries.get(key);
      if (!entry || entry.windowEnd * 1000 <= nowMs) continue;
      rows.push({ key, count: entry.count, windowEnd: entry.windowEnd });
      earliestEnd = Math.min(earliestEnd, entry.windowEnd);
    }
    this.unwritten.clear();
    if (rows.length === 0) return;
    const alarm = this.alarmAfterWrite(earliestEnd, nowMs);
    this.rows.commit(rows, alarm);
    this.activity.rowsWritten += rows.length;
    this.activity.commits++;
  }

  /**
   * Deletes up to one batch of closed rows (the commit that follows joins them in one transaction) and returns where
   * the alarm must move, if anywhere: earlier for rows ending sooner than any stored, later once every closed row is
   * gone, so that a key in use never wakes by its alarm.
   */
  private alarmAfterWrite(earliestWrittenEnd: number, nowMs: number): number | undefined {
    // Known before the delete: a new instance takes it from the rows stored (see knownAlarm).
    const known = this.knownAlarm();
    const deleted = known === null ? 0 : this.rows.deleteClosed(Math.floor(nowMs / 1000), this.options.sweepBatch);
    this.activity.rowsDeleted += deleted;
    let alarm = this.alarmFor(earliestWrittenEnd);
    if (deleted > 0 && deleted < this.options.sweepBatch) {
      const stored = this.rows.earliestWindowEnd();
      if (stored !== undefined) alarm = Math.min(alarm, this.alarmFor(stored));
      if (alarm === known) return undefined;
    } else if (known !== null && alarm >= known) return undefined;
    this.alarmAtMs = alarm;
    return alarm;
  }

  /**
   * The alarm's work: writes what waits, deletes up to one batch of closed rows, and says when to come back (at
   * once when a full batch was deleted) or that storage is empty.
   */
  sweep(nowMs: number): SweepOutcome {
    this.writeUnwritten(nowMs);
    this.forgetClosed(nowMs);
    const deleted = this.rows.deleteClosed(Math.floor(nowMs / 1000), this.options.sweepBatch);
    this.activity.rowsDeleted += deleted;
    if (deleted > 0) this.activity.commits++;
    if (deleted >= this.options.sweepBatch) {
      this.alarmAtMs = nowMs;
      return { kind: "again", alarmAtMs: nowMs };
    }
    const earliest = this.rows.earliestWindowEnd();
    if (earliest === undefined) {
      this.alarmAtMs = null;
      return { kind: "empty" };
    }
    this.alarmAtMs = Math.max(this.alarmFor(earliest), nowMs);
    return { kind: "next", alarmAtMs: this.alarmAtMs };
  }

  /** What the table did since the last call, for the object's statistics. */
  takeActivity(): CounterTableActivity {
    const taken = this.activity;
    this.activity = emptyActivity();
    return taken;
  }

  /** Entries in memory (for tests and statistics). */
  get size(): number {
    return this.entries.size;
  }

  private alarmFor(windowEnd: number): number {
    return (windowEnd + this.options.sweepDelaySeconds + this.options.alarmJitterSeconds) * 1000;
  }

  /**
   * The alarm in force. Every commit that stores a row sets an alarm no later than that row's, so a new instance
   * may take the earliest stored row's alarm as the one set (the real one is never later).
   */
  private knownAlarm(): number | null {
    if (this.alarmAtMs === undefined) {
      const earliest = this.rows.earliestWindowEnd();
      this.alarmAtMs = earliest === undefined ? null : this.alarmFor(earliest);
    }
    return this.alarmAtMs;
  }

  private apply(operation: CounterOperation, nowMs: number): ObjectReply {
    const { key, hits, windowEnd, windowSeconds, algorithm } = operation;
    if (operation.lease && !algorithm) return this.applyLeased(operation, operation.lease, nowMs);
    if (algorithm?.kind === "windows") return this.applyWindows(algorithm, hits, nowMs);
    if (algorithm?.kind === "sliding_window") {
      const current = this.entry(key, windowEnd, windowSeconds);
      // The previous window's key was current one window (half this key's life) earlier.
      const previous = this.entry(algorithm.previousKey, windowEnd - windowSeconds / 2, windowSeconds);
      const step = slidingWindowStep(previous.count, current.count, hits, algorithm);
      if (step.admitted && hits > 0) {
        current.count = step.current;
        this.noteChange(key, windowEnd * 1000 - nowMs);
      }
      return { kind: "sliding_window", admitted: step.admitted, previous: previous.count, current: current.count };
    }
    if (algorithm?.kind === "token_bucket") {
      const bucket = this.entry(key, windowEnd, windowSeconds);
      this.extendLife(key, bucket, windowEnd);
      const step = tokenBucketStep(bucket.count, hits, algorithm);
      if (step.admitted && hits > 0) {
        bucket.count = step.tatMicros;
        this.noteChange(key, (step.tatMicros - algorithm.nowMicros) / 1000);
      }
      return { kind: "token_bucket", admitted: step.admitted, tatMicros: step.tatMicros };
    }
    const counter = this.entry(key, windowEnd, windowSeconds);
    if (hits > 0) {
      counter.count += hits;
      this.noteChange(key, windowEnd * 1000 - nowMs);
    }
    return counter.count;
  }

  /** A descriptor's windows as one step: the hits go to every window only when every window has room for them. */
  private applyWindows(operation: WindowsOperation, hits: number, nowMs: number): WindowsReply {
    const steps = operation.windows.map((window) => this.windowStep(window, hits, nowMs));
    const admitted = steps.every((step) => step.admitted);
    if (admitted && hits > 0) for (const step of steps) step.commit();
    return { kind: "windows", admitted, windows: steps.map((step) => step.reply(admitted)) };
  }

  /** One window's check, the change it would make, and its reply once the operation is decided. */
  private windowStep(window: WindowSpec, hits: number, nowMs: number) {
    const { key, windowEnd, windowSeconds, algorithm } = window;
    const entry = this.entry(key, windowEnd, windowSeconds);
    if (algorithm?.kind === "sliding_window") {
      const previous = this.entry(algorithm.previousKey, windowEnd - windowSeconds / 2, windowSeconds);
      const step = slidingWindowStep(previous.count, entry.count, hits, algorithm);
      return {
        admitted: step.admitted,
        commit: () => this.setCount(key, entry, step.current, windowEnd * 1000 - nowMs),
        reply: (admitted: boolean): SingleAlgorithmReply => ({
          kind: "sliding_window",
          admitted,
          previous: previous.count,
          current: entry.count,
        }),
      };
    }
    if (algorithm?.kind === "token_bucket") {
      this.extendLife(key, entry, windowEnd);
      const unchanged = Math.max(entry.count, algorithm.nowMicros);
      const step = tokenBucketStep(entry.count, hits, algorithm);
      return {
        admitted: step.admitted,
        commit: () => this.setCount(key, entry, step.tatMicros, (step.tatMicros - algorithm.nowMicros) / 1000),
        reply: (admitted: boolean): SingleAlgorithmReply => ({
          kind: "token_bucket",
          admitted,
          tatMicros: admitted ? step.tatMicros : unchanged,
        }),
      };
    }
    return {
      admitted: entry.count + hits <= window.limit,
      commit: () => this.setCount(key, entry, entry.count + hits, windowEnd * 1000 - nowMs),
      reply: (): number => entry.count,
    };
  }

  private setCount(key: string, entry: Entry, count: number, remainingLifeMs: number): void {
    entry.count = count;
    this.noteChange(key, remainingLifeMs);
  }

  /** A fixed-window operation with a lease ask: counted, then lent from while its window is open (counter-leases.ts). */
  private applyLeased(operation: CounterOperation, ask: LeaseAsk, nowMs: number): LeaseReply {
    const { key, hits, windowEnd, windowSeconds } = operation;
    const counter = this.entry(key, windowEnd, windowSeconds);
    const before = counter.count;
    const reply = leaseStep(counter, hits, ask, windowEnd * 1000 > nowMs, this.activity);
    if (counter.count !== before) this.noteChange(key, windowEnd * 1000 - nowMs);
    return reply;
  }

  /** A changed entry waits for the write unless its state ends within the idle lifetime (see the header). */
  private noteChange(key: string, remainingLifeMs: number): void {
    if (remainingLifeMs > this.options.minIdleLifetimeMs) this.unwritten.add(key);
  }

  private entry(key: string, windowEnd: number, windowSeconds: number): Entry {
    let entry = this.entries.get(key);
    if (entry) return entry;
    entry = { count: this.storedCount(key, windowSeconds), windowEnd };
    this.entries.set(key, entry);
    this.index(key, windowEnd);
    return entry;
  }

  /** Moves a token bucket's window end to a later one an operation brought (its TAT moves forward with them). */
  private extendLife(key: string, entry: Entry, windowEnd: number): void {
    if (windowEnd <= entry.windowEnd) return;
    const keys = this.keysByWindowEnd.get(entry.windowEnd)!;
    keys.delete(key);
    if (keys.size === 0) this.keysByWindowEnd.delete(entry.windowEnd);
    entry.windowEnd = windowEnd;
    this.index(key, windowEnd);
  }

  private index(key: string, windowEnd: number): void {
    const keys = this.keysByWindowEnd.get(windowEnd);
    if (keys) keys.add(key);
    else this.keysByWindowEnd.set(windowEnd, new Set([key]));
    this.earliestInMemory = Math.min(this.earliestInMemory, windowEnd * 1000 + CLOSED_WINDOW_GRACE_MS);
  }

  /** A key living no longer than the idle lifetime was never written (see the header), so it is not looked up. */
  private storedCount(key: string, windowSeconds: number): number {
    if (windowSeconds * 1000 <= this.options.minIdleLifetimeMs) return 0;
    this.activity.lookups++;
    return this.rows.find(key)?.count ?? 0;
  }

  /** Drops the entries of windows closed for longer than the grace; their rows go at a later write or the alarm. */
  private forgetClosed(nowMs: number): void {
    if (nowMs < this.earliestInMemory) return;
    let earliest = Infinity;
    for (const [windowEnd, keys] of this.keysByWindowEnd) {
      const forgetAt = windowEnd * 1000 + CLOSED_WINDOW_GRACE_MS;
      if (forgetAt > nowMs) {
        earliest = Math.min(earliest, forgetAt);
        continue;
      }
      for (const key of keys) {
        // An unwritten count of a closed window is never needed again: its row would only be deleted.
        this.unwritten.delete(key);
        const entry = this.entries.get(key);
        if (entry) this.activity.leasesExpired += expiredLeases(entry);
        this.entries.delete(key);
      }
      this.keysByWindowEnd.delete(windowEnd);
    }
    this.earliestInMemory = earliest;
  }
}
