// The patterns and texts of bench/haproxy-regex.mjs: a small grammar of random patterns (with, for each, texts that
// make it backtrack), hand-built patterns at the vetting's bound, and the texts built from them.

/** The backend params of an ACL of each pattern on `fetch`, each used once (a rule that does not end the request). */
export const aclParams = (patterns, fetch) =>
  patterns
    .flatMap((pattern, i) => [`acl r${i} ${fetch} -m reg '${pattern}'`, `http-request set-header X-R${i} 1 if r${i}`])
    .join("\n");

/**
 * Hand-built patterns at the bound (workOf 60 to 100 % of MAX_WORK), from the shapes
 * test/proxy/haproxy-params/regex-cost.node.test.ts refuses (`[ab]{1,4}.{100}=x`, `.*.*=x`, `[a-z]{2,}[a-z]{100}=x`)
 * trimmed until the vetting accepts them, as many as one backend's budget of counted repetitions (500 copies) holds
 * together; each with units written to make it backtrack (`near`, repeated over the text) and its required ending.
 */
export const KNOWN = [
  { pattern: ".{0,75}=x", near: ["a".repeat(75) + "="], tails: ["=x"] },
  { pattern: "^.*=.{0,100}x", near: ["=" + "a".repeat(100)], tails: ["x"] },
  { pattern: "^\\S*=[a-z]{0,100}x", near: ["=" + "a".repeat(100)], tails: ["=x"] },
  { pattern: "[ab]{1,3}.{70}=x", near: ["ab" + "a".repeat(70) + "="], tails: ["=x"] },
  { pattern: "[ab]{1,2}.{100}=x", near: ["ab" + "a".repeat(100) + "="], tails: ["=x"] },
  { pattern: "^\\S*\\w?\\w?\\w?\\w?\\w?\\w?\\w?=", near: ["a"], tails: ["="] },
  { pattern: "^.*=.?.?.?.?.?.?x", near: ["=a"], tails: ["x"] },
  { pattern: "^[a-z]*a?a?a?a?a?a?a?=", near: ["a"], tails: ["="] },
];

/** Characters each text is also made of alone: every class of the grammar matches some of them. */
export const PALETTE = ["a", "b", "x", "z", "0", "_", "=", "/", "A", "-", "."];

/** A class or literal of the grammar, with characters it matches. */
const ATOMS = [
  ["[a-z]", "az"],
  ["[ab]", "ab"],
  ["[a-z0-9]", "a0"],
  ["\\w", "a_0"],
  ["\\d", "0"],
  ["\\S", "a=/"],
  [".", "a=/"],
  ["[^/]", "a="],
  ["[^=]", "a/"],
  ["[A-Za-z]", "aA"],
  ["a", "a"],
  ["b", "b"],
  ["x", "x"],
  ["=", "="],
  ["/", "/"],
  ["-", "-"],
  ["\\.", "."],
];

/** A seeded generator of numbers in [0, 1) (mulberry32), so that a seed finds the same patterns again. */
export function seeded(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A quantifier's text and the least and most repetitions it allows. */
function quantifier(random) {
  const int = (n) => Math.floor(random() * n);
  const roll = random();
  const lazy = random() < 0.1 ? "?" : "";
  if (roll < 0.3) return { text: "", min: 1, max: 1 };
  if (roll < 0.45) return { text: `*${lazy}`, min: 0, max: Infinity };
  if (roll < 0.6) return { text: `+${lazy}`, min: 1, max: Infinity };
  if (roll < 0.7) return { text: `?${lazy}`, min: 0, max: 1 };
  const min = int(4);
  if (roll < 0.8) return { text: `{${min},}${lazy}`, min, max: Infinity };
  if (roll < 0.9) return { text: `{${min + 1 + int(100 - min)}}`, min: 1, max: 1, exact: true };
  const max = min + 1 + int(100 - min);
  return { text: `{${min},${max}}${lazy}`, min, max };
}

/** One piece: an atom or a group of 1 to 3 atoms, quantified; `unit` is a text it matches once, `chars` its characters. */
function piece(random) {
  const pick = () => ATOMS[Math.floor(random() * ATOMS.length)];
  let text;
  let unit;
  let chars;
  if (random() < 0.15) {
    const inner = Array.from({ length: 1 + Math.floor(random() * 3) }, () => ({ atom: pick(), q: quantifier(random) }));
    const alternation = random() < 0.3 && inner.length > 1;
    const body = inner.map(({ atom, q }) => atom[0] + (alternation ? "" : q.text)).join(alternation ? "|" : "");
    text = `(${random() < 0.5 ? "?:" : ""}${body})`;
    unit = alternation
      ? inner[0].atom[1][0]
      : inner.map(({ atom, q }) => atom[1][0].repeat(Math.max(q.min, 1))).join("");
    chars = inner.map(({ atom }) => atom[1]).join("");
  } else [text, chars] = pick();
  unit ??= chars[0];
  const q = quantifier(random);
  // `x{n}` matches n copies once.
  if (q.exact) unit = unit.repeat(Number(q.text.slice(1, -1)));
  return { text: text + q.text, unit, chars, min: q.min, max: q.max };
}

/**
 * A random pattern of 1 to 6 pieces, maybe anchored; its near-matches (every piece but the last, to repeat) and tails
 * (the last pieces: PCRE's JIT fails at once on a text without the pattern's last literal, so a text ends with them).
 */
export function randomPattern(random) {
  const pieces = Array.from({ length: 1 + Math.floor(random() * 6) }, () => piece(random));
  const flags = random() < 0.05 ? "(?i)" : "";
  const anchor = random() < 0.4 ? "^" : "";
  const end = random() < 0.15 ? "$" : "";
  const pattern = flags + anchor + pieces.map((p) => p.text).join("") + end;
  const counted = (p) => p.unit.repeat(Number.isFinite(p.max) ? Math.max(p.max, 1) : 40);
  const leading = pieces.slice(0, -1);
  const near = [leading.map(counted).join(""), leading.map((p) => p.unit).join("")];
  const tails = [pieces.slice(-1), pieces.slice(-2)].map((last) => last.map((p) => p.unit).join(""));
  // A character the last piece does not match, for a text that almost matches to fail on at its end.
  const last = new RegExp(`^(?:${pieces[pieces.length - 1].text})$`, flags ? "i" : "");
  const breaker = PALETTE.find((c) => !last.test(c));
  if (breaker) tails.push(breaker);
  return { pattern, near: [...new Set(near.filter((text) => text !== ""))], tails: [...new Set(tails)] };
}

/**
 * Units to repeat, to make `pattern` backtrack (each palette character, each near-match), each alone and with a tail
 * at the end (each start then finds the last literal after it) or at the start (an anchored run fails after it).
 */
export function hurtingCandidates({ near, tails }) {
  const units = [
    ...PALETTE.map((c) => ({ label: JSON.stringify(c), unit: c })),
    ...near.map((unit) => ({ label: `(${q(unit)})`, unit })),
  ];
  return units.flatMap((unit) => [
    { ...unit, head: "", tail: "" },
    ...tails.flatMap((tail) => [
      { ...unit, head: "", tail, label: `${unit.label}…+${q(tail)}` },
      { ...unit, head: tail, tail: "", label: `${q(tail)}+${unit.label}…` },
    ]),
  ]);
}

/** A short description of `text`, its runs of one character written `"a"×40`. */
function q(text) {
  const parts = [];
  for (const run of text.match(/(.)\1*/g) ?? []) {
    const last = parts[parts.length - 1];
    if (run.length > 3) parts.push({ run });
    else if (last && !last.run) last.text += run;
    else parts.push({ text: run });
  }
  const written = parts.map((p) => (p.run ? `${JSON.stringify(p.run[0])}×${p.run.length}` : JSON.stringify(p.text)));
  const description = written.join("+");
  return description.length > 40 ? `${description.slice(0, 39)}…` : description;
}

/** A text of `bytes`: the candidate's head, its unit repeated, then its tail. */
export const textOf = ({ head, unit, tail }, bytes) =>
  head + unit.repeat(Math.ceil(bytes / unit.length)).slice(0, Math.max(bytes - head.length - tail.length, 0)) + tail;

/** A header of `bytes` made of values of `size` characters, each the candidate's text (0: only commas, empty values). */
export function valuesText(candidate, size, bytes) {
  if (size === 0) return ",".repeat(bytes);
  const value = textOf(candidate, size);
  return Array.from({ length: Math.ceil(bytes / (size + 1)) }, () => value)
    .join(",")
    .slice(0, bytes);
}
