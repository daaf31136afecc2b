// What a tenant's regular expression may cost HAProxy's PCRE, which backtracks (RE2 accepting a pattern says nothing
// of that): a match stops at PCRE's limit after about 50 ms, and the watchdog kills HAProxy, every tenant's traffic,
// when a request holds a thread for 2 s. So a backend holds at most MAX_REGEXES_PER_BACKEND patterns (about 0.4 s a
// request at worst), and a repeated group holding an alternation or a repetition (`(a|aa)+`, `(a+)*`) is refused.

/** Most regular expressions one backend's params (or one server line) may hold. */
export const MAX_REGEXES_PER_BACKEND = 8;

/** Largest count of a counted repetition `{n}`, `{n,m}`: PCRE expands them, and a product of counts multiplies. */
const MAX_COUNT = 100;

let budget: { left: number } | undefined;

/** Runs one backend's vetting with its own count of regular expressions (vetting is synchronous). */
export function withRegexBudget<T>(vet: () => T): T {
  const outer = budget;
  budget = { left: MAX_REGEXES_PER_BACKEND };
  try {
    return vet();
  } finally {
    budget = outer;
  }
}

/** Counts one regular expression against the backend's budget; the reason to refuse it, if any. */
export function spendRegex(): string | undefined {
  if (!budget) return undefined;
  budget.left--;
  return budget.left < 0
    ? `more than ${MAX_REGEXES_PER_BACKEND} regular expressions in one backend (each may cost HAProxy about 50 ms a request)`
    : undefined;
}

const isQuantifierStart = (pattern: string, i: number) =>
  pattern[i] === "*" ||
  pattern[i] === "+" ||
  pattern[i] === "?" ||
  (pattern[i] === "{" && /^\{\d/.test(pattern.slice(i)));

/** Why a pattern could backtrack without bound in PCRE, or undefined. Expects a pattern RE2 compiled. */
export function backtrackingRisk(pattern: string): string | undefined {
  // One frame per open group: whether it holds an alternation or a repetition so far.
  const groups: { risky: boolean }[] = [];
  let closedRisky = false;
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i];
    if (ch === "\\") {
      // Quoted text is literal to RE2 and PCRE but not to this reading: `\Q[\E(a|aa)+]` would hide its group.
      if (pattern[i + 1] === "Q") return "\\Q...\\E quoting (escape each character instead)";
      i++;
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
      const counted = ch === "{" ? /^\{(\d+)(?:,(\d*))?\}/.exec(pattern.slice(i)) : null;
      if (counted && Math.max(Number(counted[1]), Number(counted[2] || 0)) > MAX_COUNT)
        return `a counted repetition above ${MAX_COUNT}`;
      if (closedRisky) return "a repeated group that holds an alternation or a repetition (it backtracks in PCRE)";
      if (groups.length > 0) groups[groups.length - 1].risky = true;
    }
    closedRisky = false;
  }
  return undefined;
}

/** Where a group's body starts (past `(`, `(?:`, `(?i:`, `(?P<name>`, `(?<name>`), or the `)` of a bare `(?i)`. */
function groupPrefixEnd(pattern: string, open: number): number {
  if (pattern[open + 1] !== "?") return open + 1;
  let j = open + 2;
  if (pattern[j] === "P") j++;
  if (pattern[j] === "<") return pattern.indexOf(">", j) + 1 || pattern.length;
  while (j < pattern.length && /[A-Za-z-]/.test(pattern[j])) j++;
  return pattern[j] === ":" ? j + 1 : j;
}

/** The index of the `]` closing the character class opened at `start`. */
function classEnd(pattern: string, start: number): number {
  let i = start + 1;
  if (pattern[i] === "^") i++;
  if (pattern[i] === "]") i++;
  for (; i < pattern.length; i++) {
    if (pattern[i] === "\\") i++;
    else if (pattern[i] === "[" && pattern[i + 1] === ":") i = pattern.indexOf(":]", i + 2) + 1 || i;
    else if (pattern[i] === "]") return i;
  }
  return pattern.length;
}
