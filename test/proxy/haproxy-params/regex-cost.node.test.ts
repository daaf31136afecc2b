// What a tenant's regular expression may cost HAProxy's PCRE: no repeated group holding an alternation or a
// repetition, no counted repetition above 100, and at most 8 patterns in one backend's params.
import { describe, expect, it } from "vitest";
import { vetBackendParams } from "../../../src/proxy/haproxy-params/index";
import { backtrackingRisk, MAX_REGEXES_PER_BACKEND } from "../../../src/proxy/haproxy-params/regex-cost";
import { refusal } from "../../support/proxy-params";

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

  it.each(["x{1000}", "a{2,101}", "(ab){500}"])("finds a count above 100 in %j", (pattern) => {
    expect(backtrackingRisk(pattern)).toBe("a counted repetition above 100");
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
