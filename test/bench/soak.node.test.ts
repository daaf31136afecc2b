// The pure parts of `npm run bench:soak`: its options from the environment, the window its growth is judged over,
// each process's growth between two samples, and the printed table.
import { describe, expect, it } from "vitest";
import { controlComparison, growth, growthWindowMs, sampleTable, soakOptions } from "../../bench/soak-figures.mjs";

describe("soakOptions", () => {
  it("defaults to 15 minutes at 50 requests/s over 5000 keys, sampled every 30 s, with the control arm", () => {
    expect(soakOptions({})).toEqual({ minutes: 15, rate: 50, sampleSeconds: 30, keys: 5000, control: true });
    expect(soakOptions({ SOAK_MINUTES: "", SOAK_RATE: "", SOAK_CONTROL: "" })).toEqual({
      minutes: 15,
      rate: 50,
      sampleSeconds: 30,
      keys: 5000,
      control: true,
    });
  });

  it("reads SOAK_MINUTES, SOAK_RATE, SOAK_SAMPLE_SECONDS, SOAK_KEYS and SOAK_CONTROL", () => {
    const env = { SOAK_MINUTES: "4.5", SOAK_RATE: "20", SOAK_SAMPLE_SECONDS: "10", SOAK_KEYS: "12", SOAK_CONTROL: "0" };
    expect(soakOptions(env)).toEqual({ minutes: 4.5, rate: 20, sampleSeconds: 10, keys: 12, control: false });
    expect(soakOptions({ SOAK_CONTROL: "1" }).control).toBe(true);
  });

  it.each([
    ["SOAK_MINUTES", "0.1", "SOAK_MINUTES: expected a number of at least 0.5"],
    ["SOAK_RATE", "fast", "SOAK_RATE: expected a number of at least 1"],
    ["SOAK_SAMPLE_SECONDS", "0", "SOAK_SAMPLE_SECONDS: expected a number of at least 1"],
    ["SOAK_KEYS", "-3", "SOAK_KEYS: expected a number of at least 1"],
    ["SOAK_CONTROL", "yes", "SOAK_CONTROL: expected 0 or 1"],
  ])("refuses %s=%s", (name, value, message) => {
    expect(() => soakOptions({ [name]: value })).toThrow(message);
  });
});

describe("growth", () => {
  const samples = [
    { atMs: 0, kib: { workerd: 100_000, gateway: 60_000 } },
    { atMs: 300_000, kib: { workerd: 400_000, gateway: 64_000 } },
    { atMs: 600_000, kib: { workerd: 410_000, gateway: 64_000 } },
    { atMs: 900_000, kib: { workerd: 420_000, gateway: 63_000 } },
  ];

  it("judges the last 10 minutes of a 15-minute run, and the last two thirds of a shorter one", () => {
    expect(growthWindowMs(15 * 60_000)).toBe(600_000);
    expect(growthWindowMs(60 * 60_000)).toBe(600_000);
    expect(growthWindowMs(6 * 60_000)).toBe(240_000);
  });

  it("compares the last sample with the one nearest the window's start, per process, in per cent", () => {
    expect(growth(samples, 600_000)).toEqual({
      fromMs: 300_000,
      toMs: 900_000,
      growth: {
        workerd: { from: 400_000, to: 420_000, percent: 5 },
        gateway: { from: 64_000, to: 63_000, percent: -1.5625 },
      },
    });
  });

  it("leaves out a process missing from either end, and needs two samples", () => {
    const partial = [
      { atMs: 0, kib: { a: 10 } },
      { atMs: 1000, kib: { a: 20, b: 5 } },
    ];
    expect(growth(partial, 1000).growth).toEqual({ a: { from: 10, to: 20, percent: 100 } });
    expect(() => growth(partial.slice(1), 1000)).toThrow("growth needs at least two samples");
  });
});

describe("sampleTable", () => {
  it("prints one row per sample in MiB, a dash for a process not running then", () => {
    const table = sampleTable(
      [
        { atMs: 0, kib: { a: 1024 } },
        { atMs: 30_400, kib: { a: 2560, b: 512 } },
      ],
      ["a", "b"],
    );
    expect(table).toBe("| t | a | b |\n|---|---|---|\n| 0 s | 1.0 | - |\n| 30 s | 2.5 | 0.5 |");
  });
});

describe("controlComparison", () => {
  it("puts each workerd's growth beside its control's, in MiB and per cent", () => {
    const byName = {
      "workerd user": { from: 746_291, to: 867_430, percent: 16.23 },
      "workerd proxy": { from: 329_216, to: 515_584, percent: 56.61 },
      "control workerd user": { from: 104_755, to: 159_027, percent: 51.81 },
      gateway: { from: 72_090, to: 76_390, percent: 5.96 },
    };
    expect(controlComparison(byName)).toEqual([
      {
        name: "workerd user",
        mib: (867_430 - 746_291) / 1024,
        percent: 16.23,
        controlMib: (159_027 - 104_755) / 1024,
        controlPercent: 51.81,
      },
    ]);
  });

  it("gives nothing without the control arm", () => {
    expect(controlComparison({ "workerd user": { from: 1, to: 2, percent: 100 } })).toEqual([]);
  });
});
