// What a tenant's regular expression may cost HAProxy's PCRE: no repeated group holding an alternation or a
// repetition, at most 10 M character tests a run on the longest text, no counted repetition above 100, and at most 8
// patterns in one backend's params; and what it may cost the vetting: at most 500 characters and classes copied by
// one backend's counted repetitions, read before compiling.
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
import { LONGEST_TEXT, MAX_WORK, workOf } from "../../../src/proxy/haproxy-params/regex-work";
import { refusal } from "../../support/proxy-params";

afterEach(() => vi.restoreAllMocks());

const isRe2 = (pattern: string) => {
  try {
    RE2JS.compile(pattern);
    return true;
  } catch {
    return false;
  }
};

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
    "(?i)^foo.*bar",
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

const COSTLY = `a cost to HAProxy's PCRE above 10000000 character tests on a 16384-byte text (anchor it with ^, or keep each repetition from matching what follows it)`;
const COSTLY_ANCHORED = `a cost to HAProxy's PCRE above 10000000 character tests on a 16384-byte text (keep each repetition from matching what follows it, or match a substring with -m sub)`;

describe("what one run may cost PCRE", () => {
  // Each was measured with libpcre2 10.42's JIT on a 15 KB text; the match limit stopped none of them in time.
  it.each([
    [".*.*.*.*.*.*.*.*=x", "a header of 320 values made HAProxy's watchdog kill it"],
    ["[a-z]{2,}[a-z]{100}=x", "4.8 s"],
    ["[ab]*a*b*.{0,100}b\\w*=(?i)A*a^", "3.7 s"],
    ["..{0,100}.[a-z]{100}[a-z]{100}[ab]a^", "0.24 s"],
    ["^\\S{1,4}[ab]*?[ab]*?=x", "0.13 s"],
    ["a?a?a?a?a?a?a?a?a?a?a?a?a?a?a?aaaaaaaaaaaaaaa", "exponential"],
    ["(a|aa)(a|aa)(a|aa)(a|aa)(a|aa)(a|aa)(a|aa)(a|aa)(a|aa)(a|aa)x", "exponential"],
    ["[ab]{2,}=x", "37 ms"],
    ["Mozilla.*Firefox", "quadratic"],
    [
      `^${"(a|ab|abc|b)".repeat(10)}`,
      "bound to millions of tests a run whatever the text, so on each of thousands of short values",
    ],
    ["[ab]{1,4}.{100}=x", "5 ms on one 15 KB text, and as much again on 16384 empty values"],
    ["^.*foo.*bar", "quadratic, anchored: the first repetition gives back what the second tries"],
    ["(?i)^.*foo.*bar", "the same, after flags"],
  ])("refuses %j (%s)", (pattern) => {
    expect(backtrackingRisk(pattern)).toBe(/^(\(\?i\))?\^/.test(pattern) ? COSTLY_ANCHORED : COSTLY);
  });

  it.each([
    "^/api/.*",
    "\\.(jpg|png)$",
    "^/(a|b)/[^/]+/x",
    "^/users/[0-9]+/posts/[0-9]+/?$",
    "(?i)bot|crawler|spider",
    "^/[^/]+/[^/]+/[^/]+/[^/]+$",
    "^[a-z]+=[0-9]+",
    "[0-9]+",
    "^.*Mozilla",
    "^a{100}",
  ])("lets %j through", (pattern) => {
    expect(backtrackingRisk(pattern)).toBeUndefined();
    expect(workOf(pattern)).toBeLessThanOrEqual(MAX_WORK);
  });

  it("reads a repetition followed by a character it cannot match as possessive, and (?i) as matching both cases", () => {
    expect(workOf("^[A-Z]+[a-z]+=")).toBeLessThanOrEqual(MAX_WORK);
    expect(workOf("^(?i)[A-Z]+[a-z]+=")).toBeGreaterThan(MAX_WORK);
    expect(workOf("^[^/]+/[^/]+=")).toBeLessThanOrEqual(MAX_WORK);
    expect(workOf("^[^/]+/?[^/]+=")).toBeGreaterThan(MAX_WORK);
  });

  it("bounds any pattern RE2 compiles, and costs no more anchored than after one more character", () => {
    const piece = fc.constantFrom("a", ".", "[^/]", "\\*", "[+*]", "(?:ab)", "\\d", "(a|b)", "(?i)", "$", "\\b");
    const quantifier = fc.constantFrom("", "?", "{3}", "{1,4}", "*", "+", "{2,}", "*?", "{0,100}");
    fc.assert(
      fc.property(fc.array(fc.tuple(piece, quantifier), { maxLength: 10 }), (items) => {
        const pattern = items.map(([p, q]) => (p === "(?i)" || p === "$" || p === "\\b" ? p : p + q)).join("");
        fc.pre(isRe2(pattern));
        const work = workOf(pattern);
        expect(work).toBeGreaterThanOrEqual(LONGEST_TEXT);
        expect(workOf(`^${pattern}`)).toBeLessThanOrEqual(workOf(`x${pattern}`));
      }),
    );
  });

  it("refuses the ACL on a header and the replace-value that made HAProxy's watchdog kill it", () => {
    expect(refusal("acl slow hdr(x) -m reg .*.*.*.*.*.*.*.*=x\nhttp-request deny if slow")).toEqual({
      line: 1,
      text: "acl slow hdr(x) -m reg .*.*.*.*.*.*.*.*=x",
      reason: `acl slow: a value: ".*.*.*.*.*.*.*.*=x" has ${COSTLY}`,
    });
    expect(refusal("http-request replace-value X .*.*.*.*.*.*.*.*=x y")).toEqual({
      line: 1,
      text: "http-request replace-value X .*.*.*.*.*.*.*.*=x y",
      reason: `http-request replace-value: the match: ".*.*.*.*.*.*.*.*=x" has ${COSTLY}`,
    });
  });
});

const RUNS = `more than 8 regular expression runs a request in one backend (each pattern, once more for each further use of its ACL; each run may cost HAProxy about 10 ms)`;

describe("a backend's params", () => {
  const acl = (n: number) => `acl a${n} path -m reg ^/p${n}/`;

  it(`hold up to ${MAX_REGEXES_PER_BACKEND} regular expressions, and refuse one more`, () => {
    const lines = Array.from({ length: MAX_REGEXES_PER_BACKEND + 1 }, (_, n) => acl(n));
    expect(vetBackendParams(lines.slice(0, -1).join("\n")).ok).toBe(true);
    expect(refusal(lines.join("\n"))).toEqual({
      line: MAX_REGEXES_PER_BACKEND + 1,
      text: acl(MAX_REGEXES_PER_BACKEND),
      reason: `acl a${MAX_REGEXES_PER_BACKEND}: a value: ${RUNS}`,
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

describe("regsub's pattern", () => {
  const regsub = (pattern: string, flags: string) => `acl a 'path,regsub("${pattern}",x${flags})' -m found`;
  const AGAIN = `a cost to HAProxy's PCRE above 10000000 character tests on a 16384-byte text (regsub runs it again from each match's end, where ^ matches too: keep each repetition from matching what follows it)`;

  it("with the g flag, costs each start: ^ anchors nothing (an anchored pattern matching one byte a run ran 3.6 s)", () => {
    const pattern = "^(?:[ab]*[ab]{100}=|a)";
    expect(vetBackendParams(regsub(pattern, "")).ok).toBe(true);
    expect(refusal(regsub(pattern, ",g"))).toEqual({
      line: 1,
      text: regsub(pattern, ",g"),
      reason: `acl a: argument 1 of "regsub": ${JSON.stringify(pattern)} has ${AGAIN}`,
    });
  });

  it("ending in a group that ends the pattern reads that group's end once a run", () => {
    expect(vetBackendParams(regsub("^/old/(.*)", ",g")).ok).toBe(true);
    expect(vetBackendParams(regsub("/api/(x|y.*)", ",g")).ok).toBe(true);
    expect(workOf("/api/(.*)", true)).toBeLessThanOrEqual(MAX_WORK);
    expect(workOf("/api/(.*)x", true)).toBeGreaterThan(MAX_WORK);
  });
});

describe("the runs a request may cause", () => {
  const uses = (n: number) => Array.from({ length: n }, (_, k) => `http-request set-header X-${k} 1 if slow`);

  it("count an ACL's patterns once more for each further use of the ACL", () => {
    const params = ["acl slow hdr(x) -m reg ^a ^b", ...uses(4)];
    expect(vetBackendParams(params.join("\n")).ok).toBe(true);
    expect(refusal([...params, "http-request deny if slow"].join("\n"))).toEqual({
      line: 6,
      text: "http-request deny if slow",
      reason: `http-request deny: ACL slow: ${RUNS}`,
    });
    // Uses in one condition count each.
    expect(refusal(`acl slow path -m reg ^a\nhttp-request deny if ${"slow ".repeat(9).trim()}`)?.reason).toBe(
      `http-request deny: ACL slow: ${RUNS}`,
    );
  });

  it("count a pattern added after the ACL's uses for each of them, and no ACL without one", () => {
    // Five uses of two patterns: ten runs.
    const params = ["acl slow path -m reg ^a", ...uses(5), "acl slow path -m reg ^b"];
    expect(refusal(params.join("\n"))).toEqual({ line: 7, text: params[6], reason: `acl slow: ${RUNS}` });
    expect(
      vetBackendParams(["acl fast path_beg /a", ...Array(50).fill("http-request deny if fast")].join("\n")).ok,
    ).toBe(true);
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
