// The Lua scripts behind the key-value store's sliding-window and token-bucket operations, and the commands that call
// them: one script call per decision, so its read, check and write are one atomic step on the server. Each script
// computes exactly what core/algorithms.ts does. Pure code.
import type { SlidingWindowOperation, TokenBucketOperation } from "../../core/types";
import { sha1Hex } from "../../../shared/bytes";
import type { Command } from "./resp";

// Lua numbers are doubles, like JavaScript's: every value is an integer below 2^53 (a TAT in microseconds is about
// 1.8e15) except the previous window's weight, sent as JavaScript's shortest string of the double, which Lua's tonumber
// reads back to the same double, so floor(previous × weight) is the same product. Numbers are written back with %.0f,
// never tostring (which keeps 14 digits).

/**
 * KEYS: the current window, the previous window. ARGV: hits, limit, previous weight, the current window's expiry (s).
 * Returns {admitted (0/1), previous count, current count}.
 */
export const SLIDING_WINDOW_SCRIPT = `local previous = tonumber(redis.call('GET', KEYS[2]) or '0')
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
local hits = tonumber(ARGV[1])
if math.floor(previous * tonumber(ARGV[3])) + current + hits > tonumber(ARGV[2]) then
  return {0, previous, current}
end
if hits > 0 then
  current = redis.call('INCRBY', KEYS[1], hits)
  redis.call('EXPIRE', KEYS[1], ARGV[4])
end
return {1, previous, current}`;

/**
 * KEYS: the bucket, holding its TAT (µs). ARGV: hits, burst, emission interval (µs), now (µs), expiry margin (ms).
 * The key expires at its TAT (after which the bucket is full, as if absent) plus the margin, which keeps it for
 * callers whose clocks run behind the server's. Returns {admitted (0/1), TAT}.
 */
export const TOKEN_BUCKET_SCRIPT = `local hits = tonumber(ARGV[1])
local interval = tonumber(ARGV[3])
local now = tonumber(ARGV[4])
local tat = math.max(tonumber(redis.call('GET', KEYS[1]) or '0'), now)
local inUse = 0
if tat > now then inUse = math.ceil((tat - now) / interval) end
if inUse + hits > tonumber(ARGV[2]) then
  return {0, tat}
end
if hits > 0 then
  tat = tat + hits * interval
  local expiry = math.ceil((tat - now) / 1000) + tonumber(ARGV[5])
  redis.call('SET', KEYS[1], string.format('%.0f', tat), 'PX', string.format('%.0f', expiry))
end
return {1, tat}`;

let shas: Promise<{ slidingWindow: string; tokenBucket: string }> | undefined;

/** The scripts' SHA-1 digests (EVALSHA's names for them), computed once per isolate. */
export function scriptShas(): Promise<{ slidingWindow: string; tokenBucket: string }> {
  shas ??= Promise.all([sha1Hex(SLIDING_WINDOW_SCRIPT), sha1Hex(TOKEN_BUCKET_SCRIPT)]).then(
    ([slidingWindow, tokenBucket]) => ({ slidingWindow, tokenBucket }),
  );
  return shas;
}

/**
 * The key-value store's name of a sliding window's key: the counter name as a hash tag, then the window start, so that
 * a cluster keeps a counter's two windows in one slot (a script may only touch keys of one slot).
 */
export function slidingWindowKey(counterName: string, key: string): string {
  if (!key.startsWith(counterName)) throw new Error(`kvstore: key ${key} does not start with its counter name`);
  return `{${counterName}}${key.slice(counterName.length)}`;
}

/** How a script is named in the call: by SHA-1 (EVALSHA), or by its text (EVAL, which also caches it). */
export type ScriptRef = { sha: string } | { text: string };

const call = (script: ScriptRef): Command => ("sha" in script ? ["EVALSHA", script.sha] : ["EVAL", script.text]);

/** The call of the sliding-window script; `expirySeconds` is the current window's (its life plus jitter). */
export function slidingWindowCommand(
  script: ScriptRef,
  counterName: string,
  key: string,
  hits: number,
  operation: SlidingWindowOperation,
  expirySeconds: number,
): Command {
  return [
    ...call(script),
    2,
    slidingWindowKey(counterName, key),
    slidingWindowKey(counterName, operation.previousKey),
    hits,
    operation.limit,
    String(operation.previousWeight),
    expirySeconds,
  ];
}

/** The call of the token-bucket script; the key expires `expiryMarginMs` after its TAT. */
export function tokenBucketCommand(
  script: ScriptRef,
  key: string,
  hits: number,
  operation: TokenBucketOperation,
  expiryMarginMs: number,
): Command {
  return [
    ...call(script),
    1,
    key,
    hits,
    operation.burst,
    operation.emissionIntervalMicros,
    operation.nowMicros,
    expiryMarginMs,
  ];
}
