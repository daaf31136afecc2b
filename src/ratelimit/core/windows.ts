// Several windows on one descriptor (a rule's `additional_limits`): the one windows operation that carries them all
// to the descriptor's counter object, and the reading of its reply into each window's usage and the deciding window.
import type { CacheKey } from "./cache-key";
import type { MatchedLimit, RuleWindow } from "./config-model";
import { operationOf, usageOf, type WindowUsage } from "./counter-operation";
import type { CounterIncrement, CounterReply, WindowSpec } from "./types";
import type { KnownUnit } from "./units";

// Keys: the rule's own window keeps the key a plain rule would have (the reference's layout); additional window n
// (from 1) counts under the key that window would have on its own plus `_w<n>`, so that two windows starting on the
// same second never share a key, while all of them keep the descriptor's counter name as their prefix: one Durable
// Object (or shard) holds them, and the key-value store's hash tag puts them in one slot. The suffix goes last because
// every key a descriptor can produce on its own ends in `_` plus a window start (digits) or `_tb`, whatever its values
// hold, and `w<n>` is neither: no value can spell another descriptor's window key (`v_w1` once could). The whole
// operation is one step in that object or one Lua script call, so the check of every window and the update of all of
// them cannot interleave with another request's.

/** One window of a descriptor's windows operation, with what judging its reply needs. */
export interface WindowPlan {
  window: RuleWindow;
  spec: WindowSpec;
  /** Seconds into a sliding window, for the time until its estimate drops. */
  elapsedSeconds: number;
}

/** One window's usage around the request's hits and whether it refuses them. */
export interface WindowJudgement extends WindowUsage {
  over: boolean;
}

/** The key of additional window `n` (from 1), from the key the window would have on its own (window start or `tb`). */
export const additionalWindowKey = (key: string, n: number): string => `${key}_w${n}`;

/** The windows of a descriptor: its rule's own, then each additional one in config order. */
export const windowsOf = (limit: MatchedLimit): RuleWindow[] => [limit, ...(limit.additional ?? [])];

/**
 * The descriptor's windows operation at `now`. `keyOf` gives the cache key of a unit and multiplier; every window's
 * key starts with the first window's counter name, which names the object. Windows operations never go to a
 * per-second store (all windows must be on one server) and are never leased.
 */
export function windowsOperation(
  keyOf: (unit: KnownUnit, multiplier: number) => CacheKey,
  limit: MatchedLimit,
  now: number,
): { operation: CounterIncrement; plans: WindowPlan[] } {
  let counterName = "";
  const plans = windowsOf(limit).map((window, n): WindowPlan => {
    const key = keyOf(window.unit as KnownUnit, window.unitMultiplier);
    if (n === 0) counterName = key.counterName;
    const { operation, elapsedSeconds } = operationOf(key, window, now, undefined);
    if (n > 0) {
      operation.key = additionalWindowKey(operation.key, n);
      // A sliding window reads its own previous window, which carries the same suffix.
      const sliding = operation.algorithm?.kind === "sliding_window" ? operation.algorithm : undefined;
      if (sliding) sliding.previousKey = additionalWindowKey(sliding.previousKey, n);
    }
    const spec: WindowSpec = {
      key: operation.key,
      windowEnd: operation.windowEnd,
      windowSeconds: operation.windowSeconds,
      limit: window.capacity,
    };
    if (operation.algorithm && operation.algorithm.kind !== "windows") spec.algorithm = operation.algorithm;
    return { window, spec, elapsedSeconds };
  });
  const operation: CounterIncrement = {
    key: plans[0].spec.key,
    counterName,
    hits: 0,
    windowEnd: Math.max(...plans.map((plan) => plan.spec.windowEnd)),
    windowSeconds: Math.max(...plans.map((plan) => plan.spec.windowSeconds)),
    perSecond: false,
    algorithm: { kind: "windows", windows: plans.map((plan) => plan.spec) },
  };
  return { operation, plans };
}

/**
 * Each window's usage from the store's reply to the windows operation (`hits` as sent; an absent reply reads as empty
 * windows), and the deciding window: the first that refuses, or else the one with the fewest remaining (the first on
 * ties).
 */
export function judgeWindows(
  plans: readonly WindowPlan[],
  reply: CounterReply | undefined,
  hits: number,
  now: number,
): { judgements: WindowJudgement[]; deciding: number } {
  const windows = typeof reply === "object" && reply.kind === "windows" ? reply : undefined;
  const admitted = windows?.admitted ?? true;
  const judgements = plans.map((plan, n): WindowJudgement => {
    const own = windows?.windows[n];
    const usage = usageOf(plan.spec, plan.window.windowSeconds, plan.elapsedSeconds, own, hits, now, admitted);
    const capacity = plan.window.capacity;
    return { ...usage, over: usage.after > capacity || capacity === 0 };
  });
  let deciding = judgements.findIndex((judgement) => judgement.over);
  if (deciding < 0) {
    deciding = 0;
    judgements.forEach((judgement, n) => {
      const left = (at: number) => plans[at].window.capacity - judgements[at].after;
      if (left(n) < left(deciding)) deciding = n;
    });
  }
  return { judgements, deciding };
}
