// The capacity run's Worker (bench-only, ./wrangler.toml): the project's Worker as it is, but its RateLimitCounter
// spends BENCH_COUNTER_CALL_CPU_MS milliseconds of CPU (0 to 50, default 0) at the start of every call it answers,
// so that one object serves at most about 1000 / BENCH_COUNTER_CALL_CPU_MS calls a second, as on Cloudflare. It wraps
// the class from outside, so the Worker's code has no bench hook and a baseline commit can be run the same way.
// GET /bench/counts answers, as JSON, how many calls the counter objects of this isolate answered and how many
// POST /json requests it answered (wrangler dev runs the objects in the Worker's isolate): the bench reads them during
// a run for steady-state rates, also where the checkout has no ratelimit.durable_object.calls.
import worker, { RateLimitCounter as Counter } from "../../src/index";

export * from "../../src/index";

const counts = { calls: 0, decisions: 0 };

export default {
  ...worker,
  async fetch(request: Request, env: Env, ctx: ExecutionContext) {
    const { pathname } = new URL(request.url);
    if (pathname === "/bench/counts") return Response.json(counts);
    const response = await worker.fetch(request, env, ctx);
    if (pathname === "/json" && request.method === "POST") counts.decisions++;
    return response;
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

/** About 10 KB of JSON; parsing it is native work of the runtime, the same every time. */
const SAMPLE = JSON.stringify(
  Array.from({ length: 200 }, (_, i) => ({ id: i, name: `counter ${i}`, hits: [i, i * 2] })),
);
let sink = 0;

/**
 * CPU work: `rounds` parses of SAMPLE. Native parsing rather than a JavaScript loop: a hot loop re-entered on every
 * call kept V8's optimizing compiler busy on another thread (measured: 1 ms of steps cost about 4 ms of the process's
 * CPU per call).
 */
function spin(rounds: number): void {
  for (let i = 0; i < rounds; i++) sink += JSON.parse(SAMPLE).length;
}

const CALIBRATION_ROUNDS = 400;

/**
 * Parses per millisecond in this isolate. workerd's clock moves only between events (not during a loop), so each round
 * is timed across a zero timer; the fastest of three rounds is kept.
 */
async function measureSpeed(): Promise<number> {
  spin(20);
  let best = 0;
  for (let round = 0; round < 3; round++) {
    const start = Date.now();
    spin(CALIBRATION_ROUNDS);
    await new Promise((resolve) => setTimeout(resolve, 0));
    best = Math.max(best, CALIBRATION_ROUNDS / Math.max(1, Date.now() - start));
  }
  return best;
}

let speed: Promise<number> | undefined;

export class RateLimitCounter extends Counter {
  /** Parses every call spends; 0 spends nothing. */
  private steps = 0;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    const ms = cpuMsPerCall(env);
    if (ms === 0) return;
    // Calls wait until the isolate's speed is known (once per isolate).
    void ctx.blockConcurrencyWhile(async () => {
      this.steps = Math.max(1, Math.round(ms * (await (speed ??= measureSpeed()))));
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
      counts.calls++;
      return (method as (...a: unknown[]) => unknown).apply(this, args);
    },
  });
  wrapped.push(name);
}
if (!wrapped.includes("increment")) throw new Error(`capacity Worker: no counter call to wrap (found ${wrapped})`);
