// Phase one of loading a rate limit configuration: reads one YAML file the way the reference's yaml.v2 does (YAML 1.1
// scalars, the reference's key allow-list and unmarshal messages), within the nesting and alias limits, into typed
// structs that config.ts builds the descriptor tree from.
import {
  Composer,
  isAlias,
  isMap,
  isScalar,
  isSeq,
  LineCounter,
  Parser,
  visit,
  type Alias,
  type CST,
  type Document,
  type Node as YamlNode,
} from "yaml";
import { tooDeep, type ConfigLimits } from "./limits";
import type { StructObject, StructValue } from "./types";

// ─── YAML reading ───────────────────────────────────────────────────────────────────────────────

/** Keys allowed anywhere in a file (the reference's allow-list is not positional). */
const UPSTREAM_KEYS = [
  "domain",
  "key",
  "value",
  "descriptors",
  "rate_limit",
  "unit",
  "requests_per_unit",
  "unlimited",
  "shadow_mode",
  "name",
  "replaces",
  "detailed_metric",
  "value_to_metric",
  "share_threshold",
  "quota_mode",
  "metadata",
];
/** This project's keys beyond the reference: the algorithm of a rule, its window multiplier and a bucket's size. */
const OWN_KEYS = ["algorithm", "unit_multiplier", "burst"];
const VALID_KEYS = new Set([...UPSTREAM_KEYS, ...OWN_KEYS]);
/** With strict upstream checking, this project's keys are unknown, as they are to the reference. */
const STRICT_UPSTREAM_KEYS = new Set(UPSTREAM_KEYS);

/** Integer-valued keys of our own: a float there is refused by name (when decoding) instead of as "error checking config". */
const OWN_INTEGER_KEYS = new Set(["unit_multiplier", "burst"]);

type ScalarTag = "str" | "int" | "bool" | "null" | "float";

/** A parsed YAML node reduced to what validation needs: shape, resolved type, source text and line. */
type YNode =
  | { kind: "map"; pairs: { key: YNode; value: YNode }[]; line: number }
  | { kind: "seq"; items: YNode[]; line: number }
  | { kind: "scalar"; tag: ScalarTag; value: string | number | boolean | null; text: string; line: number };

/** Thrown inside this module only, to unwind a recursive walk; always converted to a ConfigError. */
export class ConfigFailure extends Error {}

// YAML 1.1 integer forms (yaml.v2, which the reference uses, reads YAML 1.1): decimal, octal, hex, binary
// and sexagesimal, with `_` separators.
const INT_SOURCE = /^[-+]?(0b[01_]+|0x[0-9a-fA-F_]+|0o?[0-7_]+|[0-9][0-9_]*(:[0-5]?[0-9])*)$/;

function scalarOf(value: unknown, source: string | undefined, line: number): YNode {
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
  if (isScalar(node)) return scalarOf(node.value, node.source, line);
  if (depth + 1 > at.limits.depth.max) throw new ConfigFailure(tooDeep("the YAML", at.limits.depth));
  at.path.add(node);
  try {
    if (isMap(node)) {
      const pairs = node.items.map((pair) => ({
        key: toYNode(pair.key, at, depth + 1, aliased),
        value: toYNode(pair.value, at, depth + 1, aliased),
      }));
      return { kind: "map", pairs, line };
    }
    if (isSeq(node)) {
      return { kind: "seq", items: node.items.map((item) => toYNode(item, at, depth + 1, aliased)), line };
    }
  } finally {
    at.path.delete(node);
  }
  throw new ConfigFailure("error checking config");
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
function goFormat(node: YNode): string {
  switch (node.kind) {
    case "scalar":
      return node.tag === "null" ? "<nil>" : String(node.value);
    case "seq":
      return `[${node.items.map(goFormat).join(" ")}]`;
    case "map": {
      const parts = node.pairs.map((pair) => `${goFormat(pair.key)}:${goFormat(pair.value)}`);
      return `map[${parts.sort().join(" ")}]`;
    }
  }
}

function parseYaml(text: string, limits: ConfigLimits, budget: AliasBudget): YNode {
  const lines = new LineCounter();
  // Like yaml.v2, only the first document of a stream is read, so the tokens stop where a second one starts.
  const tokens: CST.Token[] = [];
  let first: CST.Document | undefined;
  for (const token of new Parser(lines.addNewLine).parse(text)) {
    if (token.type === "document") {
      if (first) break;
      first = token;
    }
    tokens.push(token);
  }
  if (first && syntaxTooDeep(first, limits.depth.max)) throw new ConfigFailure(tooDeep("the YAML", limits.depth));
  const [doc] = new Composer({ version: "1.1", uniqueKeys: false }).compose(tokens);
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
  const conversion = { targets: aliasTargets(doc), lines, path: new Set(), limits, budget };
  return toYNode(doc.contents, conversion, 0, false);
}

/** Checks every key against the allow-list and every leaf's type, before any typed decoding. */
function validateYamlKeys(map: Extract<YNode, { kind: "map" }>, valid: Set<string>): void {
  for (const { key, value } of map.pairs) {
    if (key.kind !== "scalar" || key.tag !== "str") {
      throw new ConfigFailure(`config error, key is not of type string: ${goFormat(key)}`);
    }
    if (!valid.has(String(key.value))) {
      throw new ConfigFailure(`config error, unknown key '${String(key.value)}'`);
    }
    // What a metadata map holds is the operator's own: converted to a Struct when decoding, never key-checked.
    if (key.value === "metadata") continue;
    if (value.kind === "seq") {
      for (const element of value.items) {
        if (element.kind !== "map") {
          throw new ConfigFailure(`config error, yaml file contains list of type other than map: ${goFormat(element)}`);
        }
        validateYamlKeys(element, valid);
      }
    } else if (value.kind === "map") {
      validateYamlKeys(value, valid);
    } else if (value.tag === "float" && !OWN_INTEGER_KEYS.has(String(key.value))) {
      throw new ConfigFailure("error checking config");
    }
  }
}

// ─── Typed decoding (mirrors yaml.v2 into the reference's structs, with its error wording) ──────

export interface YamlRateLimit {
  requestsPerUnit: number;
  unit: string;
  unlimited: boolean;
  name: string;
  replaces: { name: string }[];
  /** As written; checked when the rule is built. Empty when absent. */
  algorithm: string;
  /** Undefined when absent; otherwise the node, checked when the rule is built (it must be an integer ≥ 1). */
  unitMultiplier?: YamlNumber;
  burst?: YamlNumber;
}

/** A number of our own keys as written: its value when it is an integer, and its text for messages. */
export interface YamlNumber {
  integer: number | undefined;
  text: string;
}

export interface YamlDescriptor {
  key: string;
  value: string;
  rateLimit?: YamlRateLimit;
  descriptors: YamlDescriptor[];
  shadowMode: boolean;
  detailedMetric: boolean;
  valueToMetric: boolean;
  shareThreshold: boolean;
  quotaMode: boolean;
  /** The converted metadata, or why it cannot be a Struct (refused when the descriptor is built, as upstream does). */
  metadata?: { ok: true; value: StructObject } | { ok: false; problem: string };
}

export interface YamlRoot {
  domain: string;
  descriptors: YamlDescriptor[];
}

const MAX_UINT32 = 4294967295;

class Decoder {
  readonly errors: string[] = [];

  private fail(node: YNode, goType: string): void {
    let shown = "";
    let tag: string = node.kind;
    if (node.kind === "scalar") {
      tag = node.tag;
      shown = node.text.length > 10 ? ` \`${node.text.slice(0, 7)}...\`` : ` \`${node.text}\``;
    }
    this.errors.push(`line ${node.line}: cannot unmarshal !!${tag}${shown} into ${goType}`);
  }

  string(node: YNode): string {
    if (node.kind === "scalar") {
      if (node.tag === "null") return "";
      // yaml.v2 puts the source text of an int or bool into a string field.
      if (node.tag !== "float") return node.text;
    }
    this.fail(node, "string");
    return "";
  }

  bool(node: YNode): boolean {
    if (node.kind === "scalar" && node.tag === "null") return false;
    if (node.kind === "scalar" && node.tag === "bool") return node.value === true;
    this.fail(node, "bool");
    return false;
  }

  uint32(node: YNode): number {
    if (node.kind === "scalar" && node.tag === "null") return 0;
    if (node.kind === "scalar" && node.tag === "int") {
      const n = node.value as number;
      if (n >= 0 && n <= MAX_UINT32) return n;
    }
    this.fail(node, "uint32");
    return 0;
  }

  list<T>(node: YNode, goType: string, item: (node: YNode) => T | undefined): T[] {
    if (node.kind === "scalar" && node.tag === "null") return [];
    if (node.kind !== "seq") {
      this.fail(node, goType);
      return [];
    }
    return node.items.map(item).filter((value): value is T => value !== undefined);
  }

  /** Calls `field` per pair of a mapping in order, so a repeated key's last value wins (as in yaml.v2). */
  struct(node: YNode, goType: string, field: (name: string, value: YNode) => void): boolean {
    if (node.kind === "scalar" && node.tag === "null") return false;
    if (node.kind !== "map") {
      this.fail(node, goType);
      return false;
    }
    for (const pair of node.pairs) field(String((pair.key as { value: unknown }).value), pair.value);
    return true;
  }

  rateLimit(node: YNode): YamlRateLimit | undefined {
    const out: YamlRateLimit = {
      requestsPerUnit: 0,
      unit: "",
      unlimited: false,
      name: "",
      replaces: [],
      algorithm: "",
    };
    const present = this.struct(node, "config.YamlRateLimit", (name, value) => {
      if (name === "requests_per_unit") out.requestsPerUnit = this.uint32(value);
      else if (name === "unit") out.unit = this.string(value);
      else if (name === "unlimited") out.unlimited = this.bool(value);
      else if (name === "name") out.name = this.string(value);
      else if (name === "algorithm") out.algorithm = this.string(value);
      else if (name === "unit_multiplier") out.unitMultiplier = this.ownNumber(value);
      else if (name === "burst") out.burst = this.ownNumber(value);
      else if (name === "replaces") {
        out.replaces = this.list(value, "[]config.yamlReplaces", (item) => {
          const replaces = { name: "" };
          const found = this.struct(item, "config.yamlReplaces", (key, v) => {
            if (key === "name") replaces.name = this.string(v);
          });
          return found ? replaces : { name: "" };
        });
      }
    });
    return present ? out : undefined;
  }

  descriptor(node: YNode): YamlDescriptor | undefined {
    const out: YamlDescriptor = {
      key: "",
      value: "",
      descriptors: [],
      shadowMode: false,
      detailedMetric: false,
      valueToMetric: false,
      shareThreshold: false,
      quotaMode: false,
    };
    const present = this.struct(node, "config.YamlDescriptor", (name, value) => {
      if (name === "key") out.key = this.string(value);
      else if (name === "value") out.value = this.string(value);
      else if (name === "rate_limit") out.rateLimit = this.rateLimit(value);
      else if (name === "descriptors") out.descriptors = this.descriptors(value);
      else if (name === "shadow_mode") out.shadowMode = this.bool(value);
      else if (name === "detailed_metric") out.detailedMetric = this.bool(value);
      else if (name === "value_to_metric") out.valueToMetric = this.bool(value);
      else if (name === "share_threshold") out.shareThreshold = this.bool(value);
      else if (name === "quota_mode") out.quotaMode = this.bool(value);
      else if (name === "metadata") out.metadata = this.metadata(value);
    });
    return present ? out : undefined;
  }

  /** A number of our own keys: kept as written, so the rule can refuse it by name. */
  ownNumber(node: YNode): YamlNumber {
    if (node.kind !== "scalar") return { integer: undefined, text: goFormat(node) };
    return { integer: node.tag === "int" ? (node.value as number) : undefined, text: node.text };
  }

  /** A metadata map (a map[string]interface{} in the reference), converted to what a Struct holds. */
  metadata(node: YNode): YamlDescriptor["metadata"] {
    if (node.kind === "scalar" && node.tag === "null") return undefined;
    if (node.kind !== "map") {
      this.fail(node, "map[string]interface {}");
      return undefined;
    }
    try {
      return { ok: true, value: metadataValue(node) as StructObject };
    } catch (e) {
      if (!(e instanceof MetadataFailure)) throw e;
      return { ok: false, problem: `error parsing metadata: ${e.message}` };
    }
  }

  descriptors(node: YNode): YamlDescriptor[] {
    return this.list(node, "[]config.YamlDescriptor", (item) => this.descriptor(item));
  }

  root(node: YNode): YamlRoot {
    const out: YamlRoot = { domain: "", descriptors: [] };
    this.struct(node, "config.YamlRoot", (name, value) => {
      if (name === "domain") out.domain = this.string(value);
      else if (name === "descriptors") out.descriptors = this.descriptors(value);
    });
    return out;
  }
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** A string a Struct can hold: protobuf strings are valid UTF-8, so a lone surrogate (from an escape) is refused. */
function metadataText(text: string): string {
  if (LONE_SURROGATE.test(text)) throw new MetadataFailure(`proto: invalid UTF-8 in string: ${JSON.stringify(text)}`);
  return text;
}

class MetadataFailure extends Error {}

/** One metadata value as a Struct value: scalars as themselves, lists and maps converted inside. */
function metadataValue(node: YNode): StructValue {
  switch (node.kind) {
    case "scalar":
      if (node.tag === "str") return metadataText(String(node.value));
      if (node.tag === "null") return null;
      if (typeof node.value === "number" && !Number.isFinite(node.value)) {
        throw new MetadataFailure(`proto: invalid number: ${node.text}`);
      }
      return node.value as number | boolean;
    case "seq":
      return node.items.map(metadataValue);
    case "map": {
      // fromEntries defines own properties, so a key such as `__proto__` stays a key; a repeated key's last value wins.
      const entries = node.pairs.map(({ key, value }): [string, StructValue] => {
        // yaml.v2 puts the text of a scalar key into a string key; a collection cannot be one.
        if (key.kind !== "scalar") throw new MetadataFailure(`proto: invalid key: ${goFormat(key)}`);
        return [metadataText(key.text), metadataValue(value)];
      });
      return Object.fromEntries(entries);
    }
  }
}

/** Phase one for one file: parse, validate keys and leaf types, decode into typed structs. */
export function fileToYaml(text: string, limits: ConfigLimits, budget: AliasBudget, strictUpstream = false): YamlRoot {
  let root = parseYaml(text, limits, budget);
  if (root.kind === "scalar" && root.tag === "null") root = { kind: "map", pairs: [], line: 1 };
  if (root.kind !== "map") {
    const shown = root.kind === "scalar" ? ` \`${root.text}\`` : "";
    const tag = root.kind === "scalar" ? root.tag : root.kind;
    throw new ConfigFailure(
      "error loading config file: yaml: unmarshal errors:\n" +
        `  line ${root.line}: cannot unmarshal !!${tag}${shown} into map[interface {}]interface {}`,
    );
  }
  validateYamlKeys(root, strictUpstream ? STRICT_UPSTREAM_KEYS : VALID_KEYS);
  const decoder = new Decoder();
  const decoded = decoder.root(root);
  if (decoder.errors.length > 0) {
    const lines = decoder.errors.map((error) => `\n  ${error}`).join("");
    throw new ConfigFailure(`error loading config file: yaml: unmarshal errors:${lines}`);
  }
  return decoded;
}
