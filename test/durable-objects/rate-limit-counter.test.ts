import { listDurableObjectIds, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";

describe("RateLimitCounter", () => {
  const future = () => Math.floor(Date.now() / 1000) + 60;

  it("counts hits per key in order and reads without counting", async () => {
    const stub = env.RATE_LIMIT_COUNTER.getByName("d_k_v_");
    const end = future();
    expect(await stub.increment([{ key: "d_k_v_60", hits: 1, windowEnd: end }])).toEqual([1]);
    expect(
      await stub.increment([
        { key: "d_k_v_60", hits: 2, windowEnd: end },
        { key: "d_k_v_60", hits: 1, windowEnd: end },
        { key: "d_k_v_120", hits: 0, windowEnd: end + 60 },
      ]),
    ).toEqual([3, 4, 0]);
    expect(await stub.read(["d_k_v_60", "d_k_v_absent"])).toEqual([4, 0]);
  });

  it("keeps its counts in storage, so a new instance continues from them", async () => {
    const stub = env.RATE_LIMIT_COUNTER.getByName("d_durable_");
    const end = future();
    await stub.increment([{ key: "d_durable_0", hits: 2, windowEnd: end }]);
    await stub.increment([{ key: "d_durable_0", hits: 1, windowEnd: end }]);
    // Written behind, within a second, both calls in one write.
    const stored = () => runInDurableObject(stub, (_instance, state) => state.storage.get("d_durable_0"));
    await vi.waitUntil(async () => (await stored()) !== undefined, { timeout: 5000 });
    expect(await stored()).toEqual([3, end]);
  });

  it("is exact under concurrent increments", async () => {
    const stub = env.RATE_LIMIT_COUNTER.getByName("d_concurrent_");
    const end = future();
    const results = await Promise.all(
      Array.from({ length: 50 }, () => stub.increment([{ key: "d_concurrent_0", hits: 1, windowEnd: end }])),
    );
    expect(results.map(([n]) => n).sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
  });

  it("deletes closed windows at the alarm and the whole object once empty", async () => {
    const stub = env.RATE_LIMIT_COUNTER.getByName("d_expiring_");
    const past = Math.floor(Date.now() / 1000) - 1;
    const openEnd = future();
    await stub.increment([
      { key: "d_expiring_old", hits: 5, windowEnd: past },
      { key: "d_expiring_new", hits: 7, windowEnd: openEnd },
    ]);
    // The alarm is due at once; the test runtime may fire it before we do, so run it and wait for its effect.
    await runDurableObjectAlarm(stub);
    await vi.waitUntil(async () => (await stub.read(["d_expiring_old"]))[0] === 0, { timeout: 5000 });
    expect(await stub.read(["d_expiring_old", "d_expiring_new"])).toEqual([0, 7]);
    const nextAlarm = await runInDurableObject(stub, (_instance, state) => state.storage.getAlarm());
    expect(nextAlarm).toBe(openEnd * 1000);

    const emptying = env.RATE_LIMIT_COUNTER.getByName("d_emptying_");
    await emptying.increment([{ key: "d_emptying_0", hits: 1, windowEnd: past }]);
    await runDurableObjectAlarm(emptying);
    const stored = () => runInDurableObject(emptying, (_instance, state) => state.storage.list());
    await vi.waitUntil(async () => (await stored()).size === 0, { timeout: 5000 });
    expect(await runInDurableObject(emptying, (_instance, state) => state.storage.getAlarm())).toBeNull();
    expect(await emptying.increment([{ key: "d_emptying_1", hits: 2, windowEnd: future() }])).toEqual([2]);
  });

  it("lives as one object per rate-limit key", async () => {
    const before = (await listDurableObjectIds(env.RATE_LIMIT_COUNTER)).length;
    await env.RATE_LIMIT_COUNTER.getByName("d_one_").increment([{ key: "d_one_1", hits: 1, windowEnd: future() }]);
    await env.RATE_LIMIT_COUNTER.getByName("d_one_").increment([{ key: "d_one_2", hits: 1, windowEnd: future() }]);
    await env.RATE_LIMIT_COUNTER.getByName("d_two_").increment([{ key: "d_two_1", hits: 1, windowEnd: future() }]);
    expect((await listDurableObjectIds(env.RATE_LIMIT_COUNTER)).length).toBe(before + 2);
  });
});
