// The Lua scripts behind the key-value store's sliding-window and token-bucket operations, and the commands that call
// them: one script call per decision, so its read, check and write are one atomic step on the server. Each script
// computes exactly what core/algorithms.ts does. Pure code.
import type { SlidingWindowOperation, TokenBucketOperation, WindowsOperation } from "../../core/types";
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

/**
 * A descriptor's several windows (a rule's additional_limits) as one step: each window is checked as its own script
 * (or a fixed window's INCRBY) would check it, and the hits go to every window only when all have room.
 * KEYS: per window its key, and a sliding window's previous key after it. ARGV: hits, the window count, then per
 * window its kind and arguments: `f` limit expiry (s); `s` limit previous-weight expiry (s); `t` burst interval (µs)
 * now (µs) expiry-margin (ms). Returns {admitted (0/1)} then per window: `f` its count; `s` previous, current; `t` TAT.
 */
export const WINDOWS_SCRIPT = `local hits = tonumber(ARGV[1])
local k, a, admitted, w = 1, 3, 1, {}
for i = 1, tonumber(ARGV[2]) do
  local s = {kind = ARGV[a], key = KEYS[k], limit = tonumber(ARGV[a + 1])}
  if s.kind == 'f' then
    s.expiry = ARGV[a + 2]
    s.count = tonumber(redis.call('GET', s.key) or '0')
    if s.count + hits > s.limit then admitted = 0 end
    k, a = k + 1, a + 3
  elseif s.kind == 's' then
    s.expiry = ARGV[a + 3]
    s.previous = tonumber(redis.call('GET', KEYS[k + 1]) or '0')
    s.count = tonumber(redis.call('GET', s.key) or '0')
    if math.floor(s.previous * tonumber(ARGV[a + 2])) + s.count + hits > s.limit then admitted = 0 end
    k, a = k + 2, a + 4
  else
    s.interval, s.now, s.margin = tonumber(ARGV[a + 2]), tonumber(ARGV[a + 3]), tonumber(ARGV[a + 4])
    s.tat = math.max(tonumber(redis.call('GET', s.key) or '0'), s.now)
    local inUse = 0
    if s.tat > s.now then inUse = math.ceil((s.tat - s.now) / s.interval) end
    if inUse + hits > s.limit then admitted = 0 end
    k, a = k + 1, a + 5
  end
  w[i] = s
end
local reply = {admitted}
for _, s in ipairs(w) do
  if admitted == 1 and hits > 0 then
    if s.kind == 't' then
      s.tat = s.tat + hits * s.interval
      local expiry = math.ceil((s.tat - s.now) / 1000) + s.margin
      redis.call('SET', s.key, string.format('%.0f', s.tat), 'PX', string.format('%.0f', expiry))
    else
      s.count = redis.call('INCRBY', s.key, hits)
      redis.call('EXPIRE', s.key, s.expiry)
    end
  end
  if s.kind == 'f' then table.insert(reply, s.count)
  elseif s.kind == 's' then table.insert(reply, s.previous); table.insert(reply, s.count)
  else table.insert(reply, s.tat) end
end
return reply`;

type Shas = { slidingWindow: string; tokenBucket: string; windows: string };
let shas: Promise<Shas> | undefined;

/** The scripts' SHA-1 digests (EVALSHA's names for them), computed once per isolate. */
export function scriptShas(): Promise<Shas> {
  shas ??= Promise.all([sha1Hex(SLIDING_WINDOW_SCRIPT), sha1Hex(TOKEN_BUCKET_SCRIPT), sha1Hex(WINDOWS_SCRIPT)]).then(
    ([slidingWindow, tokenBucket, windows]) => ({ slidingWindow, tokenBucket, windows }),
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

/**
 * The call of the windows script. Every key is named as a sliding window's (the counter name as a hash tag), so that
 * a cluster keeps a descriptor's windows in one slot. `expiryOf` gives a window's expiry (its life plus jitter), in
 * seconds; `marginMs` a token bucket's margin after its TAT.
 */
export function windowsCommand(
  script: ScriptRef,
  counterName: string,
  hits: number,
  operation: WindowsOperation,
  expiryOf: (windowSeconds: number) => number,
  marginMs: number,
): Command {
  const keys: string[] = [];
  const args: (string | number)[] = [hits, operation.windows.length];
  for (const window of operation.windows) {
    keys.push(slidingWindowKey(counterName, window.key));
    const algorithm = window.algorithm;
    if (algorithm?.kind === "sliding_window") {
      keys.push(slidingWindowKey(counterName, algorithm.previousKey));
      args.push("s", algorithm.limit, String(algorithm.previousWeight), expiryOf(window.windowSeconds));
    } else if (algorithm?.kind === "token_bucket") {
      args.push("t", algorithm.burst, algorithm.emissionIntervalMicros, algorithm.nowMicros, marginMs);
    } else {
      args.push("f", window.limit, expiryOf(window.windowSeconds));
    }
  }
  return [...call(script), keys.length, ...keys, ...args];
}
