// The borrowing side of counter leases, per isolate: the shares of fixed-window quota this isolate holds, one per
// counter, and what it asks its counter objects for (core/counter-leases.ts lends). Pure logic over the caller's
// clock: no Workers imports; stores/durable-object/leases.ts wires it to the calls, the waits and the idle timer.
import type { LeaseAsk } from "./counter-leases";

// - A hit is answered from the share while the share covers it: no call. The answer is the count `view + hits`, where
//   `view` is the object's count at its last answer to this isolate, less this isolate's unused units then, plus the
//   hits it answered since; so `limit − view` (the limitRemaining the limiter derives) is the remainder as this
//   isolate last learnt it, counting other isolates' shares as used, less what it admitted since.
// - When the share does not cover a hit, one request (the leader) makes the call: its hits, counted by the object as
//   any, and an ask for a new share; the others for that counter wait for its answer and try the share again.
// - An ask is sized to this isolate's own traffic on the counter: its measured arrival rate times the larger of two
//   round trips and `minSpanMs`, plus the hits waiting, within `maxUnits` held at once. A refill is asked in the
//   background once the share falls below half of that, so a steady stream never waits for a call.
// - After a zero grant (the remainder is too small to lend) the counter is counted one call per request (still
//   coalesced) for `retryMs` before it asks again.
// - Units unused for `idleMs` are given back; at the window's end they are void (the object counts them expired).

/** A fixed-window counter operation that may be answered from a share. */
export interface LeasedItem {
  key: string;
  counterName: string;
  hits: number;
  /** Unix seconds. */
  windowEnd: number;
  windowSeconds: number;
  /** The limit the count is judged against. */
  limit: number;
}

export interface LeaseCacheOptions {
  /** This isolate's holder id (random). */
  holder: string;
  /** Most units of one counter this isolate holds at once (COUNTER_LEASE_MAX_UNITS). */
  maxUnits: number;
  /** A share covers at least this many milliseconds of this isolate's traffic on the counter. */
  minSpanMs: number;
  /** Unused units are given back after the counter has seen no hit for this long. */
  idleMs: number;
  /** After a zero grant, how long the counter is counted per request before the next ask. */
  retryMs: number;
  /** Most counters tracked; the least recently added idle ones are dropped first. */
  maxCounters: number;
}

/** What the isolate sends with an operation to lease. */
export type Ask = LeaseAsk;

/** A give-back to send: the counter's key, window and the ask carrying the unused units. */
export interface GiveBack {
  item: LeasedItem;
  ask: Ask;
}

export type Plan = { kind: "wait" } | { kind: "plain" } | { kind: "lead"; ask: Ask };

interface Counter {
  item: LeasedItem;
  left: number;
  view: number;
  /** Units answered from the share since the last call reported them. */
  used: number;
  inFlight: boolean;
  sentAtMs: number;
  /** Hits of requests waiting for a call's answer, until they try again (they size the next ask). */
  waitingHits: number;
  noLeaseUntilMs: number;
  lastHitMs: number;
  /** Arrivals per millisecond, smoothed over the asks. */
  rate: number;
  rateFromMs: number;
  rateHits: number;
}

/** Counters without units idle for this long are forgotten (their rate is measured again). */
const FORGET_AFTER_MS = 60_000;

export class LeaseCache {
  private readonly counters = new Map<string, Counter>();
  /** The calls' round trip, smoothed; 0 until one is measured. */
  private roundTripMs = 0;

  constructor(private readonly options: LeaseCacheOptions) {}

  /**
   * Answers the item from its share if it covers the hits (a read, 0 hits, only while a share is held): the count
   * after them, as the object would answer. `arrival` counts the hits into the traffic measured (once per request).
   */
  take(item: LeasedItem, nowMs: number, arrival: boolean): number | undefined {
    const counter = this.counterOf(item, nowMs);
    if (arrival) {
      counter.rateHits += item.hits;
      counter.lastHitMs = nowMs;
    } else {
      // A request woken from its wait no longer waits (it waits again, counted again, if it must).
      counter.waitingHits = Math.max(0, counter.waitingHits - item.hits);
    }
    if (counter.left === 0 || counter.left < item.hits) return undefined;
    counter.left -= item.hits;
    counter.used += item.hits;
    counter.view += item.hits;
    return counter.view;
  }

  /** Whether the share covers `item` now, without taking: take would answer it. */
  covers(item: LeasedItem): boolean {
    const counter = this.counters.get(item.counterName);
    return counter !== undefined && counter.item.key === item.key && counter.left > 0 && counter.left >= item.hits;
  }

  /** What a request the share did not cover does: wait for the call in flight, count per request, or lead a call. */
  plan(item: LeasedItem, nowMs: number): Plan {
    const counter = this.counterOf(item, nowMs);
    if (counter.inFlight) {
      counter.waitingHits += item.hits;
      return { kind: "wait" };
    }
    if (nowMs < counter.noLeaseUntilMs) return { kind: "plain" };
    return { kind: "lead", ask: this.ask(counter, nowMs) };
  }

  /** After a hit answered from the share: the ask of a background refill when the share runs low, else undefined. */
  refill(item: LeasedItem, nowMs: number): Ask | undefined {
    const counter = this.counters.get(item.counterName);
    if (!counter || counter.item.key !== item.key || counter.inFlight || nowMs < counter.noLeaseUntilMs) return;
    const forecast = this.forecast(counter);
    if (forecast === 0 || counter.left >= Math.ceil(forecast / 2)) return;
    return this.ask(counter, nowMs);
  }

  /** The object answered the call that carried `ask`: the share grows by the grant and the view is the count's. */
  settle(item: LeasedItem, ask: Ask, reply: { count: number; granted: number }, nowMs: number): void {
    const counter = this.counters.get(item.counterName);
    if (!counter || counter.item.key !== item.key) return;
    const sample = Math.max(0, nowMs - counter.sentAtMs);
    this.roundTripMs = this.roundTripMs === 0 ? sample : 0.8 * this.roundTripMs + 0.2 * sample;
    counter.inFlight = false;
    counter.view = reply.count - counter.left;
    counter.left += reply.granted;
    if (ask.want > 0 && reply.granted === 0) counter.noLeaseUntilMs = nowMs + this.options.retryMs;
  }

  /** The call that carried `ask` failed: what it reported used is reported with the next one. */
  failed(item: LeasedItem, ask: Ask): void {
    const counter = this.counters.get(item.counterName);
    if (!counter || counter.item.key !== item.key) return;
    counter.inFlight = false;
    counter.used += ask.used;
  }

  /** Takes the unused units of counters idle for `idleMs` (to give back), and forgets long-idle counters. */
  idle(nowMs: number): GiveBack[] {
    const backs: GiveBack[] = [];
    for (const [name, counter] of this.counters) {
      const idleFor = nowMs - counter.lastHitMs;
      if (counter.inFlight || idleFor < this.options.idleMs) continue;
      if (counter.left > 0 && counter.item.windowEnd * 1000 > nowMs) {
        backs.push({ item: { ...counter.item, hits: 0 }, ask: { ...this.askBase(counter), giveBack: counter.left } });
        counter.used = 0;
      }
      counter.left = 0;
      if (idleFor >= FORGET_AFTER_MS) this.counters.delete(name);
    }
    return backs;
  }

  /** Milliseconds until a counter holding units may be idle, or undefined when none holds any. */
  nextIdleCheck(nowMs: number): number | undefined {
    let next: number | undefined;
    for (const counter of this.counters.values()) {
      if (counter.left === 0 && !counter.inFlight) continue;
      const due = Math.max(1, counter.lastHitMs + this.options.idleMs - nowMs);
      next = next === undefined ? due : Math.min(next, due);
    }
    return next;
  }

  /** Units held by this isolate, all counters together (for tests and the idle watcher). */
  get heldUnits(): number {
    let held = 0;
    for (const counter of this.counters.values()) held += counter.left;
    return held;
  }

  /** The units an ask wants: the waiting hits plus the traffic of one span, within the most held at once. */
  private forecast(counter: Counter): number {
    const spanMs = Math.max(2 * this.roundTripMs, this.options.minSpanMs);
    return Math.ceil(counter.rate * spanMs);
  }

  private askBase(counter: Counter): Ask {
    return { holder: this.options.holder, limit: counter.item.limit, want: 0, giveBack: 0, used: counter.used };
  }

  private ask(counter: Counter, nowMs: number): Ask {
    const elapsed = nowMs - counter.rateFromMs;
    // A burst arrives within one millisecond (the runtime's clock stands still between I/O): measure over longer.
    if (elapsed >= 1) {
      const sample = counter.rateHits / elapsed;
      counter.rate = counter.rate === 0 ? sample : (counter.rate + sample) / 2;
      counter.rateFromMs = nowMs;
      counter.rateHits = 0;
    }
    const wanted = counter.waitingHits + this.forecast(counter);
    const ask = { ...this.askBase(counter), want: Math.max(0, Math.min(this.options.maxUnits - counter.left, wanted)) };
    counter.used = 0;
    counter.inFlight = true;
    counter.sentAtMs = nowMs;
    return ask;
  }

  /** The counter's state for this item's window: a new window starts with no share (the old one is void). */
  private counterOf(item: LeasedItem, nowMs: number): Counter {
    let counter = this.counters.get(item.counterName);
    if (counter && counter.item.key === item.key) return counter;
    if (counter) {
      Object.assign(counter, { item, left: 0, view: 0, used: 0, inFlight: false, waitingHits: 0, noLeaseUntilMs: 0 });
      return counter;
    }
    if (this.counters.size >= this.options.maxCounters) this.dropOne();
    counter = {
      item,
      left: 0,
      view: 0,
      used: 0,
      inFlight: false,
      sentAtMs: nowMs,
      waitingHits: 0,
      noLeaseUntilMs: 0,
      lastHitMs: nowMs,
      rate: 0,
      rateFromMs: nowMs,
      rateHits: 0,
    };
    this.counters.set(item.counterName, counter);
    return counter;
  }

  /** Drops the oldest counter without a call in flight (its units, if any, are left to expire). */
  private dropOne(): void {
    for (const [name, counter] of this.counters) {
      if (counter.inFlight) continue;
      this.counters.delete(name);
      return;
    }
  }
}
