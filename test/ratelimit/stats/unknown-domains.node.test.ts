// The bound on unknown-domain statistics: anonymous callers choose the domain, so one isolate's flush carries at most
// MAX_UNKNOWN_DOMAIN_STATS domain_not_found names (the reference's), the rest under one overflow name, and the
// aggregate folds names past its room the same way.
import { describe, expect, it } from "vitest";
import { boundDomainNotFound, StatsBuffer } from "../../../src/ratelimit/stats/buffer";
import { DOMAIN_NOT_FOUND_OVERFLOW, MAX_UNKNOWN_DOMAIN_STATS } from "../../../src/ratelimit/stats/names";

const notFound = (domain: string) => `ratelimit.service.rate_limit.${domain}.domain_not_found`;
const unknown = (descriptors: number) => ({ rules: [], domainNotFound: descriptors, globalShadowMode: 0 });

describe("unknown-domain statistics in one isolate's buffer", () => {
  it("names the first 100 unknown domains of a flush, counts the rest under the overflow name", () => {
    expect(MAX_UNKNOWN_DOMAIN_STATS).toBe(100);
    const buffer = new StatsBuffer({ keepSamples: false });
    for (let i = 0; i < 10_000; i++) buffer.addRequestStats(`d${i}`, unknown(1));
    // A domain already named keeps counting under its name; two descriptors count two.
    buffer.addRequestStats("d7", unknown(2));
    buffer.addRequestStats("d100", unknown(2));
    const counters = buffer.take("iso-1")!.counters;
    const expected: Record<string, number> = {};
    for (let i = 0; i < 100; i++) expected[notFound(`d${i}`)] = 1;
    expected[notFound("d7")] = 3;
    expected[DOMAIN_NOT_FOUND_OVERFLOW] = 9_900 + 2;
    expect(counters).toEqual(expected);
  });

  it("gives the next flush its own room", () => {
    const buffer = new StatsBuffer({ keepSamples: false });
    for (let i = 0; i < 101; i++) buffer.addRequestStats(`a${i}`, unknown(1));
    expect(buffer.take("iso-1")!.counters[DOMAIN_NOT_FOUND_OVERFLOW]).toBe(1);
    buffer.addRequestStats("late", unknown(1));
    expect(buffer.take("iso-2")!.counters).toEqual({ [notFound("late")]: 1 });
  });
});

describe("boundDomainNotFound (the aggregate's room)", () => {
  it("keeps stored names and new ones up to the room, folds the rest, and leaves other counters alone", () => {
    const counters = {
      [notFound("old")]: 4,
      [notFound("n1")]: 1,
      "ratelimit.service.config_load_success": 1,
      [notFound("n2")]: 2,
      [notFound("n3")]: 3,
      [DOMAIN_NOT_FOUND_OVERFLOW]: 5,
    };
    const stored = new Set([notFound("old")]);
    expect(boundDomainNotFound(counters, 99, (name) => stored.has(name))).toEqual({
      [notFound("old")]: 4,
      [notFound("n1")]: 1,
      "ratelimit.service.config_load_success": 1,
      [DOMAIN_NOT_FOUND_OVERFLOW]: 2 + 3 + 5,
    });
    expect(boundDomainNotFound(counters, 0, () => false)).toEqual(counters);
  });
});
