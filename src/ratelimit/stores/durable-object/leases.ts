// Fixed-window counters answered from leased shares (core/lease-cache.ts): the calls, the waits and the idle
// give-back around the pure cache. Calls go through the store's coalescer, so a lease ask travels with the other
// operations this isolate has for the same object.
import { CoalescedWaitTimeout } from "../../core/call-coalescer";
import type { CounterOperation, ObjectReply } from "../../core/counter-table";
import type { LeaseReply } from "../../core/counter-leases";
import type { Ask, LeaseCache, LeasedItem } from "../../core/lease-cache";
import type { CounterIncrement } from "../../core/types";

// The Workers runtime ties each timer and call to the request that made it: a request that waits for another's call
// waits on a promise it created itself, with a timer of its own (a request with nothing pending is cancelled as hung);
// a background refill and the idle watcher run in the request that started them, kept alive by its waitUntil. A
// watcher lives at most WATCHER_HANDOFF_MS: a later hit starts a fresh one in its own request, and the old one stops.

/** How old an idle watcher is when a later hit starts another in its own request (the old one then stops). */
const WATCHER_HANDOFF_MS = 5_000;
/**
 * Longest one watcher waits in all, well within waitUntil's 30 s: reached only if no hit came for that long while a
 * share never idled, which a moving clock rules out (a frozen one, as in tests, does not).
 */
const WATCHER_MAX_MS = 20_000;

export interface LeasedCountersOptions {
  /** Longest a request waits for another request's call (as the coalescer's bound). */
  maxWaitMs: number;
  /** The give-back delay (the cache's idleMs): the watcher's first wait. */
  idleMs: number;
}

const toItem = (item: CounterIncrement, limit: number): LeasedItem => ({
  key: item.key,
  counterName: item.counterName,
  hits: item.hits,
  windowEnd: item.windowEnd,
  windowSeconds: item.windowSeconds,
  limit,
});

const operationOf = (item: LeasedItem, ask: Ask, hits: number): CounterOperation => ({
  key: item.key,
  hits,
  windowEnd: item.windowEnd,
  windowSeconds: item.windowSeconds,
  lease: ask,
});

function leaseReplyOf(reply: ObjectReply | undefined): LeaseReply {
  if (typeof reply === "object" && reply.kind === "lease") return reply;
  throw new Error("counter object answered a lease without its share");
}

export class LeasedCounters {
  private readonly waiters = new Map<string, (() => void)[]>();
  private watcher: { generation: number; startedMs: number } | undefined;
  private generation = 0;

  /**
   * @param call one call to the named object (admission and coalescing included)
   * @param objectOf the object holding a counter
   * @param keepAlive the current request's waitUntil
   */
  constructor(
    private readonly cache: LeaseCache,
    private readonly call: (object: string, operations: CounterOperation[]) => Promise<ObjectReply[]>,
    private readonly objectOf: (counterName: string) => string,
    private readonly keepAlive: (work: Promise<unknown>) => void,
    private readonly options: LeasedCountersOptions,
  ) {}

  /** Counts a fixed-window item judged against `limit`; resolves with the count after its hits, as the object would. */
  async increment(increment: CounterIncrement, limit: number): Promise<number> {
    const item = toItem(increment, limit);
    for (let arrival = true; ; arrival = false) {
      const now = Date.now();
      const answered = this.cache.take(item, now, arrival);
      if (answered !== undefined) {
        this.afterTake(item, now);
        return answered;
      }
      const plan = this.cache.plan(item, now);
      if (plan.kind === "lead") return this.lead(item, plan.ask, item.hits);
      if (plan.kind === "plain") return this.plain(item, item.hits);
      await this.waitFor(item.counterName);
    }
  }

  /** Reads a counter: from the share while one is held, else from the object. */
  async read(increment: CounterIncrement, limit: number): Promise<number> {
    const item = toItem({ ...increment, hits: 0 }, limit);
    return this.cache.take(item, Date.now(), false) ?? this.plain(item, 0);
  }

  private async plain(item: LeasedItem, hits: number): Promise<number> {
    const [reply] = await this.call(this.objectOf(item.counterName), [
      { key: item.key, hits, windowEnd: item.windowEnd, windowSeconds: item.windowSeconds },
    ]);
    if (typeof reply !== "number") throw new Error("counter object answered a count with another reply");
    return reply;
  }

  /** Makes the call that carries `ask` (and `hits`, this request's own); wakes the requests waiting for it. */
  private async lead(item: LeasedItem, ask: Ask, hits: number): Promise<number> {
    try {
      const [reply] = await this.call(this.objectOf(item.counterName), [operationOf(item, ask, hits)]);
      const lease = leaseReplyOf(reply);
      this.cache.settle(item, ask, lease, Date.now());
      if (lease.granted > 0) this.armWatcher(Date.now());
      return lease.count;
    } catch (error) {
      this.cache.failed(item, ask);
      throw error;
    } finally {
      this.wake(item.counterName);
    }
  }

  private afterTake(item: LeasedItem, now: number): void {
    const ask = this.cache.refill(item, now);
    if (ask) this.keepAlive(this.lead({ ...item, hits: 0 }, ask, 0).catch(() => {}));
    this.armWatcher(now);
  }

  private waitFor(counterName: string): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const list = this.waiters.get(counterName) ?? [];
      this.waiters.set(counterName, list);
      const wake = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        const at = list.indexOf(wake);
        if (at >= 0) list.splice(at, 1);
        reject(new CoalescedWaitTimeout(counterName, this.options.maxWaitMs));
      }, this.options.maxWaitMs);
      list.push(wake);
    });
  }

  private wake(counterName: string): void {
    const list = this.waiters.get(counterName);
    if (!list) return;
    this.waiters.delete(counterName);
    for (const wake of list) wake();
  }

  /** Starts an idle watcher in this request unless a young one runs. */
  private armWatcher(now: number): void {
    if (this.watcher && now - this.watcher.startedMs < WATCHER_HANDOFF_MS) return;
    const generation = ++this.generation;
    this.watcher = { generation, startedMs: now };
    this.keepAlive(this.watch(generation));
  }

  /** Gives back the units of counters idle for idleMs, for as long as units are held and no newer watcher runs. */
  private async watch(generation: number): Promise<void> {
    let delay = this.options.idleMs;
    for (let waited = 0; this.watcher?.generation === generation && waited < WATCHER_MAX_MS; waited += delay) {
      await new Promise((wake) => setTimeout(wake, delay));
      if (this.watcher?.generation !== generation) return;
      const backs = this.cache.idle(Date.now());
      await Promise.all(
        backs.map(({ item, ask }) =>
          this.call(this.objectOf(item.counterName), [operationOf(item, ask, 0)]).catch(() => {}),
        ),
      );
      const next = this.cache.nextIdleCheck(Date.now());
      if (next === undefined) {
        if (this.watcher?.generation === generation) this.watcher = undefined;
        return;
      }
      delay = next;
    }
    if (this.watcher?.generation === generation) this.watcher = undefined;
  }
}
