// POST /json?explain=true: why each descriptor was answered as it was. For each one, the rule path that matched (or
// none, and why), its statistics key, each window's usage before and after the hits, the algorithm, shadow and quota
// mode, the rules it replaces or that replaced it, and whether the local over-limit cache answered. Built only when
// asked, from what the decision already computed: explaining costs no store call.
import type { MatchedLimit } from "./config-model";
import type { DescriptorCounts } from "./limiter";
import { statsKey } from "./stats";
import type { RateLimitRequest, StructObject, StructValue } from "./types";
import { windowsOf } from "./windows";

/** What the service knew of one descriptor when it decided. */
export interface ExplainInput {
  request: RateLimitRequest;
  domainKnown: boolean;
  /** Per descriptor, the limit lookup found (before replaces and unlimited were applied). */
  found: readonly (MatchedLimit | undefined)[];
  /** Names some matched rule replaces. */
  replaced: ReadonlySet<string>;
  counts: readonly (DescriptorCounts | undefined)[];
}

/** Why a descriptor has no rule. */
function noRuleReason(input: ExplainInput): string {
  if (!input.domainKnown) return `domain '${input.request.domain}' is not configured`;
  return "no rule matches these entries at this depth";
}

/** Each window of the limit with its usage (absent when the cache answered or nothing was counted). */
function windowsExplained(limit: MatchedLimit, counts: DescriptorCounts | undefined): StructValue[] {
  const key = statsKey(limit.metricKey);
  return windowsOf(limit).map((window, n) => {
    const out: StructObject = {
      statsKey: n === 0 ? key : `${key}.window_${n}`,
      unit: window.unit,
      unitMultiplier: window.unitMultiplier,
      requestsPerUnit: window.requestsPerUnit,
      algorithm: window.algorithm,
    };
    const usage = counts?.windows?.[n];
    if (usage !== undefined) Object.assign(out, { before: usage.before, after: usage.after });
    return out;
  });
}

/** One descriptor's explanation. */
function explainOne(input: ExplainInput, index: number): StructObject {
  const descriptor = input.request.descriptors[index];
  const out: StructObject = { index, entries: descriptor.entries.map((entry) => `${entry.key}=${entry.value}`) };
  const limit = input.found[index];
  if (limit === undefined) return { ...out, rule: null, reason: noRuleReason(input) };
  const counts = input.counts[index];
  Object.assign(out, {
    rule: limit.override ? null : (limit.path ?? null),
    ...(limit.override && { reason: "the request's own limit override applies" }),
    statsKey: statsKey(limit.metricKey),
    unlimited: limit.unlimited,
    shadowMode: limit.shadowMode,
    quotaMode: limit.quotaMode,
    replaces: [...limit.replaces],
    replaced: limit.name !== "" && input.replaced.has(limit.name),
    localCache: counts?.localCache ?? false,
  });
  if (limit.name !== "") out.name = limit.name;
  if (!limit.unlimited) out.windows = windowsExplained(limit, counts);
  return out;
}

/** The `explain` list of a decision: one entry per descriptor, in request order. */
export function explainDecision(input: ExplainInput): StructObject[] {
  return input.request.descriptors.map((_, index) => explainOne(input, index));
}
