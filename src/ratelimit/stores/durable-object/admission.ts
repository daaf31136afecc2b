// Bounds how many distinct per-key counter objects one isolate keeps busy (COUNTER_OBJECT_ACTIVE_LIMIT). workerd keeps
// an object, with its SQLite database open, for about 10 s after its last activity, and all databases of a process share
// one 512 MiB SQLite memory limit: past roughly 2,800 open objects every storage call fails with SQLITE_NOMEM and the
// process restarts, losing every count in memory. A long tail of new keys reaches that in seconds. So a call to an
// object this isolate has not used within the residency window waits while the limit is reached, until the oldest
// one ages out: a long tail is slowed down, never failed. Objects already in use never wait.

/** A clock and a timer, replaceable in tests. */
export interface AdmissionClock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

const realClock: AdmissionClock = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

export class ObjectAdmission {
  /** Object name → when this isolate last called it, oldest first. */
  private readonly recent = new Map<string, number>();

  constructor(
    private readonly limit: number,
    private readonly residencyMs: number,
    private readonly clock: AdmissionClock = realClock,
  ) {}

  /** Resolves once every named object may be called; marks them used now. */
  async admit(names: readonly string[]): Promise<void> {
    for (;;) {
      const now = this.clock.now();
      this.forgetOlderThan(now - this.residencyMs);
      const fresh = names.filter((name) => !this.recent.has(name)).length;
      if (this.recent.size + fresh <= Math.max(this.limit, fresh)) {
        for (const name of names) {
          this.recent.delete(name);
          this.recent.set(name, now);
        }
        return;
      }
      const oldest = this.recent.values().next().value ?? now;
      await this.clock.sleep(Math.max(oldest + this.residencyMs - now, 1) + Math.random() * 50);
    }
  }

  /** Distinct objects used within the residency window (for tests). */
  get size(): number {
    return this.recent.size;
  }

  private forgetOlderThan(cutoff: number): void {
    for (const [name, usedAt] of this.recent) {
      if (usedAt > cutoff) break;
      this.recent.delete(name);
    }
  }
}
