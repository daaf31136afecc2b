// Job locks of the detached jobs: one Durable Object per lock scope holds its named locks, so that starting a job is
// strongly consistent across isolates and locations. Storage and RPC only; src/jobs/locks.ts takes and releases them.
import { DurableObject } from "cloudflare:workers";

// A lock is {holder, kind, acquiredAt, expiresAt, forQueuedRun}. A running holder keeps its lock alive by renewing it
// (its heartbeat), so a holder that died loses it within one lease. A lock taken for a queued run (forQueuedRun) is
// handed over once, to the run carrying the same holder; otherwise a live lock is never taken again, not even by its
// own holder (a message delivered twice must not run twice). Anyone may take a lock whose expiresAt has passed. Each
// method reads and writes storage without awaiting anything else, so the input gate makes it atomic.

export interface JobLockState {
  holder: string;
  kind: string;
  acquiredAt: number;
  expiresAt: number;
  /** Taken by an API call for the queued run it starts: that run takes it over (once), carrying the same holder. */
  forQueuedRun?: boolean;
}

export type AcquireResult = { acquired: true; lock: JobLockState } | { acquired: false; lock: JobLockState };

export class JobLock extends DurableObject<Env> {
  async acquire(
    name: string,
    request: { holder: string; kind: string; ttlMs: number; forQueuedRun?: boolean },
  ): Promise<AcquireResult> {
    const now = Date.now();
    const current = await this.ctx.storage.get<JobLockState>(name);
    const live = current !== undefined && current.expiresAt > now;
    const handedOver = live && current.holder === request.holder && current.forQueuedRun === true;
    if (live && !handedOver) return { acquired: false, lock: current };
    const lock: JobLockState = {
      holder: request.holder,
      kind: request.kind,
      acquiredAt: handedOver ? current.acquiredAt : now,
      expiresAt: now + request.ttlMs,
      ...(request.forQueuedRun ? { forQueuedRun: true } : {}),
    };
    await this.ctx.storage.put(name, lock);
    return { acquired: true, lock };
  }

  /** Extends the lock of a running holder (its heartbeat); false when the holder no longer has it. */
  async renew(name: string, holder: string, ttlMs: number): Promise<boolean> {
    const now = Date.now();
    const current = await this.ctx.storage.get<JobLockState>(name);
    if (!current || current.holder !== holder || current.expiresAt <= now) return false;
    await this.ctx.storage.put(name, { ...current, expiresAt: Math.max(current.expiresAt, now + ttlMs) });
    return true;
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
