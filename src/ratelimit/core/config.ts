// Rate limit configuration: loads and validates the YAML files (messages in the reference's words, prefixed with the
// file name; each file is read by config-yaml.ts, each rule built by config-rule.ts) into the descriptor tree. The
// face of the configuration: lookup (config-lookup.ts), the dump (config-dump.ts) and the model are exported here too.
import { buildAdditional, buildRule } from "./config-rule";
import { fileToYaml } from "./config-yaml";
import type { YamlDescriptor, YamlRoot } from "./config-yaml-decode";
import type { AliasBudget } from "./config-yaml-parse";
import {
  ConfigFailure,
  type ConfigError,
  type ConfigFile,
  type DescriptorLevel,
  type DescriptorNode,
  type LoadOptions,
  type RateLimitConfig,
} from "./config-model";
import { wildcardOf } from "./config-lookup";
import { DEFAULT_CONFIG_LIMITS, limitText, utf8Length } from "./limits";
import { err, ok, type Result } from "../../shared/result";

export type * from "./config-model";
export { getLimit, hasDomain, wildcardMatches, wildcardOf } from "./config-lookup";
export { dumpConfig, ruleCount } from "./config-dump";

function newLevel(): DescriptorLevel {
  return { children: new Map(), ordered: [], wildcards: [] };
}

/** Adds descriptors to a level depth-first in file order, checking each as the reference does. */
function loadDescriptors(
  level: DescriptorLevel,
  parentKey: string,
  descriptors: YamlDescriptor[],
  options: LoadOptions,
): void {
  for (const descriptor of descriptors) {
    if (descriptor.key === "") throw new ConfigFailure("descriptor has empty key");
    const composite = descriptor.value === "" ? descriptor.key : `${descriptor.key}_${descriptor.value}`;
    const fullKey = parentKey + composite;
    if (level.children.has(composite)) {
      throw new ConfigFailure(`duplicate descriptor composite key '${fullKey}'`);
    }
    const rule = descriptor.rateLimit === undefined ? undefined : buildRule(descriptor.rateLimit, descriptor, fullKey);
    const wildcard = wildcardOf(composite);
    if (descriptor.shareThreshold && wildcard === undefined) {
      throw new ConfigFailure(
        "share_threshold can only be used with wildcard values (containing '*'), " + `but found key '${composite}'`,
      );
    }
    if (descriptor.metadata?.ok === false) throw new ConfigFailure(descriptor.metadata.error);
    if (rule !== undefined) rule.metadata = descriptor.metadata?.value;
    const additional = buildAdditional(descriptor.additionalLimits, rule, fullKey);
    if (rule !== undefined && additional !== undefined) {
      if (options.fixedWindowOnly !== undefined) {
        throw new ConfigFailure(
          `rule '${fullKey}' has additional_limits, which the counter store chosen by ` +
            `${options.fixedWindowOnly} cannot count atomically (one fixed_window per descriptor only)`,
        );
      }
      rule.additional = additional;
    }
    if (rule !== undefined && rule.algorithm !== "fixed_window" && options.fixedWindowOnly !== undefined) {
      throw new ConfigFailure(
        `rule '${fullKey}' uses algorithm ${rule.algorithm}, which the counter store chosen by ` +
          `${options.fixedWindowOnly} cannot count atomically (only fixed_window)`,
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
    loadDescriptors(node, `${fullKey}.`, descriptor.descriptors, options);
    level.children.set(composite, node);
    level.ordered.push(node);
    if (wildcard !== undefined) level.wildcards.push(wildcard);
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
      roots.push({ name: file.name, root: fileToYaml(file.text, limits, budget, options.strictUpstream) });
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
      loadDescriptors(level, `${root.domain}.`, root.descriptors, options);
    }
    return ok({ domains, tree });
  } catch (e) {
    if (!(e instanceof ConfigFailure)) throw e;
    return err({ file: current, message: `${current}: ${e.message}` });
  }
}
