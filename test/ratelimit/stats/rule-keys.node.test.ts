// The bound on rule statistics: request values reach stats keys (limit overrides, detailed_metric, value_to_metric),
// so one isolate's flush carries at most MAX_RULE_STATS_PER_DOMAIN keys per domain plus its overflow key, each key cut
// after MAX_STATS_KEY_LENGTH (the counter key kept whole), and the aggregate folds keys past its room the same way.
import { describe, expect, it } from "vitest";
import { MAX_STATS_KEY_LENGTH } from "../../../src/ratelimit/core/stats";
import type { RateLimitDescriptor } from "../../../src/ratelimit/core/types";
import { boundRules, partsOf, StatsBuffer } from "../../../src/ratelimit/stats/buffer";
import { MAX_RULE_STATS_PER_DOMAIN } from "../../../src/ratelimit/stats/names";
import { harness, loadConfigText } from "../../support/ratelimit-core";

const CONFIG = loadConfigText(`
domain: d
descriptors:
  - key: k
    rate_limit: {unit: minute, requests_per_unit: 2}
  - key: remote_address
    detailed_metric: true
    rate_limit: {unit: minute, requests_per_unit: 100}
`);
const OTHER = loadConfigText(`
domain: other
descriptors:
  - key: k
    rate_limit: {unit: minute, requests_per_unit: 2}
`);

const override = (key: string, value: string): RateLimitDescriptor => ({
  entries: [{ key, value }],
  limit: { requestsPerUnit: 1000, unit: "SECOND" },
});

/** Runs each request's descriptors through the core and records the decision in `buffer`. */
async function record(buffer: StatsBuffer, domain: string, requests: RateLimitDescriptor[][]) {
  const h = harness(domain === "d" ? CONFIG : OTHER);
  for (const descriptors of requests) {
    buffer.addRequestStats(domain, (await h.run({ domain, descriptors, hitsAddend: 0 })).stats);
  }
  return h;
}

describe("rule statistics in one isolate's buffer", () => {
  it("names the first 1000 keys of a domain in a flush, counts 10 000 more override keys under its overflow", async () => {
    expect(MAX_RULE_STATS_PER_DOMAIN).toBe(1000);
    const buffer = new StatsBuffer({ keepSamples: false });
    await record(buffer, "d", [[{ entries: [{ key: "k", value: "" }] }]]);
    await record(
      buffer,
      "d",
      Array.from({ length: 10_000 }, (_, i) => [override("o", `v${i}`)]),
    );
    // A key named before the bound was reached keeps counting under its name, the configured one and an override's.
    await record(buffer, "d", [[{ entries: [{ key: "k", value: "" }] }, override("o", "v5")]]);
    await record(buffer, "other", [[override("o", "x")]]);

    const batch = buffer.take("iso-1")!;
    const expected: Record<string, number[]> = { "d.k": [2, 0, 0, 2, 0, 0] };
    for (let i = 0; i < 999; i++) expected[`d.o_v${i}`] = [1, 0, 0, 1, 0, 0];
    expected["d.o_v5"] = [2, 0, 0, 2, 0, 0];
    expected["d.rule_stats_overflow"] = [10_000 - 999, 0, 0, 10_000 - 999, 0, 0];
    expect(batch.domains.d).toEqual(expected);
    expect(batch.domains.other).toEqual({ "other.o_x": [1, 0, 0, 1, 0, 0] });
  });

  it("gives the next flush its own room", async () => {
    const buffer = new StatsBuffer({ keepSamples: false });
    await record(
      buffer,
      "d",
      Array.from({ length: 1001 }, (_, i) => [override("o", `v${i}`)]),
    );
    expect(buffer.take("iso-1")!.domains.d["d.rule_stats_overflow"]).toEqual([1, 0, 0, 1, 0, 0]);
    await record(buffer, "d", [[override("o", "late")]]);
    expect(buffer.take("iso-2")!.domains).toEqual({ d: { "d.o_late": [1, 0, 0, 1, 0, 0] } });
  });

  it("bounds one flush of 40 requests of 64 overrides with 1 KB values to 1000 cut keys and the overflow", async () => {
    const buffer = new StatsBuffer({ keepSamples: false });
    const value = (r: number, i: number) => `${r}-${i}-${"a".repeat(1000)}`;
    const requests = Array.from({ length: 40 }, (_, r) =>
      Array.from({ length: 64 }, (_, i) => override("x", value(r, i))),
    );
    const h = await record(buffer, "d", requests);
    const [, part] = partsOf(buffer.take("iso-1")!);
    const keys = Object.keys(part.rules);
    expect(keys.length).toBe(1001);
    const cut = `d.x_${value(0, 0)}`.slice(0, MAX_STATS_KEY_LENGTH) + "~";
    expect(keys[0]).toBe(cut);
    expect(keys.filter((key) => key.length !== MAX_STATS_KEY_LENGTH + 1)).toEqual(["d.rule_stats_overflow"]);
    expect(part.rules["d.rule_stats_overflow"]).toEqual([2560 - 1000, 0, 0, 2560 - 1000, 0, 0]);
    expect(JSON.stringify(part).length).toBeLessThan(300_000);
    // The counters keep the values whole: 2560 of them, one per descriptor.
    expect([...h.store.counters.keys()].filter((key) => key.includes(value(39, 63))).length).toBe(1);
    expect(h.store.counters.size).toBe(2560);
  });

  it("cuts a key of a detailed_metric rule, never inside a surrogate pair, and leaves a key at the bound whole", async () => {
    const buffer = new StatsBuffer({ keepSamples: false });
    const head = "d.remote_address_";
    const atBound = "b".repeat(MAX_STATS_KEY_LENGTH - head.length);
    const pairAtCut = `${"c".repeat(MAX_STATS_KEY_LENGTH - head.length - 1)}😀tail`;
    await record(buffer, "d", [
      [{ entries: [{ key: "remote_address", value: atBound }] }],
      [{ entries: [{ key: "remote_address", value: pairAtCut }] }],
      [{ entries: [{ key: "remote_address", value: "10.1.2.3" }] }],
    ]);
    expect(Object.keys(buffer.take("iso-1")!.domains.d)).toEqual([
      head + atBound,
      `${head}${"c".repeat(MAX_STATS_KEY_LENGTH - head.length - 1)}~`,
      "d.remote_address_10_1_2_3",
    ]);
  });
});

describe("boundRules (the aggregate's room)", () => {
  it("keeps stored keys and new ones up to the room, folds the rest into the overflow with its own counts", () => {
    const rules = {
      "d.old": [4, 1, 0, 3, 0, 0],
      "d.n1": [1, 0, 0, 1, 0, 0],
      "d.n2": [2, 0, 1, 2, 0, 0],
      "d.n3": [3, 1, 0, 2, 1, 0],
      "d.rule_stats_overflow": [5, 0, 0, 5, 0, 1],
    };
    const stored = new Set(["d.old"]);
    expect(boundRules(rules, "d.rule_stats_overflow", 999, (key) => stored.has(key))).toEqual({
      "d.old": [4, 1, 0, 3, 0, 0],
      "d.n1": [1, 0, 0, 1, 0, 0],
      "d.rule_stats_overflow": [10, 1, 1, 9, 1, 1],
    });
    expect(boundRules(rules, "d.rule_stats_overflow", 0, () => false)).toEqual(rules);
  });
});
