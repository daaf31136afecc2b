// Rate limit configuration: loads and validates the YAML files (messages in the reference's words, prefixed
// with the file name), finds the rule that applies to a request descriptor, and dumps the loaded rules.

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
import { DEFAULT_CONFIG_LIMITS, limitText, tooDeep, utf8Length, type ConfigLimits } from "./limits";
import { err, ok, type Result } from "./result";
import { composeMetricKey, type MatchedLevel, type MatchKind, overrideMetricKey } from "./stats";
import type { RateLimitDescriptor, Unit } from "./types";
import { isKnownUnit, parseUnit } from "./units";

// ─── Public model ───────────────────────────────────────────────────────────────────────────────

/** A YAML `rate_limit` block after validation. */
export interface ConfiguredRule {
  requestsPerUnit: number;
  /** UNKNOWN only for unlimited rules. */
  unit: Unit;
  unlimited: boolean;
  shadowMode: boolean;
  /** `rate_limit.name`; empty when unnamed. */
  name: string;
  replaces: readonly string[];
  detailedMetric: boolean;
  /** Config path of the rule, e.g. `domain.key_value.subkey`: the default metric key and the dump key. */
  fullKey: string;
}

/** One YAML descriptor after validation. */
export interface DescriptorNode extends DescriptorLevel {
  key: string;
  value: string;
  /** `key`, or `key_value` when a value is configured: the lookup key at its level. */
  composite: string;
  rule?: ConfiguredRule;
  shadowMode: boolean;
  detailedMetric: boolean;
  valueToMetric: boolean;
  shareThreshold: boolean;
}

/** What a domain and a descriptor have in common: children to match the next request entry against. */
export interface DescriptorLevel {
  children: Map<string, DescriptorNode>;
  /** Children in config order (the dump and merged files keep it). */
  ordered: DescriptorNode[];
  /** Composite keys of children ending in `*`, in config order: the first that matches wins. */
  wildcards: string[];
}

export interface RateLimitConfig {
  /** Domain names in the order they were first loaded. */
  readonly domains: readonly string[];
  readonly tree: ReadonlyMap<string, DescriptorLevel>;
}

export interface ConfigError {
  /** `<file name>: <message>`, as the reference words it. */
  message: string;
  file: string;
}

export interface ConfigFile {
  name: string;
  text: string;
}

export interface LoadOptions {
  /** MERGE_DOMAIN_CONFIG: several files may declare one domain (their top-level descriptors are merged). */
  mergeDomainConfig: boolean;
  /** File size, nesting and alias limits; the settings' defaults when not given. */
  limits?: ConfigLimits;
}

/** The limit that applies to one request descriptor. */
export interface MatchedLimit {
  requestsPerUnit: number;
  unit: Unit;
  /** Rule name, copied into the response's currentLimit; empty when unnamed. */
  name: string;
  unlimited: boolean;
  shadowMode: boolean;
  replaces: readonly string[];
  /** Unsanitised metric key (detailed_metric, value_to_metric and share_threshold applied). */
  metricKey: string;
  /** Per request entry, the share_threshold pattern to use in the cache key instead of the runtime value. */
  sharedValues?: (string | undefined)[];
  /** True when the limit came from the request's own override rather than the config. */
  override: boolean;
}

// ─── YAML reading ───────────────────────────────────────────────────────────────────────────────

/** Keys allowed anywhere in a file (the reference's allow-list is not positional). */
const VALID_KEYS = new Set([
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
]);

type ScalarTag = "str" | "int" | "bool" | "null" | "float";

/** A parsed YAML node reduced to what validation needs: shape, resolved type, source text and line. */
type YNode =
  | { kind: "map"; pairs: { key: YNode; value: YNode }[]; line: number }
  | { kind: "seq"; items: YNode[]; line: number }
  | { kind: "scalar"; tag: ScalarTag; value: string | number | boolean | null; text: string; line: number };

/** Thrown inside this module only, to unwind a recursive walk; always converted to a ConfigError. */
class ConfigFailure extends Error {}

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

interface AliasBudget {
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
function validateYamlKeys(map: Extract<YNode, { kind: "map" }>): void {
  for (const { key, value } of map.pairs) {
    if (key.kind !== "scalar" || key.tag !== "str") {
      throw new ConfigFailure(`config error, key is not of type string: ${goFormat(key)}`);
    }
    if (!VALID_KEYS.has(String(key.value))) {
      throw new ConfigFailure(`config error, unknown key '${String(key.value)}'`);
    }
    if (value.kind === "seq") {
      for (const element of value.items) {
        if (element.kind !== "map") {
          throw new ConfigFailure(`config error, yaml file contains list of type other than map: ${goFormat(element)}`);
        }
        validateYamlKeys(element);
      }
    } else if (value.kind === "map") {
      validateYamlKeys(value);
    } else if (value.tag === "float") {
      throw new ConfigFailure("error checking config");
    }
  }
}

// ─── Typed decoding (mirrors yaml.v2 into the reference's structs, with its error wording) ──────

interface YamlRateLimit {
  requestsPerUnit: number;
  unit: string;
  unlimited: boolean;
  name: string;
  replaces: { name: string }[];
}

interface YamlDescriptor {
  key: string;
  value: string;
  rateLimit?: YamlRateLimit;
  descriptors: YamlDescriptor[];
  shadowMode: boolean;
  detailedMetric: boolean;
  valueToMetric: boolean;
  shareThreshold: boolean;
}

interface YamlRoot {
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
    const out: YamlRateLimit = { requestsPerUnit: 0, unit: "", unlimited: false, name: "", replaces: [] };
    const present = this.struct(node, "config.YamlRateLimit", (name, value) => {
      if (name === "requests_per_unit") out.requestsPerUnit = this.uint32(value);
      else if (name === "unit") out.unit = this.string(value);
      else if (name === "unlimited") out.unlimited = this.bool(value);
      else if (name === "name") out.name = this.string(value);
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
    });
    return present ? out : undefined;
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

/** Phase one for one file: parse, validate keys and leaf types, decode into typed structs. */
function fileToYaml(text: string, limits: ConfigLimits, budget: AliasBudget): YamlRoot {
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
  validateYamlKeys(root);
  const decoder = new Decoder();
  const decoded = decoder.root(root);
  if (decoder.errors.length > 0) {
    const lines = decoder.errors.map((error) => `\n  ${error}`).join("");
    throw new ConfigFailure(`error loading config file: yaml: unmarshal errors:${lines}`);
  }
  return decoded;
}

// ─── Building the tree ──────────────────────────────────────────────────────────────────────────

function newLevel(): DescriptorLevel {
  return { children: new Map(), ordered: [], wildcards: [] };
}

function buildRule(config: YamlRateLimit, descriptor: YamlDescriptor, fullKey: string): ConfiguredRule {
  const unit = parseUnit(config.unit);
  if (config.unlimited) {
    if (unit !== undefined) throw new ConfigFailure("should not specify rate limit unit when unlimited");
  } else if (unit === undefined) {
    throw new ConfigFailure(`invalid rate limit unit '${config.unit}'`);
  }
  for (const replaces of config.replaces) {
    if (replaces.name === "") throw new ConfigFailure("should not have an empty replaces entry");
    if (replaces.name === config.name) {
      throw new ConfigFailure("replaces should not contain name of same descriptor");
    }
  }
  return {
    requestsPerUnit: config.requestsPerUnit,
    unit: unit ?? "UNKNOWN",
    unlimited: config.unlimited,
    shadowMode: descriptor.shadowMode,
    name: config.name,
    replaces: config.replaces.map((replaces) => replaces.name),
    detailedMetric: descriptor.detailedMetric,
    fullKey,
  };
}

/** Adds descriptors to a level depth-first in file order, checking each as the reference does. */
function loadDescriptors(level: DescriptorLevel, parentKey: string, descriptors: YamlDescriptor[]): void {
  for (const descriptor of descriptors) {
    if (descriptor.key === "") throw new ConfigFailure("descriptor has empty key");
    const composite = descriptor.value === "" ? descriptor.key : `${descriptor.key}_${descriptor.value}`;
    const fullKey = parentKey + composite;
    if (level.children.has(composite)) {
      throw new ConfigFailure(`duplicate descriptor composite key '${fullKey}'`);
    }
    const rule = descriptor.rateLimit === undefined ? undefined : buildRule(descriptor.rateLimit, descriptor, fullKey);
    // Spec era: only a trailing `*` makes a wildcard, so sharing needs one.
    if (descriptor.shareThreshold && !composite.endsWith("*")) {
      throw new ConfigFailure(
        "share_threshold can only be used with wildcard values (ending with '*'), " + `but found key '${composite}'`,
      );
    }
    const node: DescriptorNode = {
      ...newLevel(),
      key: descriptor.key,
      value: descriptor.value,
      composite,
      rule,
      shadowMode: descriptor.shadowMode,
      detailedMetric: descriptor.detailedMetric,
      valueToMetric: descriptor.valueToMetric,
      shareThreshold: descriptor.shareThreshold,
    };
    loadDescriptors(node, `${fullKey}.`, descriptor.descriptors);
    level.children.set(composite, node);
    level.ordered.push(node);
    if (composite.endsWith("*")) level.wildcards.push(composite);
  }
}

/**
 * Loads a complete configuration from YAML files. All files are parsed and validated first, then built
 * in order; any error rejects the whole set, so the caller keeps its previous configuration. The work is bounded by
 * the limits: each file's size is checked before any is parsed, its nesting before it is composed, and alias
 * expansion against a budget shared by the set.
 * @returns the configuration, or the first error as `<file>: <message>`.
 */
export function loadConfig(files: ConfigFile[], options: LoadOptions): Result<RateLimitConfig, ConfigError> {
  const limits = options.limits ?? DEFAULT_CONFIG_LIMITS;
  let current = "";
  try {
    // Sizes first: no file is parsed while another is too large to be.
    for (const file of files) {
      current = file.name;
      if (utf8Length(file.text) > limits.fileBytes.max) {
        throw new ConfigFailure(`the file is larger than ${limitText(limits.fileBytes, " bytes")}`);
      }
    }
    const budget: AliasBudget = { left: limits.aliasNodes.max };
    const roots: { name: string; root: YamlRoot }[] = [];
    for (const file of files) {
      current = file.name;
      roots.push({ name: file.name, root: fileToYaml(file.text, limits, budget) });
    }
    const tree = new Map<string, DescriptorLevel>();
    const domains: string[] = [];
    for (const { name, root } of roots) {
      current = name;
      if (root.domain === "") throw new ConfigFailure("config file cannot have empty domain");
      let level = tree.get(root.domain);
      if (level !== undefined && !options.mergeDomainConfig) {
        throw new ConfigFailure(`duplicate domain '${root.domain}' in config file`);
      }
      if (level === undefined) {
        level = newLevel();
        tree.set(root.domain, level);
        domains.push(root.domain);
      }
      loadDescriptors(level, `${root.domain}.`, root.descriptors);
    }
    return ok({ domains, tree });
  } catch (e) {
    if (!(e instanceof ConfigFailure)) throw e;
    return err({ file: current, message: `${current}: ${e.message}` });
  }
}

// ─── Lookup ─────────────────────────────────────────────────────────────────────────────────────

export function hasDomain(config: RateLimitConfig, domain: string): boolean {
  return config.tree.has(domain);
}

/**
 * Finds the limit for one request descriptor.
 * - Unknown domain: none.
 * - A request-supplied override (with a known unit) applies as is, config matching is skipped.
 * - Otherwise the entries walk the tree one level each: `key_value`, then the first wildcard of the level
 *   whose prefix matches `key_value`, then `key` alone. A rule applies only at the last entry, so the
 *   request must be exactly as deep as the rule; an explicit `key_value` match never falls back to `key`.
 * An override with unit UNKNOWN is ignored here (it cannot name a window); the service refuses such
 * requests before calling this.
 */
export function getLimit(
  config: RateLimitConfig,
  domain: string,
  descriptor: RateLimitDescriptor,
): MatchedLimit | undefined {
  const root = config.tree.get(domain);
  if (root === undefined) return undefined;

  if (descriptor.limit !== undefined && isKnownUnit(descriptor.limit.unit)) {
    return {
      requestsPerUnit: descriptor.limit.requestsPerUnit,
      unit: descriptor.limit.unit,
      name: "",
      unlimited: false,
      shadowMode: false,
      replaces: [],
      metricKey: overrideMetricKey(domain, descriptor.entries),
      override: true,
    };
  }

  const entries = descriptor.entries;
  const levels: MatchedLevel[] = [];
  let level: DescriptorLevel = root;
  let found: ConfiguredRule | undefined;
  for (const [i, entry] of entries.entries()) {
    const finalKey = `${entry.key}_${entry.value}`;
    let via: MatchKind = "exact";
    let next = level.children.get(finalKey);
    if (next === undefined) {
      const wildcard = level.wildcards.find((pattern) => finalKey.startsWith(pattern.slice(0, -1)));
      if (wildcard !== undefined) {
        next = level.children.get(wildcard);
        via = "wildcard";
      }
    }
    if (next === undefined) {
      next = level.children.get(entry.key);
      via = "default";
    }
    if (next === undefined) break;

    let sharedPattern: string | undefined;
    if (via === "wildcard" && next.shareThreshold) {
      const keyPrefix = `${entry.key}_`;
      sharedPattern = next.composite.startsWith(keyPrefix) ? next.composite.slice(keyPrefix.length) : next.composite;
    }
    levels.push({
      key: entry.key,
      value: entry.value,
      composite: next.composite,
      via,
      valueToMetric: next.valueToMetric,
      sharedPattern,
    });
    if (next.rule !== undefined && i === entries.length - 1) found = next.rule;
    if (next.children.size === 0) break;
    level = next;
  }
  if (found === undefined) return undefined;

  const shared = levels.some((l) => l.sharedPattern !== undefined);
  return {
    requestsPerUnit: found.requestsPerUnit,
    unit: found.unit,
    name: found.name,
    unlimited: found.unlimited,
    shadowMode: found.shadowMode,
    replaces: found.replaces,
    metricKey: composeMetricKey(domain, levels, found.detailedMetric),
    sharedValues: shared ? levels.map((l) => l.sharedPattern) : undefined,
    override: false,
  };
}

// ─── Debug dump ─────────────────────────────────────────────────────────────────────────────────

function dumpLevel(level: DescriptorLevel, out: string[]): void {
  for (const node of level.ordered) {
    if (node.rule !== undefined) {
      const { fullKey, unit, requestsPerUnit, shadowMode } = node.rule;
      out.push(`${fullKey}: unit=${unit} requests_per_unit=${requestsPerUnit}, shadow_mode: ${shadowMode}\n`);
    }
    dumpLevel(node, out);
  }
}

/**
 * The /rlconfig text: one line per rule, `<fullKey>: unit=<UNIT> requests_per_unit=<N>, shadow_mode: <bool>`.
 * Domains are sorted and descriptors keep config order (parents before children), so the output is stable.
 */
export function dumpConfig(config: RateLimitConfig): string {
  const out: string[] = [];
  for (const domain of [...config.tree.keys()].sort()) dumpLevel(config.tree.get(domain)!, out);
  return out.join("");
}
