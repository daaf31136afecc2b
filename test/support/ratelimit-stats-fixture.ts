// A configuration and a request sequence whose statistics are known exactly: near limit, over limit, a shadow rule,
// replaces, detailed_metric, value_to_metric, an unlimited rule and an unknown domain. Shared by the core statistics
// tests (through the pure core) and the Workers tests (through /json and gRPC), which must agree on every number.

export const STATS_CONFIG = (domain: string) => `
domain: ${domain}
descriptors:
  - key: near
    rate_limit:
      unit: hour
      requests_per_unit: 5
  - key: shadow
    shadow_mode: true
    rate_limit:
      unit: hour
      requests_per_unit: 2
  - key: old
    rate_limit:
      name: old_rule
      unit: hour
      requests_per_unit: 1
  - key: new
    rate_limit:
      replaces:
        - name: old_rule
      unit: hour
      requests_per_unit: 10
  - key: detailed
    detailed_metric: true
    rate_limit:
      unit: hour
      requests_per_unit: 10
  - key: route
    value_to_metric: true
    descriptors:
      - key: method
        rate_limit:
          unit: hour
          requests_per_unit: 10
  - key: free
    rate_limit:
      unlimited: true
  - key: client
    value: 10.0.0.1
    rate_limit:
      unit: hour
      requests_per_unit: 10
`;

type Pairs = [string, string][];

export interface StatsStep {
  domain: string;
  descriptors: Pairs[];
  /** The answer's overall code (OK or OVER_LIMIT). */
  code: "OK" | "OVER_LIMIT";
}

/** The requests, in order, with the overall code each must get. */
export function statsSequence(domain: string, unknownDomain: string): StatsStep[] {
  const steps: StatsStep[] = [];
  // Limit 5, near threshold floor(5 * 0.8) = 4: hits 1-4 within, hit 5 within and near, hits 6-7 over.
  for (let i = 1; i <= 7; i++)
    steps.push({ domain, descriptors: [[["near", "a"]]], code: i <= 5 ? "OK" : "OVER_LIMIT" });
  // Limit 2 in shadow mode, near threshold 1: hit 2 is near, hit 3 over but let through.
  for (let i = 1; i <= 3; i++) steps.push({ domain, descriptors: [[["shadow", "s"]]], code: "OK" });
  // old_rule is replaced by the rule of `new`: no statistics for it.
  steps.push({ domain, descriptors: [[["old", "r"]], [["new", "r"]]], code: "OK" });
  steps.push({ domain, descriptors: [[["detailed", "x"]]], code: "OK" });
  steps.push({ domain, descriptors: [[["detailed", "y"]]], code: "OK" });
  steps.push({
    domain,
    descriptors: [
      [
        ["route", "draw"],
        ["method", "GET"],
      ],
    ],
    code: "OK",
  });
  steps.push({ domain, descriptors: [[["free", "z"]]], code: "OK" });
  steps.push({ domain, descriptors: [[["client", "10.0.0.1"]]], code: "OK" });
  steps.push({ domain: unknownDomain, descriptors: [[["near", "a"]], [["x", "y"]]], code: "OK" });
  return steps;
}

/** Every per-rule and domain statistic the sequence produces, as /stats prints them (sorted by name). */
export function expectedRuleStats(domain: string, unknownDomain: string): Record<string, number> {
  const rule = (key: string, [total, over, near, within, shadow]: number[]) => ({
    [`ratelimit.service.rate_limit.${domain}.${key}.near_limit`]: near,
    [`ratelimit.service.rate_limit.${domain}.${key}.over_limit`]: over,
    [`ratelimit.service.rate_limit.${domain}.${key}.over_limit_with_local_cache`]: 0,
    [`ratelimit.service.rate_limit.${domain}.${key}.shadow_mode`]: shadow,
    [`ratelimit.service.rate_limit.${domain}.${key}.total_hits`]: total,
    [`ratelimit.service.rate_limit.${domain}.${key}.within_limit`]: within,
  });
  return {
    // The IPv4 value's dots become underscores, so the address stays one path component.
    ...rule("client_10_0_0_1", [1, 0, 0, 1, 0]),
    ...rule("detailed_x", [1, 0, 0, 1, 0]),
    ...rule("detailed_y", [1, 0, 0, 1, 0]),
    ...rule("near", [7, 2, 1, 5, 0]),
    ...rule("new", [1, 0, 0, 1, 0]),
    ...rule("route_draw.method", [1, 0, 0, 1, 0]),
    ...rule("shadow", [3, 1, 1, 2, 1]),
    [`ratelimit.service.rate_limit.${unknownDomain}.domain_not_found`]: 2,
  };
}
