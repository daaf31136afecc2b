// What a tenant's regular expression may cost HAProxy's PCRE: no repeated group holding an alternation or a
// repetition, at most two unbounded repetitions, no counted repetition above 100, and at most 8 patterns in one
// backend's params; and what it may cost the vetting: at most 500 characters and classes copied by one backend's
// counted repetitions, read before compiling.
import fc from "fast-check";
import { RE2JS } from "re2js";
import { afterEach, describe, expect, it, vi } from "vitest";
import { vetBackendParams } from "../../../src/proxy/haproxy-params/index";
import {
  backtrackingRisk,
  MAX_REGEXES_PER_BACKEND,
  MAX_REPEATED_PER_BACKEND,
} from "../../../src/proxy/haproxy-params/regex-cost";
import { repetitionCost } from "../../../src/proxy/haproxy-params/regex-expansion";
import { refusal } from "../../support/proxy-params";

afterEach(() => vi.restoreAllMocks());

const NESTED = "a repeated group that holds an alternation or a repetition (it backtracks in PCRE)";

describe("backtrackingRisk", () => {
  it.each(["^/(a|aa)+$", "(a+)*", "((ab)*)+", "(?:a|b)*", "(?i:x|y){2,3}", "(?P<n>a*)+", "((a)|b)?"])(
    "finds a repeated group of alternatives or repetitions in %j",
    (pattern) => {
      expect(backtrackingRisk(pattern)).toBe(NESTED);
    },
  );

  it.each(["\\Q[\\E(a|aa)+]", "\\Q(\\E", "a\\Q.*"])(
    "refuses \\Q quoting, which would hide a group in %j",
    (pattern) => {
      expect(backtrackingRisk(pattern)).toBe("\\Q...\\E quoting (escape each character instead)");
    },
  );

  it("reads an escape in braces as one character, not as a count", () => {
    expect(backtrackingRisk("(?:\\x{41})+")).toBeUndefined();
    expect(backtrackingRisk("(?:a{2})+")).toBe(NESTED);
  });

  it.each([
    "^/api/.*$",
    "(?:ab)+",
    "(?i)foo.*bar",
    "[(|)]+",
    "\\(a|b\\)+",
    "(?P<name>x)+",
    "a{2,5}",
    "^/(img|css|js)/",
    "[[:alpha:]]+",
    "[]a]*",
  ])("lets %j through", (pattern) => {
    expect(backtrackingRisk(pattern)).toBeUndefined();
  });
});

const UNBOUNDED = `more than 2 repetitions without an upper bound (*, + or {n,}: PCRE's time grows with the text's length to the power of their number)`;

describe("unbounded repetitions in one pattern", () => {
  it.each([".*.*.*.*.*.*.*.*=x", "a+b+c+", "a*b{2,}c+", "^/(x.*)/(y.*)/(z.*)$", "(?i)a.*?b.*?c.*?"])(
    "refuses more than two in %j",
    (pattern) => {
      expect(backtrackingRisk(pattern)).toBe(UNBOUNDED);
    },
  );

  it.each([
    "^/api/.*",
    "\\.(jpg|png)$",
    "^/(a|b)/[^/]+/x",
    "^/users/[0-9]+/posts/[0-9]+/?$",
    "a{2,5}b{3}c?d?e?",
    "[*+]*\\*\\+[a+]+",
  ])("lets %j through (bounded counts, escaped or bracketed * and + are not counted)", (pattern) => {
    expect(backtrackingRisk(pattern)).toBeUndefined();
  });

  it("refuses a pattern exactly when it holds more than two", () => {
    const atom = fc.constantFrom("a", ".", "[^/]", "\\*", "[+*]", "(?:ab)", "\\d");
    const quantifier = fc.constantFrom("", "?", "{3}", "{1,4}", "*", "+", "{2,}", "*?", "+?");
    const item = fc.tuple(atom, quantifier);
    fc.assert(
      fc.property(fc.array(item, { maxLength: 12 }), (items) => {
        const pattern = items.map(([a, q]) => a + q).join("");
        const unbounded = items.filter(([, q]) => q.startsWith("*") || q.startsWith("+") || q === "{2,}").length;
        expect(backtrackingRisk(pattern)).toBe(unbounded > 2 ? UNBOUNDED : undefined);
      }),
    );
  });

  it("refuses the ACL on a header and the replace-value that made HAProxy's watchdog kill it", () => {
    expect(refusal("acl slow hdr(x) -m reg .*.*.*.*.*.*.*.*=x\nhttp-request deny if slow")).toEqual({
      line: 1,
      text: "acl slow hdr(x) -m reg .*.*.*.*.*.*.*.*=x",
      reason: `acl slow: a value: ".*.*.*.*.*.*.*.*=x" has ${UNBOUNDED}`,
    });
    expect(refusal("http-request replace-value X .*.*.*.*.*.*.*.*=x y")).toEqual({
      line: 1,
      text: "http-request replace-value X .*.*.*.*.*.*.*.*=x y",
      reason: `http-request replace-value: the match: ".*.*.*.*.*.*.*.*=x" has ${UNBOUNDED}`,
    });
  });
});

describe("a backend's params", () => {
  const acl = (n: number) => `acl a${n} path -m reg ^/p${n}/`;

  it(`hold up to ${MAX_REGEXES_PER_BACKEND} regular expressions, and refuse one more`, () => {
    const lines = Array.from({ length: MAX_REGEXES_PER_BACKEND + 1 }, (_, n) => acl(n));
    expect(vetBackendParams(lines.slice(0, -1).join("\n")).ok).toBe(true);
    expect(refusal(lines.join("\n"))).toEqual({
      line: MAX_REGEXES_PER_BACKEND + 1,
      text: acl(MAX_REGEXES_PER_BACKEND),
      reason: `acl a${MAX_REGEXES_PER_BACKEND}: a value: more than ${MAX_REGEXES_PER_BACKEND} regular expressions in one backend (each may cost HAProxy about 50 ms a request)`,
    });
  });

  it("refuse the pattern that stalled HAProxy until its watchdog killed it, and count per backend", () => {
    const line = "http-request deny if { path -m reg ^/(a|aa)+$ }";
    expect(refusal(line)).toEqual({
      line: 1,
      text: line,
      reason: `http-request deny: anonymous ACL: a value: "^/(a|aa)+$" has ${NESTED}`,
    });
    // RE2 and PCRE read a literal "[" and the group (a|aa)+: the quoting must not hide it.
    expect(refusal("acl a path_reg \\Q[\\E(a|aa)+]")?.reason).toBe(
      'acl a: a value: "\\\\Q[\\\\E(a|aa)+]" has \\Q...\\E quoting (escape each character instead)',
    );
    // Each vetting has its own count: a second backend may hold its own eight.
    const eight = Array.from({ length: MAX_REGEXES_PER_BACKEND }, (_, n) => acl(n)).join("\n");
    expect(vetBackendParams(eight).ok).toBe(true);
    expect(vetBackendParams(eight).ok).toBe(true);
  });
});

describe("repetitionCost", () => {
  it.each([
    ["^/api/.*$", 0],
    ["^[0-9a-f]{64}$", 63],
    ["^.{1,100}$", 99],
    ["(?:ab){10}", 18],
    ["(?:a{10}b){10}", 9 + 99],
    ["\\x{41}{3}", 2],
    ["[a{}]{2}", 1],
    ["a{,5}", 0],
  ])("counts what %j copies: %i", (pattern, repeated) => {
    expect(repetitionCost(pattern)).toEqual({ repeated });
  });

  it.each(["x{1000}", "a{2,101}", "(ab){500}", "a{0000000000000000000000000000101}"])(
    "refuses a count above 100 in %j",
    (pattern) => {
      expect(repetitionCost(pattern)).toEqual({ refused: "a counted repetition above 100" });
    },
  );
});

describe("what compiling a backend's patterns costs the vetting", () => {
  it("refuses a count above 100 before compiling (a{1000} over a line took re2js 600 ms)", () => {
    const compile = vi.spyOn(RE2JS, "compile");
    const pattern = "a{1000}".repeat(283);
    expect(refusal(`acl a path_reg ${pattern}`)?.reason).toBe(
      `acl a: a value: "${pattern}" has a counted repetition above 100`,
    );
    expect(compile).not.toHaveBeenCalled();
  });

  it(`refuses copies past ${MAX_REPEATED_PER_BACKEND} in one backend before compiling (a{100} over a line took 60 ms)`, () => {
    const copies = (n: number) => ".{100}".repeat(n);
    expect(vetBackendParams(`acl a path_reg ${copies(3)}\nacl b path_reg ${copies(2)}`).ok).toBe(true);
    const compile = vi.spyOn(RE2JS, "compile");
    expect(refusal(`acl a path_reg ${copies(3)}\nacl b path_reg ${copies(3)}`)).toEqual({
      line: 2,
      text: `acl b path_reg ${copies(3)}`,
      reason: `acl b: a value: "${copies(3)}" takes the counted repetitions of one backend's patterns past ${MAX_REPEATED_PER_BACKEND} copied characters and classes`,
    });
    expect(compile).toHaveBeenCalledTimes(1);
    // Each backend has its own budget.
    expect(vetBackendParams(`acl b path_reg ${copies(3)}`).ok).toBe(true);
    expect(refusal(`acl a path_reg ${"a{100}".repeat(6)}`)?.reason).toMatch(/past 500 copied characters/);
  });
});
