// Coalesces the calls one isolate makes to each counter object: at most `maxInFlight` calls per object are in flight,
// and the operations of requests that arrive meanwhile wait and travel together, in arrival order, in the next call.
// An object applies a call's operations one by one (core/counter-table.ts), so each request gets exactly the replies it
// would get if the requests had been sent one at a time in arrival order, while a hot key costs the object one call
// per round trip instead of one per request. Pure logic over a `send` function and a timer: no Workers imports.

export interface CoalescerOptions {
  /** Calls in flight to one object at a time (COUNTER_MAX_IN_FLIGHT). */
  maxInFlight: number;
  /** How long a call may be held back to gather more operations (COUNTER_BATCH_LINGER_MS); 0 sends at once. */
  lingerMs: number;
  /** Most operations one call carries; what is over waits for the next call (bounds one RPC's size). */
  maxOperationsPerCall: number;
}

/** The timer the linger uses, replaceable in tests. */
export interface CoalescerTimer {
  schedule(ms: number, run: () => void): void;
}

const realTimer: CoalescerTimer = { schedule: (ms, run) => void setTimeout(run, ms) };

interface Waiting<Operation, Reply> {
  operations: Operation[];
  resolve(replies: Reply[]): void;
  reject(error: unknown): void;
}

interface ObjectQueue<Operation, Reply> {
  waiting: Waiting<Operation, Reply>[];
  inFlight: number;
  /** Whether a linger timer is pending. */
  timerPending: boolean;
  /** Whether the next call has lingered long enough: it goes at the next chance. */
  lingerOver: boolean;
}

/** What the coalescer did, for statistics and benchmarks. */
export interface CoalescerActivity {
  /** Calls sent to objects. */
  calls: number;
  /** Requests' operation groups those calls carried (calls / groups: how much coalescing saved). */
  groups: number;
}

export class CallCoalescer<Operation, Reply> {
  private readonly queues = new Map<string, ObjectQueue<Operation, Reply>>();
  private activity: CoalescerActivity = { calls: 0, groups: 0 };

  constructor(
    private readonly send: (object: string, operations: Operation[]) => Promise<Reply[]>,
    private readonly options: CoalescerOptions,
    private readonly timer: CoalescerTimer = realTimer,
  ) {}

  /** Sends `operations` to `object` in its turn; resolves with one reply per operation, in order. */
  submit(object: string, operations: Operation[]): Promise<Reply[]> {
    let queue = this.queues.get(object);
    if (!queue) this.queues.set(object, (queue = { waiting: [], inFlight: 0, timerPending: false, lingerOver: false }));
    const reply = new Promise<Reply[]>((resolve, reject) => queue.waiting.push({ operations, resolve, reject }));
    this.pump(object, queue);
    return reply;
  }

  /** Objects with a call in flight or operations waiting (for tests: an idle object leaves no state behind). */
  get busyObjects(): number {
    return this.queues.size;
  }

  /** What was done since the last call. */
  takeActivity(): CoalescerActivity {
    const taken = this.activity;
    this.activity = { calls: 0, groups: 0 };
    return taken;
  }

  private pump(object: string, queue: ObjectQueue<Operation, Reply>): void {
    while (queue.waiting.length > 0 && queue.inFlight < this.options.maxInFlight) {
      if (this.options.lingerMs > 0 && !queue.lingerOver && !this.batchIsFull(queue)) {
        if (!queue.timerPending) {
          queue.timerPending = true;
          this.timer.schedule(this.options.lingerMs, () => {
            queue.timerPending = false;
            queue.lingerOver = true;
            this.pump(object, queue);
          });
        }
        break;
      }
      queue.lingerOver = false;
      this.sendNext(object, queue);
    }
    const idle = queue.waiting.length === 0 && queue.inFlight === 0 && !queue.timerPending;
    if (idle && this.queues.get(object) === queue) this.queues.delete(object);
  }

  private batchIsFull(queue: ObjectQueue<Operation, Reply>): boolean {
    let operations = 0;
    for (const waiting of queue.waiting) {
      operations += waiting.operations.length;
      if (operations >= this.options.maxOperationsPerCall) return true;
    }
    return false;
  }

  /** Takes the waiting groups that fit one call (always at least one) and sends them together. */
  private sendNext(object: string, queue: ObjectQueue<Operation, Reply>): void {
    const batch: Waiting<Operation, Reply>[] = [];
    let operations = 0;
    while (queue.waiting.length > 0) {
      const next = queue.waiting[0];
      if (batch.length > 0 && operations + next.operations.length > this.options.maxOperationsPerCall) break;
      batch.push(queue.waiting.shift()!);
      operations += next.operations.length;
    }
    queue.inFlight++;
    this.activity.calls++;
    this.activity.groups += batch.length;
    const settle = () => {
      queue.inFlight--;
      this.pump(object, queue);
    };
    let sent: Promise<Reply[]>;
    try {
      sent = this.send(
        object,
        batch.flatMap((waiting) => waiting.operations),
      );
    } catch (error) {
      sent = Promise.reject(error);
    }
    sent.then(
      (replies) => {
        if (replies.length !== operations) {
          const error = new Error(`counter object ${object} answered ${replies.length} replies to ${operations}`);
          for (const waiting of batch) waiting.reject(error);
          return settle();
        }
        let offset = 0;
        for (const waiting of batch) {
          waiting.resolve(replies.slice(offset, offset + waiting.operations.length));
          offset += waiting.operations.length;
        }
        settle();
      },
      (error: unknown) => {
        for (const waiting of batch) waiting.reject(error);
        settle();
      },
    );
  }
}
