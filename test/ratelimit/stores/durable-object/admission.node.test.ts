// The per_key layout's bound on distinct counter objects in use: objects in use pass at once, new ones wait for the
// oldest to age out, never longer than the wait bound: past it, or when no object ages out within it, they are refused
// with CounterObjectsBusy naming both settings.
import { describe, expect, it } from "vitest";
import {
  CounterObjectsBusy,
  ObjectAdmission,
  type AdmissionClock,
} from "../../../../src/ratelimit/stores/durable-object/admission";
import { PublicStoreError } from "../../../../src/ratelimit/core/types";

/** Long enough for every wait of the tests that are not about the bound. */
const NO_BOUND_MS = 60_000;

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

/** Asserts the waiter slept once, at least `atLeast` ms and less than `under` (the wake-up spread on top). */
function expectOneSleep(sleeps: number[], atLeast: number, under: number) {
  expect(sleeps.length).toBe(1);
  expect(sleeps[0]).toBeGreaterThanOrEqual(atLeast);
  expect(sleeps[0]).toBeLessThan(under);
}

/** An admission of `limit` objects, each resident 12 s after its last use, waiting at most `maxWaitMs`. */
function admissionOver(limit: number, maxWaitMs: number) {
  const { clock, sleeps } = fakeClock();
  return { admission: new ObjectAdmission(limit, 12_000, maxWaitMs, clock), clock, sleeps };
}

describe("ObjectAdmission", () => {
  it("admits new objects up to the limit without waiting, and objects in use always", async () => {
    const { admission, clock, sleeps } = admissionOver(3, NO_BOUND_MS);
    await admission.admit(["a", "b"]);
    await admission.admit(["c"]);
    await admission.admit(["a", "b", "c"]);
    expect(admission.size).toBe(3);
    expect(sleeps).toEqual([]);
  });

  it("makes a new object wait until the oldest has aged out of the residency window", async () => {
    const { admission, clock, sleeps } = admissionOver(2, NO_BOUND_MS);
    await admission.admit(["a"]);
    clock.time += 5_000;
    await admission.admit(["b"]);
    await admission.admit(["c"]);
    // "a" was used 5 s before "b": it ages out 7 s after "b", so "c" waited at least that long, and less than "b"'s.
    expectOneSleep(sleeps, 7_000, 7_100);
    expect(admission.size).toBe(2);
  });

  it("refreshes an object on use, so the least recently used ages out first", async () => {
    const { admission, clock } = admissionOver(2, NO_BOUND_MS);
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
    const { admission, clock } = admissionOver(2, NO_BOUND_MS);
    await admission.admit(["x"]);
    await admission.admit(["a", "b", "c"]);
    expect(admission.size).toBe(3);
    expect(clock.time).toBeGreaterThanOrEqual(1_000_000 + 12_000);
  });
});

describe("ObjectAdmission's wait bound", () => {
  const busy =
    "this isolate already uses COUNTER_OBJECT_ACTIVE_LIMIT (1) counter objects, and none frees within " +
    "COUNTER_OBJECT_ADMISSION_MAX_WAIT (3000 ms)";

  it("admits a new object whose slot frees within the bound, after waiting for it", async () => {
    const { admission, clock, sleeps } = admissionOver(1, 3_000);
    await admission.admit(["a"]);
    clock.time += 10_000;
    await admission.admit(["b"]);
    // "a" ages out 2 s later; the wake-up spread adds less than 50 ms.
    expectOneSleep(sleeps, 2_000, 2_050);
    expect(admission.size).toBe(1);
  });

  it("admits a slot that frees exactly at the bound, having waited exactly the bound", async () => {
    const { admission, clock, sleeps } = admissionOver(1, 2_000);
    await admission.admit(["a"]);
    clock.time += 10_000;
    await admission.admit(["b"]);
    expect(sleeps).toEqual([2_000]);
    expect(admission.size).toBe(1);
  });

  it("refuses at once, naming both settings, when the oldest object ages out after the bound", async () => {
    const { admission, clock, sleeps } = admissionOver(1, 3_000);
    await admission.admit(["a"]);
    clock.time += 8_999;
    const refused = admission.admit(["b"]);
    await expect(refused).rejects.toThrow(new CounterObjectsBusy(1, 3_000));
    await expect(refused).rejects.toBeInstanceOf(PublicStoreError);
    await expect(refused).rejects.toHaveProperty("message", busy);
    expect(sleeps).toEqual([]);
    // Nothing was taken: the object in use still passes, and "b" passes once "a" has aged out.
    await admission.admit(["a"]);
    clock.time += 12_000;
    await admission.admit(["b"]);
    expect(sleeps).toEqual([]);
  });

  it("refuses at the bound, not later, when other requests take the slots that freed meanwhile", async () => {
    const { clock, sleeps } = fakeClock();
    let admission!: ObjectAdmission;
    // While "b" sleeps, another request takes the slot "a" frees; the next one frees 12 s after that.
    const contended: AdmissionClock = {
      now: clock.now,
      sleep: async (ms) => {
        await clock.sleep(ms);
        if (sleeps.length === 1) await admission.admit(["c"]);
      },
    };
    admission = new ObjectAdmission(1, 12_000, 3_000, contended);
    await admission.admit(["a"]);
    clock.time += 10_000;
    const start = clock.time;
    await expect(admission.admit(["b"])).rejects.toThrow(busy);
    expect(clock.time - start).toBeLessThanOrEqual(3_000);
    expect(sleeps.length).toBe(1);
    await admission.admit(["c"]);
    expect(admission.size).toBe(1);
  });

  it("with a bound of 0, admits what fits and refuses the rest without waiting", async () => {
    const { admission, clock, sleeps } = admissionOver(2, 0);
    await admission.admit(["a", "b"]);
    await admission.admit(["b"]);
    await expect(admission.admit(["c"])).rejects.toThrow(
      "this isolate already uses COUNTER_OBJECT_ACTIVE_LIMIT (2) counter objects, and none frees within " +
        "COUNTER_OBJECT_ADMISSION_MAX_WAIT (0 ms)",
    );
    expect(sleeps).toEqual([]);
    expect(admission.size).toBe(2);
  });
});
