// HEALTHCHECK_STORE's probe (src/ratelimit/stores/health-probe.ts): an answer stands for the TTL, a probe is bounded,
// a failing or late probe is unhealthy, and a check that finds another probe on its way takes the last answer.
import { describe, expect, it, vi } from "vitest";
import { CachedProbe } from "../../../src/ratelimit/stores/health-probe";

describe("CachedProbe", () => {
  it("probes at most once per TTL and follows the store once the TTL passed", async () => {
    let now = 0;
    let up = true;
    const probe = vi.fn(async () => up);
    const cached = new CachedProbe(probe, 1000, 2000, () => now);
    expect(await cached.healthy()).toBe(true);
    up = false;
    now = 999;
    expect(await Promise.all([cached.healthy(), cached.healthy()])).toEqual([true, true]);
    expect(probe).toHaveBeenCalledTimes(1);
    now = 1000;
    expect(await cached.healthy()).toBe(false);
    up = true;
    now = 2000;
    expect(await cached.healthy()).toBe(true);
    expect(probe).toHaveBeenCalledTimes(3);
  });

  it("counts a probe that throws or outlasts the bound as unhealthy", async () => {
    vi.useFakeTimers();
    try {
      const now = 0;
      const failing = new CachedProbe(
        async () => Promise.reject(new Error("ECONNREFUSED")),
        1000,
        2000,
        () => now,
      );
      expect(await failing.healthy()).toBe(false);
      const hanging = new CachedProbe(
        () => new Promise<boolean>(() => {}),
        1000,
        2000,
        () => now,
      );
      const answer = hanging.healthy();
      await vi.advanceTimersByTimeAsync(2000);
      expect(await answer).toBe(false);
    } finally {
      vi.useRealTimers();
    }
  });

  it("answers the last result, without waiting, while another check's probe is on its way", async () => {
    let now = 0;
    let release: (healthy: boolean) => void = () => {};
    let calls = 0;
    const cached = new CachedProbe(
      () => {
        calls++;
        return calls === 1 ? Promise.resolve(true) : new Promise<boolean>((resolve) => (release = resolve));
      },
      1000,
      2000,
      () => now,
    );
    expect(await cached.healthy()).toBe(true);
    now = 1500;
    const probing = cached.healthy();
    expect(await cached.healthy()).toBe(true);
    release(false);
    expect(await probing).toBe(false);
    expect(await cached.healthy()).toBe(false);
    expect(calls).toBe(2);
  });
});
