// Job locks of the detached jobs: one Durable Object per lock scope holds its named locks, so that starting a job is
// strongly consistent across isolates and locations. Storage and RPC only; src/jobs/locks.ts takes and releases them.
import { DurableObject } from "cloudflare:workers";

// A lock is {holder, kind, acquiredAt, expiresAt}. acquire() by the same holder extends it (a queued job re-acquires
// the lock its API call took); anyone may take a lock whose expiresAt has passed (its worker died). Each method
// reads and writes storage without awaiting anything else, so the input gate makes it atomic.

export interface JobLockState {
  holder: string;
  kind: string;
  acquiredAt: number;
  expiresAt: number;
}

export type AcquireResult = { acquired: true; lock: JobLockState } | { acquired: false; lock: JobLockState };

export class JobLock extends DurableObject<Env> {
  async acquire(name: string, request: { holder: string; kind: string; ttlMs: number }): Promise<AcquireResult> {
    const now = Date.now();
    const current = await this.ctx.storage.get<JobLockState>(name);
    if (current && current.holder !== request.holder && current.expiresAt > now)
      return { acquired: false, lock: current };
    const lock: JobLockState = {
      holder: request.holder,
      kind: request.kind,
      acquiredAt: current?.holder === request.holder ? current.acquiredAt : now,
      expiresAt: now + request.ttlMs,
    };
    await this.ctx.storage.put(name, lock);
    return { acquired: true, lock };
  }

  /** Releases the lock if this holder has it; true when it did. */
  async release(name: string, holder: string): Promise<boolean> {
    const current = await this.ctx.storage.get<JobLockState>(name);
    if (!current || current.holder !== holder) return false;
    await this.ctx.storage.delete(name);
    return true;
  }

  /** The lock as stored (an expired one included), or null. */
  async inspect(name: string): Promise<JobLockState | null> {
    return (await this.ctx.storage.get<JobLockState>(name)) ?? null;
  }
}
