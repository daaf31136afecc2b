// Bounds how many distinct per-key counter objects one isolate keeps busy (COUNTER_OBJECT_ACTIVE_LIMIT), so that a long
// tail of new keys cannot open more SQLite databases than workerd's shared 512 MiB memory limit holds. A call to an
// object not used within the residency window waits, for at most COUNTER_OBJECT_ADMISSION_MAX_WAIT, until the oldest
// ages out; objects already in use never wait. (Only where the objects share the Worker's process: on Cloudflare the
// limit is off.)
import { PublicStoreError } from "../../core/types";

/** A clock and a timer, replaceable in tests. */
export interface AdmissionClock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

const realClock: AdmissionClock = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

/** How far apart waiters wake for the same freed slot, so that they do not all retry at once. */
const WAKE_SPREAD_MS = 50;

/** The limit is reached and no object in use ages out within the bound; nothing was counted. */
export class CounterObjectsBusy extends PublicStoreError {
  override name = "CounterObjectsBusy";
  constructor(limit: number, maxWaitMs: number) {
    super(
      `this isolate already uses COUNTER_OBJECT_ACTIVE_LIMIT (${limit}) counter objects, and none frees within ` +
        `COUNTER_OBJECT_ADMISSION_MAX_WAIT (${maxWaitMs} ms)`,
    );
  }
}

/**
 * workerd keeps an object, with its SQLite database open, for about 10 s after its last activity, and all databases of
 * a process share one 512 MiB SQLite memory limit: past roughly 2,800 open objects every storage call fails with
 * SQLITE_NOMEM and the process restarts, losing every count in memory. A request no slot frees for within the wait
 * bound fails at once with CounterObjectsBusy, which names both settings, rather than waiting past its caller's time-out.
 */
export class ObjectAdmission {
  /** Object name → when this isolate last called it, oldest first. */
  private readonly recent = new Map<string, number>();

  constructor(
    private readonly limit: number,
    private readonly residencyMs: number,
    private readonly maxWaitMs: number,
    private readonly clock: AdmissionClock = realClock,
  ) {}

  /**
   * Resolves once every named object may be called, and marks them used now; waits at most maxWaitMs.
   * @throws CounterObjectsBusy as soon as no object in use can age out within maxWaitMs of the call (at once when the
   *   earliest one ages out later), or when the bound passes with the freed slots taken by other requests.
   */
  async admit(names: readonly string[]): Promise<void> {
    const deadline = this.clock.now() + this.maxWaitMs;
    for (;;) {
      const now = this.clock.now();
      this.forgetOlderThan(now - this.residencyMs);
      const fresh = names.filter((name) => !this.recent.has(name)).length;
      const excess = this.recent.size + fresh - Math.max(this.limit, fresh);
      if (excess <= 0) {
        for (const name of names) {
          this.recent.delete(name);
          this.recent.set(name, now);
        }
        return;
      }
      // Every object still known ages out after `now` (older ones were just forgotten), so freeAt > now.
      const freeAt = this.agesOutAt(excess);
      if (freeAt > deadline) throw new CounterObjectsBusy(this.limit, this.maxWaitMs);
      await this.clock.sleep(Math.min(freeAt - now + Math.random() * WAKE_SPREAD_MS, deadline - now));
    }
  }

  /** Distinct objects used within the residency window (for tests). */
  get size(): number {
    return this.recent.size;
  }

  /** When the `count` least recently used objects will all have aged out. */
  private agesOutAt(count: number): number {
    let seen = 0;
    for (const usedAt of this.recent.values()) {
      if (++seen === count) return usedAt + this.residencyMs;
    }
    return Number.POSITIVE_INFINITY;
  }

  private forgetOlderThan(cutoff: number): void {
    for (const [name, usedAt] of this.recent) {
      if (usedAt > cutoff) break;
      this.recent.delete(name);
    }
  }
}
