// Where HAProxy 2.6's PCRE2 refuses, or reads differently, a pattern RE2 accepts: HAProxy compiles tenants' regexes
// with PCRE2 in 8-bit mode without UTF (`\x{100}` is "too large"), so a pattern is read as bytes, and PCRE2 has its own
// rules for POSIX classes, quantified anchors, group names and digit escapes. Each was checked with haproxy -c.

import { classEnd, escapeEnd, isQuantifierStart } from "./regex-expansion";

/** Longest group name PCRE2 takes (MAX_NAME_SIZE). */
const MAX_GROUP_NAME = 32;

/** A `-` at `i` inside brackets that is not their last member: after a class, RE2 reads it as itself. */
const isRangeFrom = (pattern: string, i: number) => pattern[i] === "-" && pattern[i + 1] !== "]";
const rangeFromClass =
  'a range from a class such as "[\\d-z]" (RE2 reads the "-" as itself, HAProxy\'s PCRE refuses it)';

/**
 * PCRE2's check_posix_syntax(): whether the `[` at `open`, followed by `:`, `.` or `=`, starts a POSIX construct
 * (`[:alpha:]`, `[.a.]`, `[=a=]`) that ends before any `]`.
 */
function isPosixConstruct(pattern: string, open: number): boolean {
  const terminator = pattern[open + 1];
  if (terminator !== ":" && terminator !== "." && terminator !== "=") return false;
  for (let i = open + 2; pattern.length - i >= 2; i++) {
    if (pattern[i] === "\\" && (pattern[i + 1] === "]" || pattern[i + 1] === "\\")) i++;
    else if ((pattern[i] === "[" && pattern[i + 1] === terminator) || pattern[i] === "]") return false;
    else if (pattern[i] === terminator && pattern[i + 1] === "]") return true;
  }
  return false;
}

/** Why the escape at `i` (a backslash) is refused, or undefined; `inClass` inside brackets. */
function escapeDifference(pattern: string, i: number, inClass: boolean): string | undefined {
  const next = pattern[i + 1];
  if (/[1-9]/.test(next)) {
    const escape = /^\\\d{1,3}/.exec(pattern.slice(i))![0];
    return `an octal escape "${escape}" (HAProxy's PCRE may read it as a backreference: write \\xHH)`;
  }
  if (next === "p" || next === "P") return "a Unicode class \\p or \\P (HAProxy's PCRE applies it to single bytes)";
  if (next === "v") return "\\v (a vertical tab to RE2, any vertical space to HAProxy's PCRE)";
  if (next === "x") {
    const hex = /^\{([0-9A-Fa-f]+)\}|^([0-9A-Fa-f]{2})/.exec(pattern.slice(i + 2, i + 40));
    if (hex && parseInt(hex[1] ?? hex[2], 16) > 0x7f)
      return `"\\x${hex[0]}", above \\x7f (HAProxy's PCRE reads bytes: it refuses \\x{100}, and \\x{e9} is one byte to it)`;
  }
  if (!inClass && "bBAz".includes(next) && isQuantifierStart(pattern, i + 2))
    return `a quantifier after "\\${next}" (HAProxy's PCRE repeats no anchor)`;
  if (inClass && "dDwWsS".includes(next) && isRangeFrom(pattern, i + 2)) return rangeFromClass;
  return undefined;
}

/** Why a named group's name at `start` is refused by PCRE2, or undefined. */
function groupNameDifference(pattern: string, start: number): string | undefined {
  const name = /^\w*/.exec(pattern.slice(start))![0];
  if (/^\d/.test(name)) return `a group name starting with a digit "${name}" (HAProxy's PCRE refuses it)`;
  if (name.length > MAX_GROUP_NAME) return `a group name longer than ${MAX_GROUP_NAME} characters`;
  return undefined;
}

/** Why the POSIX construct at `open` is refused (`firstMember`: where the enclosing brackets' members start, or -1). */
function posixDifference(pattern: string, open: number, firstMember: number): string | undefined {
  const construct = pattern.slice(open, pattern.indexOf("]", open) + 1);
  if (pattern[open + 1] !== ":") return `a POSIX collating element "${construct}" (HAProxy's PCRE has none)`;
  if (firstMember < 0)
    return `a POSIX class outside brackets "${construct}" (HAProxy's PCRE takes [${construct}] only)`;
  const end = pattern.indexOf(":]", open + 2) + 1;
  if ((pattern[open - 1] === "-" && open - 1 !== firstMember) || isRangeFrom(pattern, end + 1)) return rangeFromClass;
  return undefined;
}

/** Why a member of the brackets from `open` to `end` (their `]`) is refused, or undefined. */
function classDifference(pattern: string, open: number, end: number): string | undefined {
  const firstMember = open + (pattern[open + 1] === "^" ? 2 : 1);
  for (let i = firstMember; i < end; i++) {
    let problem: string | undefined;
    if (pattern[i] === "\\") {
      problem = escapeDifference(pattern, i, true);
      i = escapeEnd(pattern, i);
    } else if (pattern[i] === "[" && isPosixConstruct(pattern, i)) {
      problem = posixDifference(pattern, i, firstMember);
      i = pattern.indexOf("]", i);
    }
    if (problem) return problem;
  }
  return undefined;
}

/**
 * Why HAProxy's PCRE2 would refuse this pattern, or read it otherwise than RE2 did; undefined when they agree. Expects
 * a pattern RE2 compiled, which settles its brackets and groups.
 */
export function pcreDifference(pattern: string): string | undefined {
  const nonAscii = /[^\x20-\x7e]/.exec(pattern);
  if (nonAscii) return `a character outside ASCII ${JSON.stringify(nonAscii[0])} (HAProxy's PCRE reads bytes)`;
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i];
    let problem: string | undefined;
    if (ch === "\\") {
      problem = escapeDifference(pattern, i, false);
      i = escapeEnd(pattern, i);
    } else if (ch === "[" && isPosixConstruct(pattern, i)) {
      problem = posixDifference(pattern, i, -1);
      i = pattern.indexOf("]", i);
    } else if (ch === "[") {
      const end = classEnd(pattern, i);
      problem = classDifference(pattern, i, end);
      i = end;
    } else if (ch === "(" && /^\(\?P?</.test(pattern.slice(i, i + 4))) {
      problem = groupNameDifference(pattern, pattern.indexOf("<", i) + 1);
    } else if ((ch === "^" || ch === "$") && isQuantifierStart(pattern, i + 1)) {
      problem = `a quantifier after "${ch}" (HAProxy's PCRE repeats no anchor)`;
    }
    if (problem) return problem;
  }
  return undefined;
}
