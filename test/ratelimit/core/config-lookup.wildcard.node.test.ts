// The wildcard matcher (a `*` anywhere, upstream's newest rule) against a regular expression built from the same
// pattern, over random patterns and texts: same answer every time, and linear work on hostile input.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { wildcardMatches, wildcardOf } from "../../../src/ratelimit/core/config-lookup";

/** The reference meaning: each `*` is `.*`, everything else literal, anchored at both ends. */
function regexMatches(pattern: string, text: string): boolean {
  const source = pattern
    .split("*")
    .map((segment) => segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
    .join(".*");
  return new RegExp(`^${source}$`, "s").test(text);
}

const alphabet = fc.constantFrom("a", "b", "*", "/", "_");
const textAlphabet = fc.constantFrom("a", "b", "/", "_", "*");

describe("wildcardMatches", () => {
  it("agrees with the regular expression of the pattern", () => {
    fc.assert(
      fc.property(
        fc.string({ unit: alphabet, maxLength: 8 }),
        fc.string({ unit: textAlphabet, maxLength: 12 }),
        (p, t) => {
          const wildcard = wildcardOf(p);
          if (wildcard === undefined) return;
          expect(wildcardMatches(wildcard, t)).toBe(regexMatches(p, t));
        },
      ),
      { numRuns: 5000 },
    );
  });

  it("answers a pattern of many stars against a long text that almost matches", () => {
    const wildcard = wildcardOf(`${"a*".repeat(200)}b`)!;
    expect(wildcardMatches(wildcard, "a".repeat(100_000))).toBe(false);
    expect(wildcardMatches(wildcard, `${"a".repeat(100_000)}b`)).toBe(true);
  });

  it("needs the prefix and the suffix not to overlap", () => {
    expect(wildcardMatches(wildcardOf("ab*ba")!, "aba")).toBe(false);
    expect(wildcardMatches(wildcardOf("ab*ba")!, "abba")).toBe(true);
  });
});
