// Finds the line of a YAML file that a loader message is about, so that the bundling step can say `file:line:`. The
// loader words its messages as the reference does, without lines (but for YAML syntax), so the line is looked up
// here from what the message names: the key and, when quoted, the value, in the order the loader reads the file.
import { isAlias, isMap, isPair, isScalar, isSeq, LineCounter, parseDocument, type Node, type YAMLMap } from "yaml";

/** One key/value pair of the file, in document order. */
interface Entry {
  key: string;
  value: unknown;
  /** The map holding the pair. */
  map: YAMLMap;
  line: number;
}

const textOf = (node: unknown): string | undefined =>
  isScalar(node) ? String((node as { source?: string }).source ?? node.value ?? "") : undefined;

/** The value of `key` in `map`, as written. */
const valueIn = (map: YAMLMap, key: string): string | undefined => {
  const pair = map.items.find((item) => isPair(item) && textOf(item.key) === key);
  return pair ? textOf(pair.value) : undefined;
};

/** Every pair of the document, depth-first in document order (aliases are not followed: their anchor is). */
function entries(root: unknown, lines: LineCounter): Entry[] {
  const found: Entry[] = [];
  const walk = (node: unknown) => {
    if (isAlias(node) || node === null || node === undefined) return;
    if (isMap(node)) {
      for (const pair of node.items) {
        const key = textOf(pair.key);
        const offset = (pair.key as Node | null)?.range?.[0];
        if (key !== undefined && offset !== undefined) {
          found.push({ key, value: pair.value, map: node, line: lines.linePos(offset).line });
        }
        walk(pair.value);
      }
    } else if (isSeq(node)) node.items.forEach(walk);
  };
  walk(root);
  return found;
}

type Finder = (match: RegExpMatchArray, all: Entry[], lines: LineCounter) => number | undefined;

/** The first pair with this key (and, when given, this value as written). */
const keyed =
  (key: string | ((match: RegExpMatchArray) => string), value?: (match: RegExpMatchArray) => string): Finder =>
  (match, all) =>
    all.find(
      (entry) =>
        entry.key === (typeof key === "string" ? key : key(match)) &&
        (value === undefined || textOf(entry.value) === value(match)),
    )?.line;

/** The first pair with this key whose map passes `test`. */
const keyedWhere =
  (key: string, test: (map: YAMLMap) => boolean): Finder =>
  (_match, all) =>
    all.find((entry) => entry.key === key && test(entry.map))?.line;

const lineOfMap = (map: YAMLMap, lines: LineCounter) => (map.range ? lines.linePos(map.range[0]).line : undefined);

/** The descriptor (a map in a `descriptors` list) that repeats a composite key of its level, or has no key. */
function badDescriptor(descriptors: unknown, lines: LineCounter, problem: "duplicate" | "empty"): number | undefined {
  if (!isSeq(descriptors)) return undefined;
  const seen = new Set<string>();
  for (const item of descriptors.items) {
    if (!isMap(item)) continue;
    const key = valueIn(item, "key") ?? "";
    const value = valueIn(item, "value") ?? "";
    const composite = value === "" ? key : `${key}_${value}`;
    if (problem === "empty" && key === "") return lineOfMap(item, lines);
    if (problem === "duplicate" && seen.has(composite)) return lineOfMap(item, lines);
    seen.add(composite);
    const nested = item.items.find((pair) => textOf(pair.key) === "descriptors")?.value;
    const inner = badDescriptor(nested, lines, problem);
    if (inner !== undefined) return inner;
  }
  return undefined;
}

const descriptorFinder =
  (problem: "duplicate" | "empty"): Finder =>
  (_match, all, lines) =>
    badDescriptor(all.find((entry) => entry.key === "descriptors")?.value, lines, problem);

const unlimited = (map: YAMLMap) => valueIn(map, "unlimited")?.toLowerCase() === "true";
const algorithmIs = (name: string) => (map: YAMLMap) => valueIn(map, "algorithm") === name;

/** What each message of the loader is about, tried in order. */
const FINDERS: [RegExp, Finder][] = [
  [/invalid rate limit unit '(.+)'/s, keyed("unit", (m) => m[1])],
  [/invalid rate limit unit ''/, keyedWhere("rate_limit", () => true)],
  [/should not specify rate limit unit when unlimited/, keyedWhere("unit", unlimited)],
  [/rate_limit\.(\w+) '(.*)' is not one of/s, keyed((m) => m[1], (m) => m[2])],
  [/rate_limit\.(\w+) must be an integer from 1 to \d+, but found '(.*)'/s, keyed((m) => m[1], (m) => m[2])],
  [/rate_limit\.burst is only for algorithm token_bucket/, keyedWhere("burst", (map) => !algorithmIs("token_bucket")(map))],
  [/rate_limit\.requests_per_unit must be at least 1/, keyedWhere("requests_per_unit", algorithmIs("token_bucket"))],
  [/rate_limit\.(unit_multiplier|burst) (\d+) /, keyed((m) => m[1], (m) => m[2])],
  [/rate_limit\.burst \d+ takes/, keyedWhere("algorithm", algorithmIs("token_bucket"))],
  [/replaces/, keyed("replaces")],
  [/duplicate domain '(.*)'/s, keyed("domain", (m) => m[1])],
  [/empty domain/, keyed("domain")],
  [/descriptor has empty key/, descriptorFinder("empty")],
  [/duplicate descriptor composite key/, descriptorFinder("duplicate")],
  [/share_threshold/, keyed("share_threshold")],
  [/metadata/, keyed("metadata")],
  [/uses algorithm (\w+), which/, keyed("algorithm", (m) => m[1])],
  [/unknown key '(.*)'/s, keyed((m) => m[1])],
];

/**
 * The line (from 1) of `text` that the loader's `message` (without its file name) is about, or undefined when the
 * message names no place in the file (its size, or a key that is missing).
 */
export function lineOfConfigError(text: string, message: string): number | undefined {
  // YAML syntax errors and unmarshal errors carry their line already.
  const stated = /\bline (\d+)\b/.exec(message);
  if (stated) return Number(stated[1]);
  const lines = new LineCounter();
  const document = parseDocument(text, { lineCounter: lines, uniqueKeys: false });
  const all = entries(document.contents, lines);
  for (const [pattern, find] of FINDERS) {
    const match = message.match(pattern);
    const line = match ? find(match, all, lines) : undefined;
    if (line !== undefined) return line;
  }
  // Otherwise the value the message quotes last, where the file has it.
  const quoted = [...message.matchAll(/'([^']+)'/g)].at(-1)?.[1];
  return quoted === undefined ? undefined : all.find((entry) => textOf(entry.value) === quoted)?.line;
}
