// The pure parts of `npm run bench:haproxy-regex`: its hand-built patterns still pass the vetting together and sit at
// the bound, a seed finds the same random patterns again, and the texts have the length and shape asked for.
import { describe, expect, it } from "vitest";
import {
  KNOWN,
  PALETTE,
  aclParams,
  hurtingCandidates,
  randomPattern,
  seeded,
  textOf,
  valuesText,
} from "../../bench/haproxy-regex-patterns.mjs";
import { vetBackendParams } from "../../src/proxy/haproxy-params/index";
import { MAX_WORK, workOf } from "../../src/proxy/haproxy-params/regex-work";

describe("the hand-built patterns", () => {
  it("are accepted together as one backend's ACLs, on hdr(x) and on path", () => {
    for (const fetch of ["hdr(x)", "path"]) {
      const result = vetBackendParams(
        aclParams(
          KNOWN.map((entry) => entry.pattern),
          fetch,
        ),
      );
      expect(result.ok && result.value.lines.length).toBe(2 * KNOWN.length);
    }
  });

  it("each cost the vetting's bound 60 to 100 % of MAX_WORK", () => {
    const outside = KNOWN.filter(({ pattern }) => workOf(pattern) < 0.6 * MAX_WORK || workOf(pattern) > MAX_WORK);
    expect(outside).toEqual([]);
  });
});

describe("the random patterns", () => {
  it("are the same for a seed, and differ from another seed's", () => {
    const patterns = (seed: number) => {
      const random = seeded(seed);
      return Array.from({ length: 20 }, () => randomPattern(random).pattern);
    };
    expect(patterns(1)).toEqual(patterns(1));
    expect(patterns(2)).not.toEqual(patterns(1));
  });
});

describe("the texts", () => {
  it("have the length asked for, the head first and the tail last", () => {
    expect(textOf({ head: "x", unit: "ab", tail: "=x" }, 9)).toBe("xababab=x");
    expect(textOf({ head: "", unit: "a", tail: "" }, 14336)).toBe("a".repeat(14336));
  });

  it("split a header into values of the size asked for, or into empty values", () => {
    const candidate = { head: "", unit: "a", tail: "=" };
    expect(valuesText(candidate, 3, 11)).toBe("aa=,aa=,aa=");
    expect(valuesText(candidate, 0, 5)).toBe(",,,,,");
  });

  it("are each palette character and near-match, alone and with each tail at either end", () => {
    const candidates = hurtingCandidates({ near: ["a".repeat(40) + "="], tails: ["=x"] });
    expect(candidates.length).toBe((PALETTE.length + 1) * 3);
    expect(candidates.slice(-3).map(({ label }) => label)).toEqual([
      '("a"×40+"=")',
      '("a"×40+"=")…+"=x"',
      '"=x"+("a"×40+"=")…',
    ]);
  });
});
