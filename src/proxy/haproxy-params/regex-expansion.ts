// What a pattern's counted repetitions copy, read before RE2 compiles it: RE2 (and PCRE) compile `x{n}` as n copies
// of x, and re2js takes about 1.5 µs a copied character, so `a{100}` repeated over a 2000-character line cost the
// vetting 60 ms a pattern and 26 µs a params byte (and 600 ms for a{1000}..., refused only after compiling).

/** Largest count of a counted repetition `{n}`, `{n,m}`: PCRE expands them, and a product of counts multiplies. */
export const MAX_COUNT = 100;

const COUNTED = /\{(\d+)(?:,(\d*))?\}/y;

/** The counted repetition `{n}`, `{n,}` or `{n,m}` at `i` (its counts and where it ends), or null. */
export function countedAt(pattern: string, i: number): { count: number; end: number } | null {
  if (pattern[i] !== "{") return null;
  COUNTED.lastIndex = i;
  const match = COUNTED.exec(pattern);
  return match && { count: Math.max(Number(match[1]), Number(match[2] || 0)), end: COUNTED.lastIndex };
}

/** Whether a quantifier (`*`, `+`, `?` or a counted repetition) starts at `i`. */
export const isQuantifierStart = (pattern: string, i: number) =>
  pattern[i] === "*" || pattern[i] === "+" || pattern[i] === "?" || countedAt(pattern, i) !== null;

/** The index of the last character of the escape at `i` (a backslash): `\x{...}` and `\p{...}` run to their `}`. */
export function escapeEnd(pattern: string, i: number): number {
  const letter = pattern[i + 1];
  if ((letter === "x" || letter === "p" || letter === "P") && pattern[i + 2] === "{") {
    const close = pattern.indexOf("}", i + 3);
    return close < 0 ? pattern.length - 1 : close;
  }
  return i + 1;
}

/** The index of the `]` closing the character class opened at `start` (the last index when none does). */
export function classEnd(pattern: string, start: number): number {
  let i = start + 1;
  if (pattern[i] === "^") i++;
  if (pattern[i] === "]") i++;
  for (; i < pattern.length; i++) {
    if (pattern[i] === "\\") i = escapeEnd(pattern, i);
    else if (pattern[i] === "[" && pattern[i + 1] === ":") i = pattern.indexOf(":]", i + 2) + 1 || i;
    else if (pattern[i] === "]") return i;
  }
  return pattern.length - 1;
}

/** Where a group's body starts (past `(`, `(?:`, `(?i:`, `(?P<name>`, `(?<name>`), or the `)` of a bare `(?i)`. */
export function groupPrefixEnd(pattern: string, open: number): number {
  if (pattern[open + 1] !== "?") return open + 1;
  let j = open + 2;
  if (pattern[j] === "P") j++;
  if (pattern[j] === "<") return pattern.indexOf(">", j) + 1 || pattern.length;
  while (j < pattern.length && /[A-Za-z-]/.test(pattern[j])) j++;
  return pattern[j] === ":" ? j + 1 : j;
}

/**
 * The characters and classes a pattern's counted repetitions copy (`[0-9a-f]{64}` copies 63 more classes,
 * `(?:ab){10}` 18 more characters; nested counts multiply), or why it is refused: a count above MAX_COUNT. Reads any
 * text, valid or not, in one pass.
 */
export function repetitionCost(pattern: string): { refused: string } | { repeated: number } {
  // Per open group: the characters and classes it holds so far, copies included.
  const groups = [0];
  let last = 0;
  let repeated = 0;
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i];
    const counted = countedAt(pattern, i);
    if (counted) {
      if (counted.count > MAX_COUNT) return { refused: `a counted repetition above ${MAX_COUNT}` };
      const copies = last * Math.max(counted.count - 1, 0);
      repeated += copies;
      groups[groups.length - 1] += copies;
      i = counted.end - 1;
      last = 0;
      continue;
    }
    if (ch === "(") {
      const bodyStart = groupPrefixEnd(pattern, i);
      if (pattern[bodyStart] !== ")") groups.push(0);
      i = bodyStart - (pattern[bodyStart] === ")" ? 0 : 1);
      last = 0;
      continue;
    }
    if (ch === ")" && groups.length > 1) {
      last = groups.pop()!;
      groups[groups.length - 1] += last;
      continue;
    }
    if ("*+?|".includes(ch)) {
      last = 0;
      continue;
    }
    if (ch === "\\") i = escapeEnd(pattern, i);
    else if (ch === "[") i = classEnd(pattern, i);
    last = 1;
    groups[groups.length - 1]++;
  }
  return { repeated };
}
