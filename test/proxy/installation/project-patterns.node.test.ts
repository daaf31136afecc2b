// API-user project patterns (pure, plain Node): RE2 syntax checked when stored, linear-time matching of labels only.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  anyPatternMatchesLabel,
  MAX_PATTERN_LENGTH,
  patternProblem,
} from "../../../src/proxy/installation/project-patterns";

describe("patternProblem", () => {
  it.each(["ab.*", "a|b", "[a-z]{2,8}", "(a+)+$", "shop(one|two)", "\\d+"])("accepts %s", (pattern) => {
    expect(patternProblem(pattern)).toBeUndefined();
  });

  it.each([
    [
      "(a)\\1",
      "must be a regular expression in RE2 syntax (no backreferences or lookaround): invalid escape sequence: `\\1`",
    ],
    [
      "(?=a)a",
      "must be a regular expression in RE2 syntax (no backreferences or lookaround): invalid or unsupported Perl syntax: `(?=`",
    ],
    [
      "(unclosed",
      "must be a regular expression in RE2 syntax (no backreferences or lookaround): missing closing ): `(unclosed`",
    ],
    [
      "(a{999}){999}",
      "must be a regular expression in RE2 syntax (no backreferences or lookaround): invalid repeat count: `{999}`",
    ],
  ])("refuses %s", (pattern, problem) => {
    expect(patternProblem(pattern)).toBe(problem);
  });

  it("refuses a pattern longer than the limit", () => {
    expect(patternProblem("a".repeat(MAX_PATTERN_LENGTH + 1))).toBe(`must be at most ${MAX_PATTERN_LENGTH} characters`);
    expect(patternProblem("a".repeat(MAX_PATTERN_LENGTH))).toBeUndefined();
  });
});

describe("anyPatternMatchesLabel", () => {
  it("matches the whole label, as ^(?:pattern)$ did", () => {
    expect(anyPatternMatchesLabel(["ab.*"], "abc")).toBe(true);
    expect(anyPatternMatchesLabel(["ab"], "abc")).toBe(false);
    expect(anyPatternMatchesLabel(["b"], "abc")).toBe(false);
    expect(anyPatternMatchesLabel(["x", "a|abc"], "abc")).toBe(true);
    expect(anyPatternMatchesLabel([], "abc")).toBe(false);
  });

  it("answers the pattern that stalled the backtracking engine, on a label it cannot match", () => {
    // (a+)+$ against 31 a's and a digit took seconds per call on RegExp; RE2 answers in one pass.
    const label = `${"a".repeat(31)}1`;
    for (let i = 0; i < 100; i++) expect(anyPatternMatchesLabel(["(a+)+$"], label)).toBe(false);
    expect(anyPatternMatchesLabel(["(a+)+$"], "a".repeat(32))).toBe(true);
  });

  it("never runs a pattern on text that is not a label", () => {
    expect(anyPatternMatchesLabel([".*"], "a".repeat(33))).toBe(false);
    expect(anyPatternMatchesLabel([".*"], "Upper")).toBe(false);
    expect(anyPatternMatchesLabel([".*"], "a-b")).toBe(false);
    expect(anyPatternMatchesLabel([".*"], "")).toBe(false);
  });

  it("grants nothing through a stored pattern RE2 cannot compile", () => {
    expect(anyPatternMatchesLabel(["(a)\\1", "(?=ab)ab"], "aa")).toBe(false);
    expect(anyPatternMatchesLabel(["(a)\\1", "aa"], "aa")).toBe(true);
  });

  it("agrees with RegExp on the patterns both engines read", () => {
    const piece = fc.constantFrom("a", "b", "1", ".", ".*", "[a-c]", "[0-9]+", "(a|b)", "b?", "a+", "|", "(ab)*");
    fc.assert(
      fc.property(
        fc.array(piece, { minLength: 1, maxLength: 6 }),
        fc.stringMatching(/^[a-c0-9]{2,12}$/),
        (pieces, label) => {
          const pattern = pieces.join("");
          const expected = new RegExp(`^(?:${pattern})$`).test(label);
          expect(anyPatternMatchesLabel([pattern], label)).toBe(expected);
        },
      ),
      { numRuns: 1000 },
    );
  });
});
