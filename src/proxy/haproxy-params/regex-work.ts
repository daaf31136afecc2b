// How much backtracking a pattern may cost HAProxy's PCRE2 on the longest text a request carries: PCRE's match limit
// does not bound a JIT run's time (`[a-z]{2,}[a-z]{100}=x` ran 4.8 s on one 15 KB path), so the bound is the
// pattern's shape. An upper bound of the work, in character tests, read from the pattern (see workOf).
import { classEnd, countedAt, escapeEnd, groupPrefixEnd } from "./regex-expansion";

/** The longest text a regex reads: HAProxy's request buffer (tune.bufsize, 16384 bytes by default). */
export const LONGEST_TEXT = 16384;

/**
 * Most work one run may cost, in character tests: PCRE2's JIT makes about one a nanosecond, so a run costs at most
 * about 10 ms. An unanchored pattern may not backtrack into an unbounded repetition (`foo.*bar`), nor an anchored one
 * into two (`^.*foo.*bar`): a substring is matched with `-m sub`, which costs one pass.
 */
export const MAX_WORK = 10_000_000;

/** How a pattern is read: on a text of `length` bytes, `fold` giving the bytes a class matches under its flags. */
interface Reading {
  length: number;
  fold: (set: bigint) => bigint;
}

/** A piece of pattern followed by the rest: it costs `entry + choices × (the rest's cost)`. */
interface Cost {
  entry: number;
  choices: number;
}

/** A piece read: its cost, the bytes it matches when it is one character (for disjointness), whether it is `^`. */
interface Item extends Cost {
  chars?: bigint;
  min: number;
  /** What one repetition of it costs. */
  once: number;
  /** A group's first character, read again when the group ends the pattern. */
  body?: number;
  repeated?: boolean;
  anchor?: boolean;
}

const ALL = (1n << 256n) - 1n;
const range = (from: number, to: number) => ((1n << BigInt(to - from + 1)) - 1n) << BigInt(from);
const one = (code: number) => 1n << BigInt(code);
const DIGIT = range(48, 57);
const WORD = DIGIT | range(65, 90) | range(97, 122) | one(95);
const SPACE = range(9, 13) | one(32);
const CLASS_ESCAPES: Record<string, bigint> = {
  d: DIGIT,
  D: ALL ^ DIGIT,
  w: WORD,
  W: ALL ^ WORD,
  s: SPACE,
  S: ALL ^ SPACE,
  h: one(9) | one(32) | one(160),
  H: ALL ^ (one(9) | one(32) | one(160)),
};
const CONTROL_ESCAPES: Record<string, number> = { n: 10, r: 13, t: 9, f: 12, a: 7, e: 27 };
const ZERO_WIDTH_ESCAPES = "bBAzZG";

/** Both cases of every letter in `set` (for `(?i)`). */
function caseless(set: bigint): bigint {
  const upper = (set >> 65n) & range(0, 25);
  const lower = (set >> 97n) & range(0, 25);
  return set | (upper << 97n) | (lower << 65n);
}

/** The bytes the escape at `i` matches (null: zero-width); what it does not know, it counts as any byte. */
function escapeChars(pattern: string, i: number): bigint | null {
  const letter = pattern[i + 1];
  if (ZERO_WIDTH_ESCAPES.includes(letter)) return null;
  if (letter in CLASS_ESCAPES) return CLASS_ESCAPES[letter];
  if (letter in CONTROL_ESCAPES) return one(CONTROL_ESCAPES[letter]);
  const hex = /^x(?:\{([0-9A-Fa-f]{1,2})\}|([0-9A-Fa-f]{2}))/.exec(pattern.slice(i + 1, i + 7));
  if (hex) return one(parseInt(hex[1] ?? hex[2], 16));
  return /[A-Za-z0-9]/.test(letter) ? ALL : one(letter.charCodeAt(0));
}

/** The bytes the brackets from `open` to `end` (their `]`) match; a POSIX class or an escaped range end: any. */
function classChars(pattern: string, open: number, end: number): bigint {
  const negated = pattern[open + 1] === "^";
  let set = 0n;
  for (let i = open + (negated ? 2 : 1); i < end; i++) {
    if (pattern[i] === "[" && pattern[i + 1] === ":") return ALL;
    if (pattern[i] === "\\") {
      set |= escapeChars(pattern, i) ?? ALL;
      i = escapeEnd(pattern, i);
    } else if (pattern[i + 1] === "-" && i + 2 < end) {
      if (pattern[i + 2] === "\\" || pattern[i + 2] === "[") return ALL;
      set |= range(pattern.charCodeAt(i), pattern.charCodeAt(i + 2));
      i += 2;
    } else set |= one(pattern.charCodeAt(i));
  }
  return negated ? ALL ^ set : set;
}

/** `item` followed by what costs `rest`. */
const then = (item: Cost, rest: Cost): Cost => ({
  entry: item.entry + item.choices * rest.entry,
  choices: item.choices * rest.choices,
});

/** Reads alternatives from `start` to the `)` closing them (or the end); their cost and where they end. */
function alternatives(
  pattern: string,
  start: number,
  reading: Reading,
  top: boolean,
): { cost: Cost; end: number; anchored: boolean } {
  const branches: Item[][] = [[]];
  let i = start;
  for (; i < pattern.length && pattern[i] !== ")"; i++) {
    if (pattern[i] === "|") {
      branches.push([]);
      continue;
    }
    const { item, end } = atom(pattern, i, reading);
    i = quantified(pattern, end, item, reading.length);
    branches[branches.length - 1].push(item);
  }
  const costs = branches.map((items) =>
    sequence(items, top, (body) => alternatives(pattern, body, reading, true).cost),
  );
  const cost = costs.reduce((sum, c) => ({ entry: sum.entry + c.entry, choices: sum.choices + c.choices }));
  // `(?i)` before `^` reads nothing.
  const first = branches[0].find((item) => item.once !== 0);
  return { cost, end: i, anchored: branches.length === 1 && first?.anchor === true };
}

/** One atom at `i` (a character, class, escape, anchor or group), before its quantifier; where it ends. */
function atom(pattern: string, i: number, reading: Reading): { item: Item; end: number } {
  const single = (chars: bigint | null, end: number, anchor = false) => ({
    item: { entry: 1, choices: 1, min: 1, once: 1, chars: chars === null ? undefined : reading.fold(chars), anchor },
    end,
  });
  const ch = pattern[i];
  if (ch === "\\") {
    const end = escapeEnd(pattern, i) + 1;
    return single(escapeChars(pattern, i), end, pattern[i + 1] === "A");
  }
  if (ch === "[") {
    const end = classEnd(pattern, i);
    return single(classChars(pattern, i, end), end + 1);
  }
  if (ch === "(") {
    const bodyStart = groupPrefixEnd(pattern, i);
    if (pattern[bodyStart] === ")") return { item: { entry: 0, choices: 1, min: 1, once: 0 }, end: bodyStart + 1 };
    const inner = alternatives(pattern, bodyStart, reading, false);
    return { item: { ...inner.cost, min: 1, once: inner.cost.entry, body: bodyStart }, end: inner.end + 1 };
  }
  if (ch === "^" || ch === "$") return single(null, i + 1, ch === "^");
  return single(ch === "." ? ALL : one(ch.charCodeAt(0)), i + 1);
}

/** Applies the quantifier at `i`, if any, to `item`; returns the index of the atom's last character. */
function quantified(pattern: string, i: number, item: Item, length: number): number {
  let end = i;
  let min = 1;
  let max = 1;
  const counted = countedAt(pattern, i);
  if (counted) {
    const [low, high] = pattern.slice(i + 1, counted.end - 1).split(",");
    min = Number(low);
    max = high === undefined ? min : high === "" ? Infinity : Number(high);
    end = counted.end;
  } else if (i < pattern.length && "*+?".includes(pattern[i])) {
    min = pattern[i] === "+" ? 1 : 0;
    max = pattern[i] === "?" ? 1 : Infinity;
    end = i + 1;
  }
  if (pattern[end] === "?" && end > i) end++;
  if (end === i) return i - 1;
  item.min = min;
  item.repeated = true;
  // A repetition without a bound reads up to the whole text, each time it is tried.
  item.entry = item.once * (max === Infinity ? length : max);
  item.choices = max === Infinity ? length + 1 : max - min + 1;
  return end - 1;
}

/**
 * The cost of a sequence of items. A repetition of one character followed by a required character it cannot match
 * (`[^/]+/`, `[0-9]+\.`) never gives one back: PCRE makes it possessive. One ending the whole pattern ends the run
 * once it has its least count: it reads the rest of the text once a run (workOf adds that); so does what ends a group
 * ending the pattern.
 */
function sequence(items: Item[], top: boolean, endingGroup: (body: number) => Cost): Cost {
  let rest: Cost = { entry: 0, choices: 1 };
  for (let k = items.length - 1; k >= 0; k--) {
    const item = items[k];
    const next = items[k + 1];
    const last = top && k === items.length - 1;
    const disjoint =
      item.chars !== undefined && next?.chars !== undefined && next.min >= 1 && !(item.chars & next.chars);
    if (last && item.body !== undefined && !item.repeated) rest = then(endingGroup(item.body), rest);
    else if (last) rest = then({ entry: item.once * Math.max(item.min, 1), choices: 1 }, rest);
    else rest = then(disjoint ? { ...item, choices: 1 } : item, rest);
  }
  return rest;
}

/** An upper bound of the character tests one run of `pattern` costs on a text of `length` bytes. */
function runWork(pattern: string, length: number, everyStart: boolean): number {
  const fold = /\(\?[a-zA-Z-]*i/.test(pattern) ? caseless : (set: bigint) => set;
  const { cost, anchored } = alternatives(pattern, 0, { length, fold }, true);
  return (anchored && !everyStart ? 1 : length + 1) * (cost.entry + cost.choices) + length;
}

/**
 * An upper bound of the character tests `pattern` costs PCRE on one request: each start (one when anchored by `^`)
 * times what a start costs, each repetition trying every length it may take before what follows. That is a
 * polynomial in the text's length with no negative coefficient, so however the request splits its LONGEST_TEXT bytes
 * into values (one run each), the runs cost at most one run on all of them plus LONGEST_TEXT runs on empty texts.
 * `everyStart` for regsub, which runs the pattern again from each match's end, where `^` matches too. Expects a
 * pattern RE2 compiled and backtrackingRisk let through (no repeated group that holds a choice).
 */
export const workOf = (pattern: string, everyStart = false) =>
  runWork(pattern, LONGEST_TEXT, everyStart) + LONGEST_TEXT * runWork(pattern, 0, everyStart);
