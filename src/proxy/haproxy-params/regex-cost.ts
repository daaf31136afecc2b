// What a tenant's regular expression may cost HAProxy's PCRE2 (JIT), which backtracks (RE2 accepting a pattern says
// nothing of that). A run's time grows with the text's length to the power of the pattern's overlapping unbounded
// repetitions; PCRE's match limit does not bound it (the JIT counts few of its steps). And a regex runs once a request
// per use and per value: an ACL on hdr()/cook() runs once per comma-separated value, replace-value once per value.
// So a pattern holds at most MAX_UNBOUNDED repetitions without an upper bound, a repeated group holding an
// alternation or a repetition (`(a|aa)+`, `(a+)*`) is refused, and a backend holds at most MAX_REGEXES_PER_BACKEND
// patterns; what compiling them costs the vetting is bounded by MAX_REPEATED_PER_BACKEND (regex-expansion.ts).
import { classEnd, escapeEnd, groupPrefixEnd, isQuantifierStart, repetitionCost } from "./regex-expansion";

/** Most regular expressions one backend's params (or one server line) may hold. */
export const MAX_REGEXES_PER_BACKEND = 8;

/**
 * Most characters and classes the counted repetitions of one backend's patterns may copy (`[0-9a-f]{64}` copies 63):
 * compiling them costs re2js about 2 µs each, so a backend's copies cost its vetting at most about 1 ms, and the
 * 4000 backends an installation may hold 4 s of one generation.
 */
export const MAX_REPEATED_PER_BACKEND = 500;

/**
 * Most repetitions without an upper bound (`*`, `+`, `{n,}`) in one pattern: `.*.*.*.*.*.*.*.*=x` on a header of 320
 * values made HAProxy's watchdog kill it, each value costing PCRE about 7 ms.
 */
export const MAX_UNBOUNDED = 2;

const UNBOUNDED_COUNT = /\{\d+,\}/y;

let budget: { left: number; repeated: number } | undefined;

/** Runs one backend's vetting with its own count of regular expressions (vetting is synchronous). */
export function withRegexBudget<T>(vet: () => T): T {
  const outer = budget;
  budget = { left: MAX_REGEXES_PER_BACKEND, repeated: MAX_REPEATED_PER_BACKEND };
  try {
    return vet();
  } finally {
    budget = outer;
  }
}

/**
 * Counts one regular expression against the backend's budget, before anything compiles it; the reason to refuse it,
 * if any (said of the pattern).
 */
export function spendRegex(pattern: string): string | undefined {
  const cost = repetitionCost(pattern);
  if ("refused" in cost) return `${JSON.stringify(pattern)} has ${cost.refused}`;
  if (!budget) return undefined;
  budget.left--;
  budget.repeated -= cost.repeated;
  if (budget.left < 0)
    return `more than ${MAX_REGEXES_PER_BACKEND} regular expressions in one backend (each may cost HAProxy about 50 ms a request)`;
  if (budget.repeated < 0)
    return `${JSON.stringify(pattern)} takes the counted repetitions of one backend's patterns past ${MAX_REPEATED_PER_BACKEND} copied characters and classes`;
  return undefined;
}

/** Why a pattern could backtrack without bound in PCRE, or undefined. Expects a pattern RE2 compiled. */
export function backtrackingRisk(pattern: string): string | undefined {
  // One frame per open group: whether it holds an alternation or a repetition so far.
  const groups: { risky: boolean }[] = [];
  let closedRisky = false;
  let unbounded = 0;
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i];
    if (ch === "\\") {
      // Quoted text is literal to RE2 and PCRE but not to this reading: `\Q[\E(a|aa)+]` would hide its group.
      if (pattern[i + 1] === "Q") return "\\Q...\\E quoting (escape each character instead)";
      i = escapeEnd(pattern, i);
      closedRisky = false;
      continue;
    }
    if (ch === "[") {
      i = classEnd(pattern, i);
      closedRisky = false;
      continue;
    }
    if (ch === "(") {
      const prefixEnd = groupPrefixEnd(pattern, i);
      // `(?i)` sets flags and opens no group.
      if (pattern[prefixEnd] !== ")") groups.push({ risky: false });
      i = prefixEnd - (pattern[prefixEnd] === ")" ? 0 : 1);
      closedRisky = false;
      continue;
    }
    if (ch === ")") {
      closedRisky = groups.pop()?.risky ?? false;
      if (closedRisky && groups.length > 0) groups[groups.length - 1].risky = true;
      continue;
    }
    if (ch === "|" && groups.length > 0) groups[groups.length - 1].risky = true;
    UNBOUNDED_COUNT.lastIndex = i;
    if ((ch === "*" || ch === "+" || UNBOUNDED_COUNT.test(pattern)) && ++unbounded > MAX_UNBOUNDED)
      return `more than ${MAX_UNBOUNDED} repetitions without an upper bound (*, + or {n,}: PCRE's time grows with the text's length to the power of their number)`;
    if (isQuantifierStart(pattern, i)) {
      if (closedRisky) return "a repeated group that holds an alternation or a repetition (it backtracks in PCRE)";
      if (groups.length > 0) groups[groups.length - 1].risky = true;
    }
    closedRisky = false;
  }
  return undefined;
}
