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
   * How long a request told to lead has to start its call before the request that told it makes the call itself (the
   * told request has ended, and workerd dropped its continuation).
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

/** What a waiting request learns: lead the next call itself, or its replies from a call another request led. */
type Turn<Reply> =
  { kind: "lead"; call: CallSlot } | { kind: "replies"; replies: Reply[] } | { kind: "failed"; error: unknown };

interface Waiting<Operation, Reply> {
  operations: Operation[];
  tell(turn: Turn<Reply>): void;
}

/**
 * One call in flight, from when its leader is told its turn: `told` until the leader starts, `abandoned` when another
 * request took the turn over because the leader did not start within handoffMs.
 */
interface CallSlot {
  since: number;
  state: "told" | "leading" | "abandoned";
  /** Ends the telling request's check early (its keepAlive need not last handoffMs). */
  started?: () => void;
}

interface ObjectQueue<Operation, Reply> {
  waiting: Waiting<Operation, Reply>[];
  /** Calls in flight, counting a leader told its turn or still lingering, with when each began. */
  calls: Set<CallSlot>;
  /** Wakes the lingering leader early (its call is full); undefined when none lingers. */
  wakeLeader: (() => void) | undefined;
  /** Operations of the lingering leader itself. */
  leaderOperations: number;
}

/** What the coalescer did, for statistics and benchmarks. */
export interface CoalescerActivity {
  /** Calls sent to objects. */
  calls: number;
  /** Requests' operation groups those calls carried (calls / groups: how much coalescing saved). */
  groups: number;
}

/**
 * The Workers runtime ties every I/O (an RPC, a timer) to the request that started it and cancels it when that request
 * ends. So a call is always made, and its linger timed, by a request it carries (the leader); a request that waits is
 * told its turn or its replies through a promise it created itself, whose continuation runs in its own context.
 * `keepAlive` (the request's waitUntil) keeps the leader's context alive until every request it carries is answered,
 * even if its own client has gone. workerd drops a continuation resolved for a request that has already ended (its
 * client went away on Cloudflare, or the gRPC route answered at its deadline), so such a waiter never leads when told
 * to: the request that told it (alive, under its keepAlive) checks after handoffMs and, if the call has not started,
 * makes it itself for the requests still waiting.
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
    if (!queue)
      this.queues.set(object, (queue = { waiting: [], calls: new Set(), wakeLeader: undefined, leaderOperations: 0 }));
    let waiting!: Waiting<Operation, Reply>;
    const turn = new Promise<Turn<Reply>>((tell) => queue.waiting.push((waiting = { operations, tell })));
    const cancelTimer = this.timer.schedule(this.options.maxWaitMs, () => {
      const index = queue.waiting.indexOf(waiting);
      if (index >= 0) queue.waiting.splice(index, 1);
      waiting.tell({ kind: "failed", error: new CoalescedWaitTimeout(object, this.options.maxWaitMs) });
      this.pump(object, queue, waiting);
    });
    if (queue.wakeLeader && this.isFull(queue)) queue.wakeLeader();
    this.pump(object, queue, waiting);
    const told = await turn.finally(cancelTimer);
    if (told.kind === "replies") return told.replies;
    if (told.kind === "failed") throw told.error;
    return this.lead(object, queue, told.call, operations);
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
   * Makes the first waiting request the leader of a call while fewer than maxInFlight are in flight, run by a request
   * whose context is alive (`self`: the pumping request's own entry, which needs no check). A call older than
   * maxWaitMs no longer counts: its leader's request was cancelled while its call was in flight, and the queue must
   * not stay blocked behind it.
   */
  private pump(object: string, queue: ObjectQueue<Operation, Reply>, self?: Waiting<Operation, Reply>): void {
    const now = this.timer.now();
    for (const call of queue.calls) if (now - call.since > this.options.maxWaitMs) queue.calls.delete(call);
    while (queue.waiting.length > 0 && queue.calls.size < this.options.maxInFlight) {
      const call: CallSlot = { since: now, state: "told" };
      queue.calls.add(call);
      const leader = queue.waiting.shift()!;
      leader.tell({ kind: "lead", call });
      if (leader !== self) this.checkHandoff(object, queue, call);
    }
    if (queue.waiting.length === 0 && queue.calls.size === 0 && this.queues.get(object) === queue)
      this.queues.delete(object);
  }

  /**
   * In the telling request's context, kept alive by its keepAlive: if the told leader has not started its call within
   * handoffMs, its turn is taken over and this request calls for what waits (the told one queues again if it wakes).
   */
  private checkHandoff(object: string, queue: ObjectQueue<Operation, Reply>, call: CallSlot): void {
    const checked = new Promise<void>((done) => {
      call.started = done;
      this.timer.schedule(this.options.handoffMs, () => {
        if (call.state !== "told") return done();
        call.state = "abandoned";
        queue.calls.delete(call);
        done(this.takeOver(object, queue));
      });
    });
    this.keepAlive(checked);
  }

  /** Leads one call with no operations of its own for the requests waiting, if a call may start. */
  private async takeOver(object: string, queue: ObjectQueue<Operation, Reply>): Promise<void> {
    if (queue.waiting.length === 0 || queue.calls.size >= this.options.maxInFlight) return this.pump(object, queue);
    const call: CallSlot = { since: this.timer.now(), state: "told" };
    queue.calls.add(call);
    await this.lead(object, queue, call, []).catch(() => {});
  }

  private isFull(queue: ObjectQueue<Operation, Reply>): boolean {
    let operations = queue.leaderOperations;
    for (const waiting of queue.waiting) {
      operations += waiting.operations.length;
      if (operations >= this.options.maxOperationsPerCall) return true;
    }
    return operations >= this.options.maxOperationsPerCall;
  }

  /** Run by the leader, in its own request: lingers, takes what waits (up to the cap) and makes the call. */
  private async lead(
    object: string,
    queue: ObjectQueue<Operation, Reply>,
    slot: CallSlot,
    own: Operation[],
  ): Promise<Reply[]> {
    // Woken after another request took this turn over: queue again, as a request arriving now.
    if (slot.state === "abandoned") return this.submit(object, own);
    slot.state = "leading";
    slot.started?.();
    try {
      await this.linger(queue, own.length);
      const others = this.takeFollowers(queue, own.length);
      if (own.length === 0 && others.length === 0) return [];
      this.activity.calls++;
      this.activity.groups += (own.length > 0 ? 1 : 0) + others.length;
      const call = this.call(object, [own, ...others.map((waiting) => waiting.operations)]);
      const answered = call.then(
        ([mine, ...theirs]) => {
          others.forEach((waiting, i) => waiting.tell({ kind: "replies", replies: theirs[i] }));
          return mine;
        },
        (error: unknown) => {
          for (const waiting of others) waiting.tell({ kind: "failed", error });
          throw error;
        },
      );
      this.keepAlive(answered.catch(() => {}));
      return await answered;
    } finally {
      queue.calls.delete(slot);
      this.pump(object, queue);
    }
  }

  private async linger(queue: ObjectQueue<Operation, Reply>, ownOperations: number): Promise<void> {
    if (this.options.lingerMs <= 0) return;
    queue.leaderOperations = ownOperations;
    if (!this.isFull(queue)) {
      await new Promise<void>((wake) => {
        const cancel = this.timer.schedule(this.options.lingerMs, wake);
        queue.wakeLeader = () => {
          cancel();
          wake();
        };
      });
    }
    queue.wakeLeader = undefined;
    queue.leaderOperations = 0;
  }

  /** The waiting requests that join the leader's call, in arrival order, within the per-call cap. */
  private takeFollowers(queue: ObjectQueue<Operation, Reply>, ownOperations: number): Waiting<Operation, Reply>[] {
    const followers: Waiting<Operation, Reply>[] = [];
    let operations = ownOperations;
    while (queue.waiting.length > 0) {
      const next = queue.waiting[0].operations.length;
      if (operations + next > this.options.maxOperationsPerCall) break;
      followers.push(queue.waiting.shift()!);
      operations += next;
    }
    return followers;
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
