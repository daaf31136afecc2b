// The counting algorithms beyond the reference's fixed window, as pure steps: what a store does atomically for one
// operation (sliding window, token bucket as GCRA), and how the limiter reads a store's reply into usage, remaining
// quota and the time until the next unit of quota frees. The key-value store's Lua script mirrors the steps exactly
// (stores/redis/scripts.ts); every number here is an integer or a product the script computes the same way.
import type { AlgorithmReply, SlidingWindowOperation, TokenBucketOperation } from "./types";

export type Algorithm = "fixed_window" | "sliding_window" | "token_bucket";

/** In the order of the xDS extension's enum (RateLimitAlgorithm.Kind): config/xds.ts indexes it by the number. */
export const ALGORITHMS: readonly Algorithm[] = ["fixed_window", "sliding_window", "token_bucket"];

/** The previous window's weighted count: floor(previous × weight), as Upstash and the Lua script compute it. */
const weightedPrevious = (previous: number, weight: number): number => Math.floor(previous * weight);

/**
 * One sliding-window step on stored counts: adds the hits to the current window when the estimate with them stays
 * within the limit.
 */
export function slidingWindowStep(
  previous: number,
  current: number,
  hits: number,
  operation: SlidingWindowOperation,
): { admitted: boolean; current: number } {
  const admitted = weightedPrevious(previous, operation.previousWeight) + current + hits <= operation.limit;
  return { admitted, current: admitted ? current + hits : current };
}

/** Tokens in use at `nowMicros` for a bucket whose TAT is `tatMicros`: whole tokens, rounded up. */
function tokensInUse(tatMicros: number, nowMicros: number, emissionIntervalMicros: number): number {
  return tatMicros <= nowMicros ? 0 : Math.ceil((tatMicros - nowMicros) / emissionIntervalMicros);
}

/**
 * One GCRA step on a stored TAT (undefined when the key has none): takes `hits` tokens when that many are in the
 * bucket. `tatMicros` is what to store when admitted (the store writes nothing otherwise).
 */
export function tokenBucketStep(
  storedTatMicros: number | undefined,
  hits: number,
  operation: TokenBucketOperation,
): { admitted: boolean; tatMicros: number } {
  const tat = Math.max(storedTatMicros ?? 0, operation.nowMicros);
  const admitted = tokensInUse(tat, operation.nowMicros, operation.emissionIntervalMicros) + hits <= operation.burst;
  return { admitted, tatMicros: admitted ? tat + hits * operation.emissionIntervalMicros : tat };
}

/** A reply read by the limiter: usage before and after this request's hits, and what the status reports. */
interface AlgorithmJudgement {
  /** Usage before the hits: the estimate (sliding window) or the tokens in use (token bucket). */
  before: number;
  /** `before + hits`: over the capacity exactly when the store refused the hits. */
  after: number;
  admitted: boolean;
  /** Seconds until one more unit of quota frees if nothing else arrives (0 when nothing is in use). */
  resetSeconds: number;
}

/**
 * Reads a sliding-window reply. The reset is when the estimate next drops by one: while the previous window still
 * weighs a whole request, when its weighted count loses one; otherwise at the end of the current window, when the
 * current count starts to decay.
 * @param windowSeconds the window length; `elapsedSeconds` how far into it `now` is.
 */
export function judgeSlidingWindow(
  reply: Extract<AlgorithmReply, { kind: "sliding_window" }>,
  operation: SlidingWindowOperation,
  hits: number,
  windowSeconds: number,
  elapsedSeconds: number,
): AlgorithmJudgement {
  const weighted = reply.previous * operation.previousWeight;
  const whole = Math.floor(weighted);
  const estimate = whole + reply.current;
  const before = reply.admitted ? estimate - hits : estimate;
  let resetSeconds = 0;
  if (whole >= 1) resetSeconds = ((weighted - whole) * windowSeconds) / reply.previous;
  else if (reply.current > 0) resetSeconds = windowSeconds - elapsedSeconds;
  return { before, after: before + hits, admitted: reply.admitted, resetSeconds };
}

/** Reads a token-bucket reply: tokens in use before and after, and the time until the next token comes back. */
export function judgeTokenBucket(
  reply: Extract<AlgorithmReply, { kind: "token_bucket" }>,
  operation: TokenBucketOperation,
  hits: number,
): AlgorithmJudgement {
  const { nowMicros, emissionIntervalMicros } = operation;
  const inUse = tokensInUse(reply.tatMicros, nowMicros, emissionIntervalMicros);
  const before = reply.admitted ? inUse - hits : inUse;
  const resetMicros = inUse === 0 ? 0 : reply.tatMicros - nowMicros - (inUse - 1) * emissionIntervalMicros;
  return { before, after: before + hits, admitted: reply.admitted, resetSeconds: resetMicros / 1_000_000 };
}
