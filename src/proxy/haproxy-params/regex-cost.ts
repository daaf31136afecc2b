// What a tenant's regular expression may cost HAProxy's PCRE2, which backtracks and whose match limit does not bound a
// JIT run's time. A regex runs once per use and per value (an ACL on hdr() once per comma-separated value): a run
// costs at most MAX_WORK character tests on the longest text (regex-work.ts), at least linear in the text, so short
// values cost no more than one long one; no repeated group holds an alternation or a repetition (`(a|aa)+`); a backend
// holds MAX_REGEXES_PER_BACKEND patterns, whose compiling costs the vetting MAX_REPEATED_PER_BACKEND (regex-expansion).
import { classEnd, escapeEnd, groupPrefixEnd, isQuantifierStart, repetitionCost } from "./regex-expansion";
import { LONGEST_TEXT, MAX_WORK, workOf } from "./regex-work";

/**
 * Most regular expression runs one request may cause through one backend's params (or one server line): each pattern,
 * and its ACL's patterns again for each further use of the ACL.
 */
export const MAX_REGEXES_PER_BACKEND = 8;

/**
 * Most characters and classes the counted repetitions of one backend's patterns may copy (`[0-9a-f]{64}` copies 63):
 * compiling them costs re2js about 2 µs each, so a backend's copies cost its vetting at most about 1 ms, and the
 * 4000 backends an installation may hold 4 s of one generation.
 */
export const MAX_REPEATED_PER_BACKEND = 500;

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

/** The regular expression runs the backend's vetting has counted so far. */
export const regexRunsSpent = () => (budget ? MAX_REGEXES_PER_BACKEND - budget.left : 0);

/**
 * Counts `runs` more runs of regular expressions a request may cause (an ACL used once more runs its patterns once
 * more); the reason to refuse them, if any.
 */
export function spendRegexRuns(runs: number): string | undefined {
  if (!budget) return undefined;
  budget.left -= runs;
  if (budget.left < 0)
    return `more than ${MAX_REGEXES_PER_BACKEND} regular expression runs a request in one backend (each pattern, once more for each further use of its ACL; each run may cost HAProxy about 10 ms)`;
  return undefined;
}

/**
 * Counts one regular expression against the backend's budget, before anything compiles it; the reason to refuse it,
 * if any (said of the pattern).
 */
export function spendRegex(pattern: string): string | undefined {
  const cost = repetitionCost(pattern);
  if ("refused" in cost) return `${JSON.stringify(pattern)} has ${cost.refused}`;
  if (!budget) return undefined;
  budget.repeated -= cost.repeated;
  const overRuns = spendRegexRuns(1);
  if (overRuns) return overRuns;
  if (budget.repeated < 0)
    return `${JSON.stringify(pattern)} takes the counted repetitions of one backend's patterns past ${MAX_REPEATED_PER_BACKEND} copied characters and classes`;
  return undefined;
}

/** A pattern that starts with `^`, after any flags: advice to anchor it would not help. */
const ANCHORED = /^(?:\(\?[a-zA-Z-]*\))*\^/;

/**
 * Why a pattern could backtrack without bound in PCRE, or undefined; `everyStart` for regsub (see workOf). Expects a
 * pattern RE2 compiled.
 */
export function backtrackingRisk(pattern: string, everyStart = false): string | undefined {
  // One frame per open group: whether it holds an alternation or a repetition so far.
  const groups: { risky: boolean }[] = [];
  let closedRisky = false;
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
    if (isQuantifierStart(pattern, i)) {
      if (closedRisky) return "a repeated group that holds an alternation or a repetition (it backtracks in PCRE)";
      if (groups.length > 0) groups[groups.length - 1].risky = true;
    }
    closedRisky = false;
  }
  if (workOf(pattern, everyStart) > MAX_WORK) {
    const advice = everyStart
      ? "regsub runs it again from each match's end, where ^ matches too: keep each repetition from matching what follows it"
      : ANCHORED.test(pattern)
        ? "keep each repetition from matching what follows it, or match a substring with -m sub"
        : "anchor it with ^, or keep each repetition from matching what follows it";
    return `a cost to HAProxy's PCRE above ${MAX_WORK} character tests on a ${LONGEST_TEXT}-byte text (${advice})`;
  }
  return undefined;
}
