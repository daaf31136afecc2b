// The JobLock Durable Object: one holder at a time per name, handed over once to a queued run, renewed by its holder,
// free again after its timeout.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { JobLock, JobLockState } from "../../durable-objects/job-lock";

const stub = (name: string) => env.JOB_LOCK.get(env.JOB_LOCK.idFromName(name));

describe("JobLock", () => {
  it("gives a lock to one holder and names it to the others", async () => {
    const locks = stub("one-holder");
    const first = await locks.acquire("config", { holder: "a", kind: "gensynchaprx", ttlMs: 60_000 });
    expect(first).toMatchObject({ acquired: true, lock: { holder: "a", kind: "gensynchaprx" } });
    const second = await locks.acquire("config", { holder: "b", kind: "writesshprx", ttlMs: 60_000 });
    expect(second).toEqual({ acquired: false, lock: first.lock });
    expect(await locks.acquire("maintenance", { holder: "b", kind: "certificates", ttlMs: 60_000 })).toMatchObject({
      acquired: true,
    });
  });

  it("never gives a live lock twice to its own holder (a message delivered twice runs once)", async () => {
    const locks = stub("not-re-entrant");
    const first = await locks.acquire("config", { holder: "a", kind: "writesshprx", ttlMs: 60_000 });
    expect(await locks.acquire("config", { holder: "a", kind: "writesshprx", ttlMs: 60_000 })).toEqual({
      acquired: false,
      lock: first.lock,
    });
  });

  it("hands a lock taken for a queued run over once, to the run carrying its holder", async () => {
    const locks = stub("hand-over");
    const taken = await locks.acquire("config", {
      holder: "a",
      kind: "writesshprx",
      ttlMs: 900_000,
      forQueuedRun: true,
    });
    expect(taken).toMatchObject({ acquired: true, lock: { holder: "a", forQueuedRun: true } });
    expect(await locks.acquire("config", { holder: "b", kind: "gensynchaprx", ttlMs: 60_000 })).toMatchObject({
      acquired: false,
    });
    const run = await locks.acquire("config", { holder: "a", kind: "writesshprx", ttlMs: 60_000 });
    expect(run).toEqual({
      acquired: true,
      lock: { holder: "a", kind: "writesshprx", acquiredAt: taken.lock.acquiredAt, expiresAt: expect.any(Number) },
    });
    expect(run.lock.expiresAt).toBeLessThan(taken.lock.expiresAt);
    expect(await locks.acquire("config", { holder: "a", kind: "writesshprx", ttlMs: 60_000 })).toEqual({
      acquired: false,
      lock: run.lock,
    });
  });

  it("renews a lock for its live holder only", async () => {
    const locks = stub("renew");
    const first = await locks.acquire("config", { holder: "a", kind: "gensynchaprx", ttlMs: 1000 });
    expect(await locks.renew("config", "b", 600_000)).toBe(false);
    expect(await locks.renew("config", "a", 600_000)).toBe(true);
    const renewed = (await locks.inspect("config"))!;
    expect(renewed.acquiredAt).toBe(first.lock.acquiredAt);
    expect(renewed.expiresAt).toBeGreaterThanOrEqual(first.lock.expiresAt + 599_000);
    await runInDurableObject(locks, async (_instance: JobLock, state) => {
      await state.storage.put("config", { ...renewed, expiresAt: Date.now() - 1 });
    });
    expect(await locks.renew("config", "a", 600_000)).toBe(false);
  });

  it("releases only for the holder", async () => {
    const locks = stub("release");
    await locks.acquire("config", { holder: "a", kind: "gensynchaprx", ttlMs: 60_000 });
    expect(await locks.release("config", "b")).toBe(false);
    expect((await locks.inspect("config"))!.holder).toBe("a");
    expect(await locks.release("config", "a")).toBe(true);
    expect(await locks.inspect("config")).toBeNull();
    expect(await locks.acquire("config", { holder: "b", kind: "gensynchaprx", ttlMs: 60_000 })).toMatchObject({
      acquired: true,
    });
  });

  it("lets anyone take a lock whose holder did not release it in time", async () => {
    const locks = stub("expiry");
    await locks.acquire("config", { holder: "dead-worker", kind: "gensynchaprx", ttlMs: 60_000 });
    await runInDurableObject(locks, async (_instance: JobLock, state) => {
      const lock = (await state.storage.get<JobLockState>("config"))!;
      await state.storage.put("config", { ...lock, expiresAt: Date.now() - 1 });
    });
    expect(await locks.acquire("config", { holder: "next", kind: "writesshprx", ttlMs: 60_000 })).toMatchObject({
      acquired: true,
      lock: { holder: "next", kind: "writesshprx" },
    });
  });
});
