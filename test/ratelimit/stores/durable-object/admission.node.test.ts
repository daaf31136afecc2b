// The per_key layout's bound on distinct counter objects in use: objects in use pass at once, new ones wait for the
// oldest to age out, and nothing is refused.
import { describe, expect, it } from "vitest";
import { ObjectAdmission, type AdmissionClock } from "../../../../src/ratelimit/stores/durable-object/admission";

/** A clock that only moves when a waiter sleeps, recording every sleep. */
function fakeClock(start = 1_000_000) {
  const sleeps: number[] = [];
  const clock: AdmissionClock & { time: number } = {
    time: start,
    now: () => clock.time,
    sleep: async (ms) => {
      sleeps.push(ms);
      clock.time += ms;
    },
  };
  return { clock, sleeps };
}

describe("ObjectAdmission", () => {
  it("admits new objects up to the limit without waiting, and objects in use always", async () => {
    const { clock, sleeps } = fakeClock();
    const admission = new ObjectAdmission(3, 12_000, clock);
    await admission.admit(["a", "b"]);
    await admission.admit(["c"]);
    await admission.admit(["a", "b", "c"]);
    expect(admission.size).toBe(3);
    expect(sleeps).toEqual([]);
  });

  it("makes a new object wait until the oldest has aged out of the residency window", async () => {
    const { clock, sleeps } = fakeClock();
    const admission = new ObjectAdmission(2, 12_000, clock);
    await admission.admit(["a"]);
    clock.time += 5_000;
    await admission.admit(["b"]);
    await admission.admit(["c"]);
    // "a" was used 5 s before "b": it ages out 7 s after "b", so "c" waited at least that long, and less than "b"'s.
    expect(sleeps.length).toBe(1);
    expect(sleeps[0]).toBeGreaterThanOrEqual(7_000);
    expect(sleeps[0]).toBeLessThan(7_100);
    expect(admission.size).toBe(2);
  });

  it("refreshes an object on use, so the least recently used ages out first", async () => {
    const { clock } = fakeClock();
    const admission = new ObjectAdmission(2, 12_000, clock);
    await admission.admit(["a"]);
    clock.time += 1_000;
    await admission.admit(["b"]);
    clock.time += 1_000;
    await admission.admit(["a"]);
    clock.time += 10_500;
    // "b" (used 11.5 s ago) is gone now, "a" (10.5 s ago) is not.
    await admission.admit(["c"]);
    expect(admission.size).toBe(2);
    await admission.admit(["a"]);
    expect(admission.size).toBe(2);
  });

  it("admits a request naming more new objects than the limit once the others have aged out", async () => {
    const { clock } = fakeClock();
    const admission = new ObjectAdmission(2, 12_000, clock);
    await admission.admit(["x"]);
    await admission.admit(["a", "b", "c"]);
    expect(admission.size).toBe(3);
    expect(clock.time).toBeGreaterThanOrEqual(1_000_000 + 12_000);
  });
});
