// The keys of additional_limits windows never meet another descriptor's keys: the audited collision (a value ending
// in `_w1` once spelled another value's day window, which the local cache then held over) and a property over
// arbitrary values, for every algorithm and unit.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { generateCacheKey, tokenBucketKey } from "../../../src/ratelimit/core/cache-key";
import { getLimit } from "../../../src/ratelimit/core/config";
import { LocalCache } from "../../../src/ratelimit/core/local-cache";
import type { DescriptorEntry } from "../../../src/ratelimit/core/types";
import { type KnownUnit, unitToDivider } from "../../../src/ratelimit/core/units";
import { windowsOperation } from "../../../src/ratelimit/core/windows";
import { descriptor, harness, loadConfigText, request } from "../../support/ratelimit-core";

const DAY_START = 1_799_971_200; // a whole UTC day

describe("additional window keys and other descriptors", () => {
  it("keeps a value ending in _w1 from holding another value's day window over in the local cache", async () => {
    const config = loadConfigText(`domain: d
descriptors:
  - key: user
    rate_limit: {unit: minute, requests_per_unit: 5}
    additional_limits: [{unit: day, requests_per_unit: 1000}]
`);
    const { run } = harness(config, {}, new LocalCache(1024 * 1024));
    const codes = [];
    for (let i = 1; i <= 6; i++)
      codes.push((await run(request("d", [[["user", "alice_w1"]]]), DAY_START + i)).response);
    expect(codes.map((response) => response.overallCode)).toEqual(["OK", "OK", "OK", "OK", "OK", "OVER_LIMIT"]);
    const alice = await run(request("d", [[["user", "alice"]]]), DAY_START + 30);
    expect(alice.response.statuses).toEqual([
      {
        code: "OK",
        currentLimit: { requestsPerUnit: 5, unit: "MINUTE" },
        limitRemaining: 4,
        durationUntilResetSeconds: 30,
      },
    ]);
    expect(alice.stats.rules.map((rule) => [rule.key, rule.totalHits, rule.withinLimit, rule.overLimit])).toEqual([
      ["d.user", 1, 1, 0],
      ["d.user.window_1", 1, 1, 0],
    ]);
  });
});

// Every window kind as an additional window, each unit once, so that the property meets every key form.
const RULES = `domain: d
descriptors:
  - key: k
    rate_limit: {unit: second, requests_per_unit: 2}
    additional_limits:
      - {unit: second, requests_per_unit: 3}
      - {unit: minute, requests_per_unit: 3}
      - {algorithm: sliding_window, unit: hour, requests_per_unit: 3}
      - {algorithm: token_bucket, unit: day, requests_per_unit: 3}
      - {unit: minute, unit_multiplier: 5, requests_per_unit: 3}
`;
const UNITS: KnownUnit[] = ["SECOND", "MINUTE", "HOUR", "DAY", "WEEK", "MONTH", "YEAR"];

/** Every key a descriptor's own window can have at `now`: fixed/sliding windows, their previous ones, its bucket. */
function mainKeys(entries: DescriptorEntry[], now: number): string[] {
  return UNITS.flatMap((unit) => {
    const key = generateCacheKey("", "d", entries, unit, now);
    return [key.key, `${key.counterName}${key.windowStart - unitToDivider(unit)}`, tokenBucketKey(key.counterName)];
  });
}

/** The keys of the additional windows (and their sliding windows' previous ones) of `k=value` at `now`. */
function additionalKeys(value: string, now: number): string[] {
  const config = loadConfigText(RULES);
  const entries = [{ key: "k", value }];
  const limit = getLimit(config, "d", descriptor(["k", value]))!;
  const keyOf = (unit: KnownUnit, multiplier: number) => generateCacheKey("", "d", entries, unit, now, [], multiplier);
  return windowsOperation(keyOf, limit, now).plans.flatMap(({ spec }, n) => {
    if (n === 0) return [];
    return spec.algorithm?.kind === "sliding_window" ? [spec.key, spec.algorithm.previousKey] : [spec.key];
  });
}

describe("additional window keys: property", () => {
  // Values built from the pieces keys are made of, so that near misses (`v_w1`, `v_tb`, `v_123`) come up often.
  const piece = fc.constantFrom("_", "w", "1", "2", "5", "tb", "0", "v", "_w1", "_w2_");
  const value = fc.oneof(
    fc.string(),
    fc.array(piece, { maxLength: 8 }).map((parts) => parts.join("")),
  );
  const entry = fc.record({ key: fc.oneof(fc.constant("k"), fc.string()), value });

  it("no key of any descriptor's own window equals any additional window key", () => {
    fc.assert(
      fc.property(
        value,
        fc.array(entry, { minLength: 1, maxLength: 3 }),
        fc.boolean(),
        fc.integer({ min: 0, max: 4_000_000_000 }),
        (victim, entries, suffixed, now) => {
          // Half the time the other descriptor's last value extends the victim's, as an attacker would write it.
          if (suffixed) entries[entries.length - 1].value = `${victim}_${entries[entries.length - 1].value}`;
          const theirs = new Set(mainKeys(entries, now));
          const mine = additionalKeys(victim, now);
          expect(mine.filter((key) => theirs.has(key))).toEqual([]);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it("spells window n's key as the key it would have alone plus _w<n>, apart from alice_w2's own keys", () => {
    const now = DAY_START + 1;
    expect(additionalKeys("alice", now)).toEqual([
      `d_k_alice_${now}_w1`,
      `d_k_alice_${DAY_START}_w2`,
      `d_k_alice_${DAY_START}_w3`,
      `d_k_alice_${DAY_START - 3600}_w3`,
      "d_k_alice_tb_w4",
      `d_k_alice_${DAY_START}_w5`,
    ]);
    const theirs = mainKeys([{ key: "k", value: "alice_w2" }], now);
    expect(additionalKeys("alice", now).filter((key) => theirs.includes(key))).toEqual([]);
  });
});
