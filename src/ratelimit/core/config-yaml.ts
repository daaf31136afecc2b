// Phase one of loading a rate limit configuration: reads one YAML file (config-yaml-parse.ts), checks its keys
// against the reference's allow-list and its leaves' types, and decodes it (config-yaml-decode.ts) into the typed
// structs that config.ts builds the descriptor tree from.
import { ConfigFailure } from "./config-model";
import { Decoder, type YamlRoot } from "./config-yaml-decode";
import { goFormat, parseYaml, type AliasBudget, type YNode } from "./config-yaml-parse";
import type { ConfigLimits } from "./limits";

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
/**
 * This project's keys beyond the reference: the algorithm of a rule, its window multiplier, a bucket's size, whether
 * its quota may be lent to isolates in shares, and a descriptor's further windows.
 */
const OWN_KEYS = ["algorithm", "unit_multiplier", "burst", "lease", "additional_limits"];
const VALID_KEYS = new Set([...UPSTREAM_KEYS, ...OWN_KEYS]);
/** With strict upstream checking, this project's keys are unknown, as they are to the reference. */
const STRICT_UPSTREAM_KEYS = new Set(UPSTREAM_KEYS);

/** Integer-valued keys of our own: a float there is refused by name (when decoding) instead of as "error checking config". */
const OWN_INTEGER_KEYS = new Set(["unit_multiplier", "burst"]);

/** Checks every key against the allow-list and every leaf's type, before any typed decoding. */
function validateYamlKeys(map: Extract<YNode, { kind: "map" }>, valid: Set<string>): void {
  for (const { key, value } of map.pairs) {
    // A `!!binary` key is a string to yaml.v2, as any other.
    if (key.kind !== "scalar" || (key.tag !== "str" && key.tag !== "binary")) {
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
