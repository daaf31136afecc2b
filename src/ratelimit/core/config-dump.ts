// The /rlconfig dump of a loaded configuration: one line per rule, in the reference's words.
import type { ConfiguredRule, DescriptorLevel, RateLimitConfig, RuleWindow } from "./config-model";

function dumpLevel(level: DescriptorLevel, out: string[]): void {
  for (const node of level.ordered) {
    if (node.rule !== undefined) {
      const { fullKey, unit, requestsPerUnit, shadowMode, quotaMode } = node.rule;
      out.push(
        `${fullKey}: unit=${unit} requests_per_unit=${requestsPerUnit}, shadow_mode: ${shadowMode}, ` +
          `quota_mode: ${quotaMode}${algorithmText(node.rule)}${additionalText(node.rule)}\n`,
      );
    }
    dumpLevel(node, out);
  }
}

/** The dump's tail for the fields beyond the reference; empty for a plain fixed window, so such lines stay upstream's. */
function algorithmText({ algorithm, unitMultiplier, burst, requestsPerUnit, lease }: ConfiguredRule): string {
  let text = algorithm === "fixed_window" ? "" : `, algorithm: ${algorithm}`;
  if (unitMultiplier !== 1) text += `, unit_multiplier: ${unitMultiplier}`;
  if (algorithm === "token_bucket" && burst !== requestsPerUnit) text += `, burst: ${burst}`;
  if (lease) text += ", lease: true";
  return text;
}

/** The dump's tail for `additional_limits`: each window as `unit=<UNIT> requests_per_unit=<N>` plus its fields. */
function additionalText({ additional }: ConfiguredRule): string {
  if (additional === undefined) return "";
  const windowText = (window: RuleWindow) =>
    `unit=${window.unit} requests_per_unit=${window.requestsPerUnit}` +
    algorithmText({ ...window, burst: window.capacity, lease: false } as ConfiguredRule);
  return `, additional_limits: [${additional.map(windowText).join("; ")}]`;
}

/**
 * The /rlconfig text: one line per rule,
 * `<fullKey>: unit=<UNIT> requests_per_unit=<N>, shadow_mode: <bool>, quota_mode: <bool>` (plus the algorithm fields
 * when not the defaults).
 * Domains are sorted and descriptors keep config order (parents before children), so the output is stable.
 */
export function dumpConfig(config: RateLimitConfig): string {
  const out: string[] = [];
  for (const domain of [...config.tree.keys()].sort()) dumpLevel(config.tree.get(domain)!, out);
  return out.join("");
}

/** How many rules (descriptors with a `rate_limit`) a configuration holds, across its domains. */
export function ruleCount(config: RateLimitConfig): number {
  const count = (level: DescriptorLevel): number =>
    level.ordered.reduce((sum, node) => sum + (node.rule === undefined ? 0 : 1) + count(node), 0);
  return [...config.tree.values()].reduce((sum, level) => sum + count(level), 0);
}
