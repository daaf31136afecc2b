// The JobLock Durable Object: one holder at a time per name, re-entrant for its holder, free again after its timeout.
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

  it("extends the lock for its own holder and keeps the first acquisition time", async () => {
    const locks = stub("re-entrant");
    const first = await locks.acquire("config", { holder: "a", kind: "writesshprx", ttlMs: 1000 });
    const again = await locks.acquire("config", { holder: "a", kind: "writesshprx", ttlMs: 600_000 });
    expect(again.acquired).toBe(true);
    expect(again.lock.acquiredAt).toBe(first.lock.acquiredAt);
    expect(again.lock.expiresAt).toBeGreaterThan(first.lock.expiresAt);
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
