// Debouncing tenants' gensynchaprx (pure, plain Node): when a call joins a run, waits or runs, and the loop that
// follows those decisions against a simulated clock and lock.
import { describe, expect, it } from "vitest";
import { joinDecision, joinOrRun, MAX_POLLS, type StartedRun } from "../../../src/proxy/haproxy/joining";

const run = (fields: Partial<StartedRun>): StartedRun => ({
  id: 7,
  state: "succeeded",
  startedAt: 1_000,
  reships: false,
  ...fields,
});

describe("joinDecision", () => {
  const at = { arrivedAt: 5_000, now: 5_000, debounceMs: 3_000 };

  it("runs when no run ever started, or the last started a window ago or more", () => {
    expect(joinDecision({ ...at, last: undefined })).toEqual({ kind: "run" });
    expect(joinDecision({ ...at, last: run({ startedAt: 2_000 }) })).toEqual({ kind: "run" });
    expect(joinDecision({ ...at, last: run({ startedAt: 1_000, state: "failed" }) })).toEqual({ kind: "run" });
  });

  it("waits out the window of a run that started less than a window before", () => {
    expect(joinDecision({ ...at, last: run({ startedAt: 2_500 }) })).toEqual({ kind: "wait", ms: 500 });
    expect(joinDecision({ ...at, now: 5_400, last: run({ startedAt: 4_999 }) })).toEqual({ kind: "wait", ms: 2_599 });
  });

  it("joins an ended run that started when or after the call arrived, whatever its outcome", () => {
    expect(joinDecision({ ...at, now: 9_000, last: run({ startedAt: 5_000 }) })).toEqual({ kind: "join", runId: 7 });
    expect(joinDecision({ ...at, now: 9_000, last: run({ startedAt: 6_000, state: "failed" }) })).toEqual({
      kind: "join",
      runId: 7,
    });
  });

  it("never joins a rollback: it re-ships a stored version, not the caller's changes", () => {
    expect(joinDecision({ ...at, now: 8_000, last: run({ startedAt: 6_000, reships: true }) })).toEqual({
      kind: "wait",
      ms: 1_000,
    });
    expect(joinDecision({ ...at, now: 9_500, last: run({ startedAt: 6_000, reships: true }) })).toEqual({
      kind: "run",
    });
  });

  it("waits out the window of a run still going, and looks again soon at one it may join once it ends", () => {
    for (const state of ["running", "queued"] as const) {
      // It may have let its lock go before its end is written: trying to run would start within the window.
      expect(joinDecision({ ...at, last: run({ startedAt: 4_900, state }) })).toEqual({ kind: "wait", ms: 2_900 });
      expect(joinDecision({ ...at, last: run({ startedAt: 4_900, state, reships: true }) })).toEqual({
        kind: "wait",
        ms: 2_900,
      });
      expect(joinDecision({ ...at, last: run({ startedAt: 5_100, state }) })).toEqual({ kind: "look", ms: 3_100 });
      expect(joinDecision({ ...at, now: 7_900, last: run({ startedAt: 5_100, state }) })).toEqual({
        kind: "look",
        ms: 200,
      });
    }
  });

  it("tries to run while a run is going past its window (its lock answers)", () => {
    for (const state of ["running", "queued"] as const) {
      expect(joinDecision({ ...at, last: run({ startedAt: 2_000, state }) })).toEqual({ kind: "run" });
      expect(joinDecision({ ...at, now: 8_100, last: run({ startedAt: 5_100, state }) })).toEqual({ kind: "run" });
    }
  });
});

/**
 * A simulated installation: a clock, one lock, and runs that take `runMs`. A run's end is written `endLagMs` after it
 * lets its lock go, as a queued run's is.
 */
function simulation(runMs: number, endLagMs = 0) {
  let clock = 0;
  const runs: { id: number; startedAt: number; endsAt: number }[] = [];
  let busyUntil = -1;
  const latest = () => runs.at(-1);
  const ports = (who: string, log: string[]) => ({
    latestStartedRun: async () => {
      const last = latest();
      return (
        last &&
        run({ id: last.id, startedAt: last.startedAt, state: clock < last.endsAt + endLagMs ? "running" : "succeeded" })
      );
    },
    run: async () => {
      if (clock < busyUntil) throw new Error("locked");
      const id = runs.length + 1;
      runs.push({ id, startedAt: clock, endsAt: clock + runMs });
      busyUntil = clock + runMs;
      log.push(`${who} ran ${id}`);
      clock += runMs;
      return id;
    },
    joined: async (runId: number) => {
      log.push(`${who} joined ${runId}`);
      return runId;
    },
    isBusy: (error: unknown) => error instanceof Error && error.message === "locked",
    sleep: async (ms: number) => {
      log.push(`${who} slept ${ms}`);
      clock += ms;
    },
    now: () => clock,
  });
  return {
    ports,
    runs,
    at: (time: number) => {
      clock = time;
    },
  };
}

/** A simulation after "a" ran once, its run starting at `aStartsAt`, with the clock then at `bArrivesAt`. */
async function afterARan(runMs: number, bArrivesAt: number, aStartsAt = 0, endLagMs = 0) {
  const sim = simulation(runMs, endLagMs);
  const log: string[] = [];
  sim.at(aStartsAt);
  await sim.ports("a", log).run();
  sim.at(bArrivesAt);
  return { sim, log, b: sim.ports("b", log) };
}

describe("joinOrRun", () => {
  it("a call right after a run waits out the window, then runs once", async () => {
    const { sim, log, b } = await afterARan(200, 1_000);
    expect(await joinOrRun(b, { debounceMs: 3_000, deadlineMs: 60_000 })).toBe(2);
    expect(log).toEqual(["a ran 1", "b slept 2000", "b ran 2"]);
    expect(sim.runs.map((r) => r.startedAt)).toEqual([0, 3_000]);
  });

  it("a call that arrives while a later run is going joins it when it ends", async () => {
    // b arrives at 50, before a's run starts at 100 and ends at 2,100: the lock refuses b until then.
    const { log, b } = await afterARan(2_000, 50, 100);
    expect(await joinOrRun(b, { debounceMs: 3_000, deadlineMs: 60_000 })).toBe(1);
    // Looked at after 0.5 s, 1 s, then at the end of the window, by which time a's run has ended.
    expect(log).toEqual(["a ran 1", "b slept 500", "b slept 1000", "b slept 1550", "b joined 1"]);
  });

  it("looks at a run it may join at most MAX_POLLS times however long the window", async () => {
    // a starts 10 ms after b arrives and never ends; an 8-minute window would be 960 looks at 0.5 s.
    const { log, b } = await afterARan(100_000_000, 0, 10);
    await expect(joinOrRun(b, { debounceMs: 480_000, deadlineMs: 610_000 })).rejects.toThrow("locked");
    expect(log).toEqual(["a ran 1", "b slept 500", "b slept 1000", ...Array(198).fill("b slept 2000")]);
  });

  it("a call that finds the lock free before the last run's end is written still waits out its window", async () => {
    // a runs from 0 to 200 and its end is written at 700; b arrives at 300.
    const { sim, log, b } = await afterARan(200, 300, 0, 500);
    expect(await joinOrRun(b, { debounceMs: 3_000, deadlineMs: 60_000 })).toBe(2);
    expect(log).toEqual(["a ran 1", "b slept 2700", "b ran 2"]);
    expect(sim.runs.map((r) => r.startedAt)).toEqual([0, 3_000]);
  });

  it("past its deadline, the lock's refusal is the answer", async () => {
    const { log, b } = await afterARan(100_000, 10);
    await expect(joinOrRun(b, { debounceMs: 1_000, deadlineMs: 5_000 })).rejects.toThrow("locked");
    // The window of a's run first; the last wait is what is left of the deadline.
    expect(log).toEqual(["a ran 1", "b slept 990", "b slept 500", "b slept 1000", "b slept 2000", "b slept 510"]);
  });

  it("looks again after 0.5 s, then twice as long each time, while the lock refuses; then runs", async () => {
    // b arrives at 10, after a's run started at 0: it waits for the run to end, and no window applies.
    const { log, b } = await afterARan(1_200, 10);
    expect(await joinOrRun(b, { debounceMs: 0, deadlineMs: 60_000 })).toBe(2);
    expect(log).toEqual(["a ran 1", "b slept 500", "b slept 1000", "b ran 2"]);
  });

  it("waits at most 2 s between looks, and looks at most MAX_POLLS times however far its deadline", async () => {
    const { log, b } = await afterARan(100_000_000, 10);
    await expect(joinOrRun(b, { debounceMs: 0, deadlineMs: 10_000_000 })).rejects.toThrow("locked");
    expect(MAX_POLLS).toBe(200);
    expect(log).toEqual(["a ran 1", "b slept 500", "b slept 1000", ...Array(198).fill("b slept 2000")]);
  });
});
