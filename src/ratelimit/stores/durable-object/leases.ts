// Fixed-window counters answered from leased shares (core/lease-cache.ts): the calls, the waits and the idle
// give-back around the pure cache. Calls go through the store's coalescer, so a lease ask travels with the other
// operations this isolate has for the same object.
import { CoalescedWaitTimeout } from "../../core/call-coalescer";
import type { CounterOperation, ObjectReply } from "../../core/counter-table";
import type { LeaseReply } from "../../core/counter-leases";
import type { Ask, LeaseCache, LeasedItem } from "../../core/lease-cache";
import type { CounterIncrement } from "../../core/types";

// The Workers runtime ties each timer and call to the request that made it, and a request woken by another request's
// promise may resume in that request's context, where its calls can fail (see core/call-coalescer.ts). So a request
// that waits for another's lease call is either answered by that call's request from the new share (a pure take, no
// I/O on its behalf), or, when the share does not reach it, goes on from a poll timer of its own (every WAIT_POLL_MS)
// and makes its calls there. Calls are made only in a request's own flow: at arrival, from its own timer, or as a
// background refill or idle watcher started there and kept alive by its waitUntil. A watcher lives at most
// WATCHER_HANDOFF_MS: a later hit starts a fresh one in its own request, and the old one stops.

/** How often a waiting request the share did not reach looks again from its own timer (about a call's round trip). */
const WAIT_POLL_MS = 2;

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
  /** Most operations one call carries (as the coalescer's bound): requests counted per request travel in such calls. */
  maxOperationsPerCall: number;
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

/** A request waiting for another's lease call: answered by another request, or told to look again itself. */
interface Waiter {
  item: LeasedItem;
  /** Its arrival among this isolate's leased requests: waiting requests are answered in this order. */
  arrival: number;
  /** Another request now answers it: its poll timer no longer tells it to look again. */
  claim(): void;
  answer(count: number): void;
  fail(error: unknown): void;
}

const countOf = (reply: ObjectReply | undefined): number => {
  if (typeof reply !== "number") throw new Error("counter object answered a count with another reply");
  return reply;
};

const plainOperation = (item: LeasedItem): CounterOperation => ({
  key: item.key,
  hits: item.hits,
  windowEnd: item.windowEnd,
  windowSeconds: item.windowSeconds,
});

export class LeasedCounters {
  private readonly waiters = new Map<string, Waiter[]>();
  private watcher: { generation: number; startedMs: number } | undefined;
  private generation = 0;
  private arrivals = 0;

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
    const arrivalNumber = this.arrivals++;
    const waitEndMs = Date.now() + this.options.maxWaitMs;
    for (let arrival = true; ; arrival = false) {
      const now = Date.now();
      const answered = this.cache.take(item, now, arrival);
      if (answered !== undefined) {
        this.afterTake(item, now);
        return answered;
      }
      const plan = this.cache.plan(item, now);
      if (plan.kind === "lead") return this.lead(item, plan.ask, item.hits);
      if (plan.kind === "plain") return this.plainWithWaiting(item, arrivalNumber);
      if (now >= waitEndMs) throw new CoalescedWaitTimeout(item.counterName, this.options.maxWaitMs);
      const count = await this.waitFor(item, arrivalNumber, Math.min(WAIT_POLL_MS, waitEndMs - now), waitEndMs);
      if (count !== undefined) return count;
    }
  }

  /** Reads a counter: from the share while one is held, else from the object. */
  async read(increment: CounterIncrement, limit: number): Promise<number> {
    const item = toItem({ ...increment, hits: 0 }, limit);
    const answered = this.cache.take(item, Date.now(), false);
    if (answered !== undefined) return answered;
    return countOf((await this.call(this.objectOf(item.counterName), [plainOperation(item)]))[0]);
  }

  /**
   * Counts per request (the object lends nothing now), and takes along, in arrival order, the requests waiting on the
   * same counter that the share does not reach: they would count per request too, and this request's own flow can
   * make their call (they cannot, woken in another's context, without waiting for their own poll timers).
   */
  private async plainWithWaiting(item: LeasedItem, arrival: number): Promise<number> {
    const riders = this.claimWaiting(item);
    const own = { item, arrival };
    const batch = [...riders, own].sort((a, b) => a.arrival - b.arrival);
    let counts: number[];
    try {
      const replies = await this.call(
        this.objectOf(item.counterName),
        batch.map((entry) => plainOperation(entry.item)),
      );
      counts = replies.map(countOf);
    } catch (error) {
      for (const rider of riders) rider.fail(error);
      throw error;
    }
    let ownCount = 0;
    batch.forEach((entry, i) => (entry === own ? (ownCount = counts[i]) : (entry as Waiter).answer(counts[i])));
    return ownCount;
  }

  /** Claims the requests waiting on `item`'s counter and window: those the share covers are answered at once. */
  private claimWaiting(item: LeasedItem): Waiter[] {
    const list = this.waiters.get(item.counterName);
    if (!list) return [];
    const now = Date.now();
    const riders: Waiter[] = [];
    for (let i = 0; i < list.length && riders.length < this.options.maxOperationsPerCall - 1;) {
      const waiter = list[i];
      if (waiter.item.key !== item.key) {
        i++;
        continue;
      }
      list.splice(i, 1);
      waiter.claim();
      const count = this.cache.take(waiter.item, now, false);
      if (count === undefined) riders.push(waiter);
      else waiter.answer(count);
    }
    if (list.length === 0) this.waiters.delete(item.counterName);
    return riders;
  }

  /** Makes the call that carries `ask` (and `hits`, this request's own); wakes the requests waiting for it. */
  private async lead(item: LeasedItem, ask: Ask, hits: number): Promise<number> {
    // Armed before the call, in this request's own flow: the reply may resume in another request's context.
    this.armWatcher(Date.now());
    try {
      const [reply] = await this.call(this.objectOf(item.counterName), [operationOf(item, ask, hits)]);
      const lease = leaseReplyOf(reply);
      this.cache.settle(item, ask, lease, Date.now());
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

  /**
   * Waits in this request's own flow: resolves with the count when another request answers it (from the new share, or
   * in its per-request call), or with undefined after `pollMs` (look again; the poll timer is this request's own).
   * Claimed by another request, it keeps its own guard timer until `waitEndMs`, failing then: the runtime cancels a
   * request with nothing pending as hung. Each request keeps its own timers, and clearing one from another request's
   * context does nothing (measured: claimed requests then looked again and counted their hits twice), so another
   * request only sets flags, and the timers check them when they fire.
   */
  private waitFor(item: LeasedItem, arrival: number, pollMs: number, waitEndMs: number): Promise<number | undefined> {
    return new Promise<number | undefined>((resolve, reject) => {
      const list = this.waiters.get(item.counterName) ?? [];
      this.waiters.set(item.counterName, list);
      let claimed = false;
      let settled = false;
      const leave = () => {
        const at = list.indexOf(waiter);
        if (at >= 0) list.splice(at, 1);
        if (list.length === 0 && this.waiters.get(item.counterName) === list) this.waiters.delete(item.counterName);
      };
      const guard = setTimeout(
        () => {
          if (settled) return;
          settled = true;
          leave();
          reject(new CoalescedWaitTimeout(item.counterName, this.options.maxWaitMs));
        },
        Math.max(0, waitEndMs - Date.now()),
      );
      setTimeout(() => {
        if (claimed || settled) return;
        settled = true;
        clearTimeout(guard);
        leave();
        resolve(undefined);
      }, pollMs);
      const waiter: Waiter = {
        item,
        arrival,
        claim: () => (claimed = true),
        answer: (count) => {
          if (settled) return;
          settled = true;
          resolve(count);
        },
        fail: (error) => {
          if (settled) return;
          settled = true;
          reject(error);
        },
      };
      let at = list.length;
      while (at > 0 && list[at - 1].arrival > arrival) at--;
      list.splice(at, 0, waiter);
    });
  }

  /**
   * Answers, in arrival order, the waiting requests the share now reaches; only takes from the cache, since this may
   * run in another request's context. The rest look again from their own poll timers.
   */
  private wake(counterName: string): void {
    const list = this.waiters.get(counterName);
    if (!list) return;
    const now = Date.now();
    while (list.length > 0 && this.cache.covers(list[0].item)) {
      const waiter = list.shift()!;
      waiter.claim();
      waiter.answer(this.cache.take(waiter.item, now, false)!);
    }
    if (list.length === 0) this.waiters.delete(counterName);
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
