// Patterns RE2 accepts but HAProxy 2.6's PCRE2 (8-bit, no UTF) refuses or reads otherwise, each refused with its
// reason, and the RE2 syntax both read alike let through (each checked with haproxy -c).
import { describe, expect, it } from "vitest";
import { pcreDifference } from "../../../src/proxy/haproxy-params/regex-dialect";
import { refusal } from "../../support/proxy-params";

const BYTES = "above \\x7f (HAProxy's PCRE reads bytes: it refuses \\x{100}, and \\x{e9} is one byte to it)";
const ANCHOR = "(HAProxy's PCRE repeats no anchor)";
const RANGE = 'a range from a class such as "[\\d-z]" (RE2 reads the "-" as itself, HAProxy\'s PCRE refuses it)';

describe("pcreDifference", () => {
  it.each([
    // haproxy -c: character code point value in \x{} or \o{} is too large
    ["\\x{100}", `"\\x{100}", ${BYTES}`],
    ["\\x{0100}", `"\\x{0100}", ${BYTES}`],
    // one byte to PCRE, the two bytes of U+00E9 to RE2
    ["\\x{e9}", `"\\x{e9}", ${BYTES}`],
    ["[\\x80-\\xff]", `"\\x80", ${BYTES}`],
    ["é+", `a character outside ASCII "é" (HAProxy's PCRE reads bytes)`],
    // POSIX named classes are supported only within a class
    ["[:alpha:]", `a POSIX class outside brackets "[:alpha:]" (HAProxy's PCRE takes [[:alpha:]] only)`],
    ["a[:b:]+", `a POSIX class outside brackets "[:b:]" (HAProxy's PCRE takes [[:b:]] only)`],
    // POSIX collating elements are not supported
    ["[.a.]", `a POSIX collating element "[.a.]" (HAProxy's PCRE has none)`],
    ["[x[=a=]]", `a POSIX collating element "[=a=]" (HAProxy's PCRE has none)`],
    // invalid range in character class
    ["[\\d-z]", RANGE],
    ["[[:digit:]-z]", RANGE],
    ["[,-[:alpha:]]", RANGE],
    // Latin-1 properties of single bytes to PCRE, Unicode characters to RE2
    ["\\pN", "a Unicode class \\p or \\P (HAProxy's PCRE applies it to single bytes)"],
    ["\\p{Greek}", "a Unicode class \\p or \\P (HAProxy's PCRE applies it to single bytes)"],
    ["\\v", "\\v (a vertical tab to RE2, any vertical space to HAProxy's PCRE)"],
    // a backreference to PCRE once the pattern has 12 groups, the octal of a line feed to RE2
    ["(a)\\12", `an octal escape "\\12" (HAProxy's PCRE may read it as a backreference: write \\xHH)`],
    // subpattern name must start with a non-digit; subpattern name is too long (maximum 32 code units)
    ["(?P<1a>x)", `a group name starting with a digit "1a" (HAProxy's PCRE refuses it)`],
    [`(?<${"n".repeat(33)}>x)`, "a group name longer than 32 characters"],
    // quantifier does not follow a repeatable item
    ["^*", `a quantifier after "^" ${ANCHOR}`],
    ["x$?", `a quantifier after "$" ${ANCHOR}`],
    ["\\b+", `a quantifier after "\\b" ${ANCHOR}`],
    ["\\z{2}", `a quantifier after "\\z" ${ANCHOR}`],
  ])("refuses %j: %s", (pattern, reason) => {
    expect(pcreDifference(pattern)).toBe(reason);
  });

  it.each([
    "\\x{7f}",
    "\\x41",
    "[[:alpha:]]+",
    "[^[:space:]]",
    "[-[:alpha:]]",
    "[[:alpha:]-]",
    "[\\w-]",
    "[:a]",
    "[^:alpha:]",
    "[]a]",
    "[^]a]",
    "[\\]]",
    "(?P<name_1>x)",
    "(?<n>x)",
    "(?U)a*",
    "(?i)^a$",
    "(?:^)*",
    "\\0",
    "a{,5}",
  ])("lets %j through", (pattern) => {
    expect(pcreDifference(pattern)).toBeUndefined();
  });
});

it("names the difference in the refusal of backend params", () => {
  expect(refusal("acl a path_reg '\\x{100}'\nhttp-request deny if a")).toEqual({
    line: 1,
    text: "acl a path_reg '\\x{100}'",
    reason: `acl a: a value: "\\\\x{100}" has "\\x{100}", ${BYTES}`,
  });
});
