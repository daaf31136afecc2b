// Rules of a rate limit configuration that several suites share, as YAML lines to place under `descriptors:`, and
// the metadata such rules merge into.

/** An unlimited rule and a limit of zero a day: the two answers every decision suite checks without counting. */
export const UNLIMITED_AND_BLOCKED_RULES = `  - key: unlimited
    rate_limit:
      unlimited: true
  - key: blocked
    rate_limit:
      unit: day
      requests_per_unit: 0`;

/** A rule's metadata of every JSON kind but null and booleans, as YAML lines under a rule of `descriptors:`. */
export const GOLD_METADATA = `    metadata:
      tier: gold
      limits:
        daily: 100
      tags: [a, b]
      ratio: 0.5`;

/**
 * The dynamic metadata of a gold rule (tier, daily limit, tags) passing before a silver one (tier, daily and monthly
 * limits, ratio, null) as the service merges it: the first value of a key wins, nested maps merge.
 */
export const GOLD_BEFORE_SILVER_METADATA = {
  tier: "gold",
  limits: { daily: 100, monthly: 5 },
  tags: ["a", "b"],
  ratio: 0.5,
  nothing: null,
};
