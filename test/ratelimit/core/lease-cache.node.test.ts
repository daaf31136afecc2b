// The borrowing side of leases (src/ratelimit/core/lease-cache.ts) in plain Node: what a share answers (the count, so
// limitRemaining), how an ask is sized from the isolate's measured traffic and round trip, the background refill, the
// per-request counting after a zero grant, the idle give-back, and a new window voiding the old share.
import { describe, expect, it } from "vitest";
import { LeaseCache, type LeasedItem } from "../../../src/ratelimit/core/lease-cache";

const T0S = 1_800_000_000;
const T0 = T0S * 1000;

const cacheWith = (maxUnits = 1000) =>
  new LeaseCache({ holder: "me", maxUnits, minSpanMs: 50, idleMs: 300, retryMs: 250, maxCounters: 3 });

const item = (hits = 1, windowStart = T0S, limit = 100): LeasedItem => ({
  key: `k_${windowStart}`,
  counterName: "k_",
  hits,
  windowEnd: windowStart + 60,
  windowSeconds: 60,
  limit,
});

/** Leads a call for `hits` and settles it with the object's reply. */
function lead(cache: LeaseCache, nowMs: number, reply: { count: number; granted: number }, hits = 1) {
  const plan = cache.plan(item(hits), nowMs);
  if (plan.kind !== "lead") throw new Error(`expected to lead, got ${plan.kind}`);
  cache.settle(item(hits), plan.ask, reply, nowMs + 2);
  return plan.ask;
}

describe("LeaseCache", () => {
  it("answers from the share the count after the hits: the object's count less its unused units, plus its own hits", () => {
    const cache = cacheWith();
    expect(cache.take(item(), T0, true)).toBeUndefined();
    // The object counted this hit (40 after it, other isolates' shares included) and lent 10.
    lead(cache, T0, { count: 40, granted: 10 });
    expect(cache.take(item(), T0 + 3, true)).toBe(41);
    expect(cache.take(item(3), T0 + 3, true)).toBe(44);
    // A read answers the same count while units are held.
    expect(cache.take(item(0), T0 + 3, false)).toBe(44);
    expect(cache.heldUnits).toBe(6);
    // Too many hits for the share: the object must answer.
    expect(cache.take(item(7), T0 + 3, true)).toBeUndefined();
    // A refill answered while 6 units are unused: the object's 50 includes them, so the view is 44 again.
    const ask = cache.plan(item(0), T0 + 4);
    if (ask.kind !== "lead") throw new Error("expected to lead");
    expect(ask.ask.used).toBe(4);
    cache.settle(item(0), ask.ask, { count: 50, granted: 5 }, T0 + 6);
    expect(cache.take(item(), T0 + 7, true)).toBe(45);
    expect(cache.heldUnits).toBe(10);
  });

  it("says whether the share covers a request without taking from it", () => {
    const cache = cacheWith();
    expect(cache.covers(item())).toBe(false);
    lead(cache, T0, { count: 40, granted: 3 });
    expect(cache.covers(item(3))).toBe(true);
    expect(cache.covers(item(4))).toBe(false);
    // Another window's item is not covered by this window's share.
    expect(cache.covers(item(1, T0S + 60))).toBe(false);
    expect(cache.heldUnits).toBe(3);
    expect(cache.take(item(3), T0 + 3, false)).toBe(43);
    expect(cache.covers(item(0))).toBe(false);
  });

  it("sizes an ask to the hits waiting plus its traffic over the larger of two round trips and the minimum span", () => {
    const cache = cacheWith(400);
    // The first ask knows no traffic: it wants nothing beyond the hit it carries.
    expect(lead(cache, T0, { count: 1, granted: 0 }).want).toBe(0);
    // 15 hits in the first 10 ms: 1.5 a millisecond; round trips of 2 ms, so the 50 ms minimum: 75.
    for (let i = 0; i < 15; i++) cache.take(item(), T0 + 1 + (i % 9), true);
    const plan = cache.plan(item(), T0 + 10);
    if (plan.kind !== "lead") throw new Error("expected to lead");
    expect(plan.ask.want).toBe(75);
    // 5 requests wait for that call; the object lends nothing.
    for (let i = 0; i < 5; i++) expect(cache.plan(item(), T0 + 10).kind).toBe("wait");
    cache.settle(item(), plan.ask, { count: 2, granted: 0 }, T0 + 12);
    // For 250 ms after a zero grant, one call per request.
    expect(cache.take(item(), T0 + 100, true)).toBeUndefined();
    expect(cache.plan(item(), T0 + 100)).toEqual({ kind: "plain" });
    // Then an ask again: 2 hits in 253 ms averaged with the 1.5 make 0.754 a millisecond: ceil(37.7), plus 5 waiting.
    expect(cache.take(item(), T0 + 263, true)).toBeUndefined();
    const again = cache.plan(item(), T0 + 263);
    expect(again.kind === "lead" && again.ask.want).toBe(43);
  });

  it("never asks for more than it may hold", () => {
    const cache = cacheWith(30);
    lead(cache, T0, { count: 1, granted: 0 });
    for (let i = 0; i < 100; i++) cache.take(item(), T0 + 5, true);
    expect(lead(cache, T0 + 10, { count: 2, granted: 12 }).want).toBe(30);
    // 12 held: the next ask wants at most 18.
    const plan = cache.plan(item(20), T0 + 20);
    expect(plan.kind === "lead" && plan.ask.want).toBe(18);
  });

  it("asks for a refill in the background once the share falls below half an ask, and only once at a time", () => {
    const cache = cacheWith();
    lead(cache, T0, { count: 1, granted: 0 });
    for (let i = 0; i < 100; i++) cache.take(item(), T0 + 10, true);
    // 101 hits over 10 ms: about 10 a millisecond, so an ask of about 500.
    lead(cache, T0 + 10, { count: 2, granted: 300 });
    expect(cache.refill(item(), T0 + 13)).toBeUndefined();
    // Used down to below half of the forecast.
    for (let i = 0; i < 60; i++) expect(cache.take(item(), T0 + 13, true)).toBe(3 + i);
    const refill = cache.refill(item(), T0 + 13);
    expect(refill).toMatchObject({ holder: "me", limit: 100, giveBack: 0, used: 60 });
    expect(refill!.want).toBeGreaterThan(0);
    expect(cache.refill(item(), T0 + 13)).toBeUndefined();
    // The share still answers while the refill is in flight.
    expect(cache.take(item(), T0 + 14, true)).toBe(63);
  });

  it("gives back what an idle counter holds, reporting what it used, and nothing of a window that ended", () => {
    const cache = cacheWith();
    lead(cache, T0, { count: 5, granted: 20 });
    cache.take(item(2), T0 + 10, true);
    expect(cache.idle(T0 + 200)).toEqual([]);
    expect(cache.nextIdleCheck(T0 + 200)).toBe(110);
    expect(cache.idle(T0 + 310)).toEqual([
      { item: item(0), ask: { holder: "me", limit: 100, want: 0, giveBack: 18, used: 2 } },
    ]);
    expect(cache.heldUnits).toBe(0);
    expect(cache.nextIdleCheck(T0 + 310)).toBeUndefined();
    // A share whose window has ended is void: dropped, not given back.
    lead(cache, T0 + 400, { count: 6, granted: 10 });
    expect(cache.idle(T0 + 60_000)).toEqual([]);
    expect(cache.heldUnits).toBe(0);
  });

  it("starts each window without a share, and forgets the oldest counter past its maximum", () => {
    const cache = cacheWith();
    lead(cache, T0, { count: 1, granted: 10 });
    expect(cache.take(item(1, T0S + 60), T0 + 60_000, true)).toBeUndefined();
    expect(cache.heldUnits).toBe(0);
    for (const name of ["a_", "b_", "c_"]) cache.take({ ...item(), counterName: name, key: `${name}1` }, T0, true);
    // "k_" was the oldest of four counters kept at most three: it is gone, and its next ask measures anew.
    const plan = cache.plan(item(1, T0S + 60), T0 + 60_001);
    expect(plan.kind === "lead" && plan.ask.want).toBe(0);
  });
});
