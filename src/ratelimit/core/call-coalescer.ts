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
  /** Longest a request waits for its turn or its replies before it fails (the object is stuck or gone). */
  maxWaitMs: number;
  /**
   * How often a waiting request checks, in its own context, that a call is in flight for what waits, and makes one
   * itself if none is (the request that was calling has stopped or was cancelled).
   */
  handoffMs: number;
}

/** The timer the linger and the wait bound use, replaceable in tests; `schedule` returns its cancel. */
export interface CoalescerTimer {
  schedule(ms: number, run: () => void): () => void;
  now(): number;
}

const realTimer: CoalescerTimer = {
  now: () => Date.now(),
  schedule: (ms, run) => {
    const handle = setTimeout(run, ms);
    return () => clearTimeout(handle);
  },
};

/** A request waited longer than maxWaitMs for its turn or its replies. */
export class CoalescedWaitTimeout extends Error {
  constructor(object: string, waitedMs: number) {
    super(`waited ${waitedMs} ms for counter object ${object}`);
    this.name = "CoalescedWaitTimeout";
  }
}

/** What a waiting request learns: its replies from a call, or why it has none. */
type Turn<Reply> = { kind: "replies"; replies: Reply[] } | { kind: "failed"; error: unknown };

interface Waiting<Operation, Reply> {
  operations: Operation[];
  tell(turn: Turn<Reply>): void;
}

/** One run of calls in flight to an object, made by one request in its own context; `since` its latest call's start. */
interface CallSlot {
  since: number;
}

interface ObjectQueue<Operation, Reply> {
  waiting: Waiting<Operation, Reply>[];
  /** Runs of calls in flight, with when each one's latest call began. */
  calls: Set<CallSlot>;
  /** Wakes a lingering run early (its call is full); undefined when none lingers. */
  wakeLeader: (() => void) | undefined;
}

/** What the coalescer did, for statistics and benchmarks. */
export interface CoalescerActivity {
  /** Calls sent to objects. */
  calls: number;
  /** Requests' operation groups those calls carried (calls / groups: how much coalescing saved). */
  groups: number;
}

/**
 * The Workers runtime ties every I/O (an RPC, a timer) to the request that started it. A request woken by another
 * request's promise may resume in that other request's context: measured under wrangler dev, one 2,000-hit burst in
 * about ten had a woken request's RPC refused with "Cannot perform I/O on behalf of a different request (I/O type:
 * SpanParent)", and a woken request's own timer can die with the other request. So a woken request only takes its
 * replies; calls are made only by a request in its own flow: the one that finds a slot free when it arrives (and goes
 * on calling for what waits, kept alive by its `keepAlive`, the request's waitUntil, for at most maxWaitMs), or a
 * waiting request whose own check timer (every handoffMs) finds no call in flight.
 */
export class CallCoalescer<Operation, Reply> {
  private readonly queues = new Map<string, ObjectQueue<Operation, Reply>>();
  private activity: CoalescerActivity = { calls: 0, groups: 0 };

  constructor(
    private readonly send: (object: string, operations: Operation[]) => Promise<Reply[]>,
    private readonly options: CoalescerOptions,
    private readonly timer: CoalescerTimer = realTimer,
    private readonly keepAlive: (work: Promise<unknown>) => void = () => {},
  ) {}

  /** Sends `operations` to `object` in its turn; resolves with one reply per operation, in order. */
  async submit(object: string, operations: Operation[]): Promise<Reply[]> {
    let queue = this.queues.get(object);
    if (!queue) this.queues.set(object, (queue = { waiting: [], calls: new Set(), wakeLeader: undefined }));
    let waiting!: Waiting<Operation, Reply>;
    const turn = new Promise<Turn<Reply>>((tell) => queue.waiting.push((waiting = { operations, tell })));
    const stopWatching = this.watch(object, queue, waiting);
    if (queue.wakeLeader && this.isFull(queue)) queue.wakeLeader();
    this.startCallsIfFree(object, queue);
    const told = await turn.finally(stopWatching);
    if (told.kind === "failed") throw told.error;
    return told.replies;
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

  /**
   * The waiting request's own timers: it fails after maxWaitMs, and every handoffMs it checks that a call is in flight
   * for what waits, making one itself if none is (the run that was calling ended, or its request was cancelled). Told
   * in another request's context, the cancel does nothing (the Workers runtime keeps each request's timers apart), so
   * both callbacks first check that the request still waits; a late one is harmless.
   */
  private watch(object: string, queue: ObjectQueue<Operation, Reply>, waiting: Waiting<Operation, Reply>) {
    // One timer at a time per waiting request (timers cost a measured 6 % of a hot key's decision CPU): each check
    // fails the request once maxWaitMs has passed; while it waits in the queue, it also makes sure a call is in flight.
    // The timer is also the waiting request's own pending I/O: without one, workerd takes a request that waits only on
    // other requests' promises as hung and cancels it (measured without it: 1,410 of 1,500 hits on one key answered
    // 500 "...your Worker's code had hung and would never generate a response").
    const started = this.timer.now();
    let told = false;
    let cancel = () => {};
    // The timer that reaches maxWaitMs gives up when it fires, whatever the clock says (workerd's stands still
    // between I/O).
    const next = (waited: number, queued: boolean) => {
      const left = this.options.maxWaitMs - waited;
      const delay = queued ? Math.min(this.options.handoffMs, left) : left;
      cancel = this.timer.schedule(delay, () => check(delay === left));
    };
    const check = (atDeadline: boolean) => {
      if (told) return;
      const waited = Math.min(this.timer.now() - started, this.options.maxWaitMs);
      if (atDeadline || waited >= this.options.maxWaitMs) return this.giveUp(object, queue, waiting);
      const queued = queue.waiting.includes(waiting);
      if (queued) this.startCallsIfFree(object, queue);
      next(waited, queued);
    };
    next(0, true);
    return () => {
      told = true;
      cancel();
    };
  }

  /** The request waited maxWaitMs for its turn or its replies: it fails, and what waits behind it goes on. */
  private giveUp(object: string, queue: ObjectQueue<Operation, Reply>, waiting: Waiting<Operation, Reply>): void {
    const index = queue.waiting.indexOf(waiting);
    if (index >= 0) queue.waiting.splice(index, 1);
    waiting.tell({ kind: "failed", error: new CoalescedWaitTimeout(object, this.options.maxWaitMs) });
    this.startCallsIfFree(object, queue);
    this.forgetIfIdle(object, queue);
  }

  /**
   * In the current request's own context: if operations wait and fewer than maxInFlight runs call the object, starts a
   * run. A run whose latest call began more than maxWaitMs ago no longer counts: its request was cancelled mid-call.
   */
  private startCallsIfFree(object: string, queue: ObjectQueue<Operation, Reply>): void {
    const now = this.timer.now();
    for (const call of queue.calls) if (now - call.since > this.options.maxWaitMs) queue.calls.delete(call);
    if (queue.waiting.length === 0 || queue.calls.size >= this.options.maxInFlight) return;
    const slot: CallSlot = { since: now };
    queue.calls.add(slot);
    this.keepAlive(this.runCalls(object, queue, slot));
  }

  /** Calls for what waits, one call after another, until nothing waits or maxWaitMs has passed since the first. */
  private async runCalls(object: string, queue: ObjectQueue<Operation, Reply>, slot: CallSlot): Promise<void> {
    const until = this.timer.now() + this.options.maxWaitMs;
    try {
      while (queue.waiting.length > 0 && this.timer.now() <= until) {
        slot.since = this.timer.now();
        await this.linger(queue);
        const batch = this.takeBatch(queue);
        if (batch.length === 0) break;
        await this.callFor(object, batch);
      }
    } finally {
      queue.calls.delete(slot);
      this.forgetIfIdle(object, queue);
    }
  }

  private forgetIfIdle(object: string, queue: ObjectQueue<Operation, Reply>): void {
    if (queue.waiting.length === 0 && queue.calls.size === 0 && this.queues.get(object) === queue)
      this.queues.delete(object);
  }

  private isFull(queue: ObjectQueue<Operation, Reply>): boolean {
    let operations = 0;
    for (const waiting of queue.waiting) {
      operations += waiting.operations.length;
      if (operations >= this.options.maxOperationsPerCall) return true;
    }
    return false;
  }

  private async linger(queue: ObjectQueue<Operation, Reply>): Promise<void> {
    if (this.options.lingerMs <= 0 || this.isFull(queue)) return;
    await new Promise<void>((wake) => {
      const cancel = this.timer.schedule(this.options.lingerMs, wake);
      queue.wakeLeader = () => {
        cancel();
        wake();
      };
    });
    queue.wakeLeader = undefined;
  }

  /** The first waiting request, and those after it in arrival order within the per-call cap. */
  private takeBatch(queue: ObjectQueue<Operation, Reply>): Waiting<Operation, Reply>[] {
    const batch: Waiting<Operation, Reply>[] = [];
    let operations = 0;
    while (queue.waiting.length > 0) {
      const next = queue.waiting[0].operations.length;
      if (batch.length > 0 && operations + next > this.options.maxOperationsPerCall) break;
      batch.push(queue.waiting.shift()!);
      operations += next;
    }
    return batch;
  }

  /** One call carrying the batch's operations; tells each request its replies, or the call's failure. */
  private async callFor(object: string, batch: Waiting<Operation, Reply>[]): Promise<void> {
    this.activity.calls++;
    this.activity.groups += batch.length;
    try {
      const replies = await this.call(
        object,
        batch.map((waiting) => waiting.operations),
      );
      batch.forEach((waiting, i) => waiting.tell({ kind: "replies", replies: replies[i] }));
    } catch (error) {
      for (const waiting of batch) waiting.tell({ kind: "failed", error });
    }
  }

  /** One call carrying these groups of operations; resolves with each group's replies. */
  private async call(object: string, groups: Operation[][]): Promise<Reply[][]> {
    const operations = groups.flat();
    const replies = await this.send(object, operations);
    if (replies.length !== operations.length)
      throw new Error(`counter object ${object} answered ${replies.length} replies to ${operations.length}`);
    let offset = 0;
    return groups.map((group) => replies.slice(offset, (offset += group.length)));
  }
}
