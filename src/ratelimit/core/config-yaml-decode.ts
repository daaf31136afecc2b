// Typed decoding of one file's nodes: mirrors yaml.v2 into the reference's structs (YamlRoot, YamlDescriptor,
// YamlRateLimit), with its unmarshal error wording, for config.ts to build the descriptor tree from.
import { goFormat, type YNode } from "./config-yaml-parse";
import { err, ok, type Result } from "../../shared/result";
import { MetadataFailure, metadataStruct } from "./config-metadata";
import type { StructObject } from "./types";

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
  /** `lease: true`: the Durable Object store may answer the rule from leased shares (fixed window only). */
  lease: boolean;
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
  /** `additional_limits`: windows beside `rate_limit`, each of its shape; undefined when absent. */
  additionalLimits?: YamlRateLimit[];
  descriptors: YamlDescriptor[];
  shadowMode: boolean;
  detailedMetric: boolean;
  valueToMetric: boolean;
  shareThreshold: boolean;
  quotaMode: boolean;
  /** The converted metadata, or why it cannot be a Struct (refused when the descriptor is built, as upstream does). */
  metadata?: Result<StructObject, string>;
}

export interface YamlRoot {
  domain: string;
  descriptors: YamlDescriptor[];
}

const MAX_UINT32 = 4294967295;

export class Decoder {
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
      // yaml.v2 puts the source text of an int or bool into a string field, and a `!!binary` scalar's bytes.
      if (node.tag === "binary") return String(node.value);
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

  /**
   * @param earlier the same descriptor's `rate_limit` already decoded (a repeated or merged key): yaml.v2 decodes into
   * the struct that pointer holds, so the fields this node leaves out keep their earlier values.
   */
  rateLimit(node: YNode, earlier?: YamlRateLimit): YamlRateLimit | undefined {
    const out: YamlRateLimit = earlier
      ? { ...earlier }
      : { requestsPerUnit: 0, unit: "", unlimited: false, name: "", replaces: [], algorithm: "", lease: false };
    const present = this.struct(node, "config.YamlRateLimit", (name, value) => {
      if (name === "requests_per_unit") out.requestsPerUnit = this.uint32(value);
      else if (name === "unit") out.unit = this.string(value);
      else if (name === "unlimited") out.unlimited = this.bool(value);
      else if (name === "name") out.name = this.string(value);
      else if (name === "algorithm") out.algorithm = this.string(value);
      else if (name === "unit_multiplier") out.unitMultiplier = this.ownNumber(value);
      else if (name === "burst") out.burst = this.ownNumber(value);
      else if (name === "lease") out.lease = this.bool(value);
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
      else if (name === "rate_limit") out.rateLimit = this.rateLimit(value, out.rateLimit);
      else if (name === "additional_limits")
        out.additionalLimits = this.list(value, "[]config.YamlRateLimit", (item) => this.rateLimit(item));
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
      return ok(metadataStruct(node));
    } catch (e) {
      if (!(e instanceof MetadataFailure)) throw e;
      return err(`error parsing metadata: ${e.message}`);
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
