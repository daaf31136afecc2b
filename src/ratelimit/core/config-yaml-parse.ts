// Reads one YAML file the way the reference's yaml.v2 does (YAML 1.1 scalars, only the first document), within the
// nesting and alias limits, into plain nodes that keep each value's resolved type, source text and line.
import {
  Composer,
  isAlias,
  isMap,
  isScalar,
  isSeq,
  LineCounter,
  Lexer,
  Parser,
  visit,
  type Alias,
  type CST,
  type Document,
  type Node as YamlNode,
  type Pair,
  type ScalarTag as YamlScalarTag,
  type Tags,
} from "yaml";
import { tooDeep, type ConfigLimits, type Limit } from "./limits";
import { ConfigFailure } from "./config-model";
import { goFloat, goQuote, utf8Bytes } from "./go-format";

export type ScalarTag = "str" | "int" | "bool" | "null" | "float" | "binary";

/**
 * A parsed YAML node reduced to what validation needs: shape, resolved type, source text and line. A `!!binary`
 * scalar is a string in yaml.v2 (its decoded bytes, which may not be UTF-8): `bytes` holds them, and `value` their
 * text with any bad sequence replaced.
 */
export type YNode =
  | { kind: "map"; pairs: { key: YNode; value: YNode }[]; line: number }
  | { kind: "seq"; items: YNode[]; line: number }
  | {
      kind: "scalar";
      tag: ScalarTag;
      value: string | number | boolean | null;
      text: string;
      line: number;
      bytes?: Uint8Array;
    };

// The integer forms yaml.v2 (which the reference uses) reads: Go's strconv.ParseInt with base 0 once `_` is dropped,
// so decimal, `0` octal, and `0b`, `0o`, `0x` in either case. Not sexagesimal (`1:30`), which it keeps as a string.
const INT_SOURCE = /^[-+]?(0[bB][01_]+|0[xX][0-9a-fA-F_]+|0[oO]?[0-7_]+|[0-9][0-9_]*)$/;

/** Go's base prefixes the `yaml` package's YAML 1.1 schema does not read: `0o`, and `0B`, `0O`, `0X`. */
const GO_PREFIXED_INT = /^[-+]?0(?:[oO]_*[0-7][0-7_]*|[bB]_*[01][01_]*|[xX]_*[0-9a-fA-F][0-9a-fA-F_]*)$/;
const RADIX: Record<string, number> = { b: 2, o: 8, x: 16 };

/** An integer tag reading GO_PREFIXED_INT as ParseInt would (values past 2^53 round, as every int here does). */
const goPrefixedInt: YamlScalarTag = {
  identify: () => false,
  default: true,
  tag: "tag:yaml.org,2002:int",
  test: GO_PREFIXED_INT,
  resolve: (source: string) => {
    const text = source.replace(/_/g, "");
    const sign = text.startsWith("-") ? -1 : 1;
    const digits = text.replace(/^[-+]?0./, "");
    return sign * parseInt(digits, RADIX[text.replace(/^[-+]/, "")[1].toLowerCase()]);
  },
};

/**
 * The `yaml` package's YAML 1.1 tags as yaml.v2 resolves plain scalars: without the sexagesimal int and float (`1:30`
 * would read 90; yaml.v2 keeps "1:30", its resolver "purposefully" leaving base 60 out), and with Go's `0o` and
 * upper-case prefixes. Shared with the writer of xDS configs, so a string it writes plain reads back as a string.
 */
export function yamlV2Tags(tags: Tags): Tags {
  return [...tags.filter((tag) => typeof tag !== "object" || tag.format !== "TIME"), goPrefixedInt];
}

export function scalarOf(value: unknown, source: string | undefined, line: number): YNode {
  if (typeof value === "string") return { kind: "scalar", tag: "str", value, text: value, line };
  if (typeof value === "boolean") {
    return { kind: "scalar", tag: "bool", value, text: source ?? String(value), line };
  }
  if (value === null || value === undefined) {
    return { kind: "scalar", tag: "null", value: null, text: source ?? "", line };
  }
  if (typeof value === "number") {
    const text = source ?? String(value);
    const isInt = Number.isInteger(value) && INT_SOURCE.test(text) && Math.abs(value) < 2 ** 63;
    return { kind: "scalar", tag: isInt ? "int" : "float", value, text, line };
  }
  // Timestamps and other YAML 1.1 extras: yaml.v2 keeps them as their text.
  const text = source ?? String(value);
  return { kind: "scalar", tag: "str", value: text, text, line };
}

const BINARY_TAG = "tag:yaml.org,2002:binary";
/** What Go's base64.StdEncoding decodes once line breaks are dropped: padded groups of four. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** A `!!binary` scalar decoded as yaml.v2 does: standard padded base64, line breaks ignored, else the file fails. */
function binaryScalar(source: string, line: number): YNode {
  const base64 = source.replace(/[\r\n]/g, "");
  if (!BASE64.test(base64)) {
    throw new ConfigFailure("error loading config file: yaml: !!binary value contains invalid base64 data");
  }
  const bytes = Uint8Array.from(atob(base64), (char) => char.charCodeAt(0));
  return { kind: "scalar", tag: "binary", value: new TextDecoder().decode(bytes), text: source, line, bytes };
}

/** What converting one file's document needs; the alias budget is shared by every file of the set. */
interface Conversion {
  /** Each alias's anchored node, found in one walk (Alias.resolve walks the whole document for every alias). */
  targets: Map<Alias, YamlNode | undefined>;
  lines: LineCounter;
  /** The collections being converted: an alias to one of them would make a cycle. */
  path: Set<unknown>;
  limits: ConfigLimits;
  budget: AliasBudget;
}

export interface AliasBudget {
  /** How many more nodes aliases may add before the set is refused. */
  left: number;
}

/**
 * Converts a node, expanding aliases. Every node reached through an alias is counted against the set's budget as it
 * is made, so nested aliases (each multiplying the last, as in an alias bomb) are refused after at most the budget's
 * worth of work instead of expanding exponentially. Nesting is checked as it grows, since an alias placed deep can
 * nest a deep anchor further.
 * @param depth the collections around `node`.
 * @param aliased whether `node` is part of an alias's expansion.
 */
function toYNode(node: unknown, at: Conversion, depth: number, aliased: boolean): YNode {
  if (node === null || node === undefined) return scalarOf(null, "", 0);
  if (isAlias(node)) {
    const target = at.targets.get(node);
    if (target === undefined || at.path.has(target)) {
      throw new ConfigFailure("error loading config file: bad alias");
    }
    return toYNode(target, at, depth, true);
  }
  if (aliased && --at.budget.left < 0) {
    const { max, setting } = at.limits.aliasNodes;
    throw new ConfigFailure(
      `aliases expand to more than ${max} nodes in this set of files (the limit set by ${setting})`,
    );
  }
  const offset = (node as { range?: [number, number, number] }).range?.[0] ?? 0;
  const line = at.lines.linePos(offset).line;
  if (isScalar(node)) {
    return node.tag === BINARY_TAG ? binaryScalar(String(node.source), line) : scalarOf(node.value, node.source, line);
  }
  if (depth + 1 > at.limits.depth.max) throw new ConfigFailure(tooDeep("the YAML", at.limits.depth));
  at.path.add(node);
  try {
    if (isMap(node)) return { kind: "map", pairs: mapPairs(node.items, at, depth, aliased), line };
    if (isSeq(node)) {
      return { kind: "seq", items: node.items.map((item) => toYNode(item, at, depth + 1, aliased)), line };
    }
  } finally {
    at.path.delete(node);
  }
  throw new ConfigFailure("error checking config");
}

type MapPair = { key: YNode; value: YNode };

/**
 * A map's pairs in order, each merge key (`<<`) replaced by the pairs it merges, as yaml.v2 decodes them: a merged
 * key overrides the same key written before the `<<` and is overridden by one written after it (the last pair wins).
 */
function mapPairs(items: Pair<unknown, unknown>[], at: Conversion, depth: number, aliased: boolean): MapPair[] {
  return items.flatMap((pair) => {
    if (isMergeKey(pair.key)) return mergedPairs(pair.value, at, depth, aliased);
    const key = toYNode(pair.key, at, depth + 1, aliased);
    // yaml.v2 cannot hold a list or a map as a key of the map it decodes the whole file into.
    if (key.kind !== "scalar") {
      throw new ConfigFailure(`error loading config file: yaml: invalid map key: ${goSharpFormat(key)}`);
    }
    return [{ key, value: toYNode(pair.value, at, depth + 1, aliased) }];
  });
}

/** A plain `<<` key, or one tagged `!!merge`: the `yaml` package resolves both (YAML 1.1) to a symbol. */
function isMergeKey(key: unknown): boolean {
  return isScalar(key) && typeof key.value === "symbol";
}

const WANT_MAP = "error loading config file: yaml: map merge requires map or sequence of maps as the value";

/**
 * What a merge key's value adds to its map: a map's pairs, or those of a list of maps with the earlier maps taking
 * precedence. An alias must name a map itself, not a list of them.
 */
function mergedPairs(source: unknown, at: Conversion, depth: number, aliased: boolean): MapPair[] {
  if (isAlias(source) && !isMap(at.targets.get(source))) throw new ConfigFailure(WANT_MAP);
  const merged = toYNode(source, at, depth + 1, aliased);
  if (merged.kind === "map") return merged.pairs;
  if (merged.kind !== "seq" || merged.items.some((item) => item.kind !== "map")) throw new ConfigFailure(WANT_MAP);
  return merged.items.toReversed().flatMap((item) => (item.kind === "map" ? item.pairs : []));
}

/**
 * Whether a document's syntax tree nests more than `max` collections. Walked without recursion before the document is
 * composed, because composing recurses once per level and would run out of stack on deep input first.
 */
function syntaxTooDeep(document: CST.Document, max: number): boolean {
  const pending: [CST.Token | null | undefined, number][] = [[document.value, 0]];
  while (pending.length > 0) {
    const [token, outer] = pending.pop()!;
    if (!token || !(token.type === "block-map" || token.type === "block-seq" || token.type === "flow-collection")) {
      continue;
    }
    if (outer + 1 > max) return true;
    for (const item of token.items) pending.push([item.key, outer + 1], [item.value, outer + 1]);
  }
  return false;
}

/** The node each alias stands for: the last node anchored with its name before it, as Alias.resolve finds it. */
function aliasTargets(doc: Document): Map<Alias, YamlNode | undefined> {
  const targets = new Map<Alias, YamlNode | undefined>();
  const anchored = new Map<string, YamlNode>();
  visit(doc, {
    Node(_key, node) {
      if (isAlias(node)) targets.set(node, anchored.get(node.source));
      else if (node.anchor) anchored.set(node.anchor, node);
    },
  });
  return targets;
}

/** Renders a node like Go's `%v` renders the decoded value, for messages that quote YAML content. */
export function goFormat(node: YNode): string {
  switch (node.kind) {
    case "scalar":
      if (node.tag === "null") return "<nil>";
      return node.tag === "float" ? goFloat(node.value as number) : String(node.value);
    case "seq":
      return `[${node.items.map(goFormat).join(" ")}]`;
    case "map": {
      const parts = node.pairs.map((pair) => `${goFormat(pair.key)}:${goFormat(pair.value)}`);
      return `map[${parts.sort().join(" ")}]`;
    }
  }
}

/** Renders a node like Go's `%#v` renders the decoded value (a key yaml.v2 refuses is quoted so). */
function goSharpFormat(node: YNode): string {
  switch (node.kind) {
    case "scalar":
      if (node.tag === "null") return "interface {}(nil)";
      if (node.tag === "str") return goQuote(utf8Bytes(String(node.value)));
      if (node.tag === "binary") return goQuote(node.bytes!);
      return node.tag === "float" ? goFloat(node.value as number) : String(node.value);
    case "seq":
      return `[]interface {}{${node.items.map(goSharpFormat).join(", ")}}`;
    case "map": {
      const parts = node.pairs.map((pair) => `${goSharpFormat(pair.key)}:${goSharpFormat(pair.value)}`);
      return `map[interface {}]interface {}{${parts.sort().join(", ")}}`;
    }
  }
}

/** A `\u` escape yaml.v2 refuses in a double-quoted scalar: a surrogate (the escape is checked on its own). */
const SURROGATE_ESCAPE = /\\(?:u[dD][89a-fA-F][0-9a-fA-F]{2}|U0000[dD][89a-fA-F][0-9a-fA-F]{2}|.)/gs;

/**
 * The scanner error yaml.v2 reports for the first surrogate escape of the document, if any: the `yaml` package
 * decodes one to a lone surrogate, or a pair of them to one character, where yaml.v2 refuses every one. Its line is
 * named unless it is the first (yaml.v2 counts a mark on line 0 as none).
 */
function surrogateEscape(doc: Document, text: string, lines: LineCounter): string | undefined {
  let first: number | undefined;
  visit(doc, {
    Scalar(_key, node) {
      if (node.type !== "QUOTE_DOUBLE" || node.range === undefined || node.range === null) return;
      for (const match of text.slice(node.range[0], node.range[1]).matchAll(SURROGATE_ESCAPE)) {
        if (match[0].length < 6) continue;
        const offset = node.range[0] + match.index;
        if (first === undefined || offset < first) first = offset;
        break;
      }
    },
  });
  if (first === undefined) return undefined;
  const line = lines.linePos(first).line;
  return `yaml: ${line > 1 ? `line ${line}: ` : ""}found invalid Unicode character escape code`;
}

/**
 * The CST tokens up to the end of the first document (like yaml.v2, only the first document of a stream is read).
 * The parser is driven one lexeme at a time so that a text nested past the limit is refused as soon as the parser
 * holds more open collections than it allows: its work per lexeme grows with the nesting, and 400 KB of `[` took
 * seconds before the check on the finished document. Besides its collections, the parser's stack holds at most the
 * document and one scalar, so a refusal here is one the finished document's check would make too.
 */
function firstDocumentTokens(text: string, lines: LineCounter, depth: Limit) {
  const parser = new Parser(lines.addNewLine);
  const tokens: CST.Token[] = [];
  let first: CST.Document | undefined;
  lines.addNewLine(0);
  const take = (produced: Iterable<CST.Token>): boolean => {
    for (const token of produced) {
      if (token.type === "document") {
        if (first) return false;
        first = token;
      }
      tokens.push(token);
    }
    return true;
  };
  for (const lexeme of new Lexer().lex(text)) {
    if (!take(parser.next(lexeme))) return { tokens, first };
    if (parser.stack.length - 2 > depth.max) throw new ConfigFailure(tooDeep("the YAML", depth));
  }
  take(parser.end());
  return { tokens, first };
}

export function parseYaml(text: string, limits: ConfigLimits, budget: AliasBudget): YNode {
  const lines = new LineCounter();
  const { tokens, first } = firstDocumentTokens(text, lines, limits.depth);
  if (first && syntaxTooDeep(first, limits.depth.max)) throw new ConfigFailure(tooDeep("the YAML", limits.depth));
  const [doc] = new Composer({ version: "1.1", uniqueKeys: false, customTags: yamlV2Tags }).compose(tokens);
  if (doc === undefined) return scalarOf(null, "", 1);
  const error = doc.errors[0];
  if (error !== undefined) {
    // The composer reports a stack overflow as an error; the check above keeps documents too shallow for one.
    if (error.code === "RESOURCE_EXHAUSTION") throw new ConfigFailure(tooDeep("the YAML", limits.depth));
    // The parser's message and where, as the first line of its pretty form reads.
    const { line, col } = lines.linePos(error.pos[0]);
    const summary = `${error.message} at line ${line}, column ${col}`.split("\n")[0].replace(/:$/, "");
    throw new ConfigFailure(`error loading config file: ${summary}`);
  }
  const escape = surrogateEscape(doc, text, lines);
  if (escape !== undefined) throw new ConfigFailure(`error loading config file: ${escape}`);
  const conversion = { targets: aliasTargets(doc), lines, path: new Set(), limits, budget };
  return toYNode(doc.contents, conversion, 0, false);
}
