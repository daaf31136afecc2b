// The capacity run's Worker (bench-only, ./wrangler.toml): the project's Worker as it is, but its RateLimitCounter
// spends BENCH_COUNTER_CALL_CPU_MS milliseconds of CPU (0 to 50, default 0) at the start of every call it answers,
// so that one object serves at most about 1000 / BENCH_COUNTER_CALL_CPU_MS calls a second, as on Cloudflare. It wraps
// the class from outside, so the Worker's code has no bench hook and a baseline commit can be run the same way.
// GET /bench/counter-calls answers how many calls the counter objects of this isolate answered (the bench reads it
// where the checkout does not count ratelimit.durable_object.calls; wrangler dev runs the objects in the Worker's
// isolate).
import worker, { RateLimitCounter as Counter } from "../../src/index";

export * from "../../src/index";

let callsAnswered = 0;

export default {
  ...worker,
  fetch(request: Request, env: Env, ctx: ExecutionContext) {
    if (new URL(request.url).pathname === "/bench/counter-calls") return new Response(String(callsAnswered));
    return worker.fetch(request, env, ctx);
  },
};

const MAX_CPU_MS = 50;

/** The setting, validated: a number of milliseconds from 0 to MAX_CPU_MS. */
function cpuMsPerCall(env: unknown): number {
  const raw = (env as Record<string, unknown>).BENCH_COUNTER_CALL_CPU_MS ?? "0";
  const ms = Number(raw);
  if (raw === "" || !Number.isFinite(ms) || ms < 0 || ms > MAX_CPU_MS) {
    throw new Error(`BENCH_COUNTER_CALL_CPU_MS must be milliseconds from 0 to ${MAX_CPU_MS}, not ${String(raw)}`);
  }
  return ms;
}

let sink = 0;

/** Pure CPU work: `iterations` steps of a linear congruential generator, kept alive through `sink`. */
function spin(iterations: number): void {
  let x = sink;
  for (let i = 0; i < iterations; i++) x = (Math.imul(x, 1103515245) + 12345) | 0;
  sink = x;
}

const CALIBRATION_ITERATIONS = 20_000_000;

/**
 * Loop steps per millisecond in this isolate. workerd's clock moves only between events (not during a loop), so
 * each round is timed across a zero timer; the fastest of three rounds of about 20 ms each is kept.
 */
async function measureSpeed(): Promise<number> {
  spin(1_000_000);
  let best = 0;
  for (let round = 0; round < 3; round++) {
    const start = Date.now();
    spin(CALIBRATION_ITERATIONS);
    await new Promise((resolve) => setTimeout(resolve, 0));
    best = Math.max(best, CALIBRATION_ITERATIONS / Math.max(1, Date.now() - start));
  }
  return best;
}

let speed: Promise<number> | undefined;

export class RateLimitCounter extends Counter {
  /** Loop steps every call spends; 0 spends nothing. */
  private steps = 0;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    const ms = cpuMsPerCall(env);
    if (ms === 0) return;
    // Calls wait until the isolate's speed is known (once per isolate).
    void ctx.blockConcurrencyWhile(async () => {
      this.steps = Math.round(ms * (await (speed ??= measureSpeed())));
    });
  }

  /** Spends this call's CPU. */
  protected spendCpu(): void {
    if (this.steps > 0) spin(this.steps);
  }
}

// Every RPC method the object answers (its async methods but the alarm, whatever the counter code of this checkout
// declares: increment, read, lease calls) spends the CPU first, then runs as it is. Defined on the prototype because
// RPC only calls methods found there.
const base = Counter.prototype as unknown as Record<string, unknown>;
const wrapped: string[] = [];
for (const name of Object.getOwnPropertyNames(base)) {
  const method = base[name];
  if (name === "constructor" || name === "alarm" || typeof method !== "function") continue;
  if (method.constructor.name !== "AsyncFunction") continue;
  Object.defineProperty(RateLimitCounter.prototype, name, {
    configurable: true,
    writable: true,
    value: function (this: RateLimitCounter, ...args: unknown[]) {
      this.spendCpu();
      callsAnswered++;
      return (method as (...a: unknown[]) => unknown).apply(this, args);
    },
  });
  wrapped.push(name);
}
if (!wrapped.includes("increment")) throw new Error(`capacity Worker: no counter call to wrap (found ${wrapped})`);
