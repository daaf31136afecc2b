// The per-isolate statistics buffer and the batches it flushes. Recording a request only adds numbers to maps
// (no name is built on the hot path); a flush swaps the buffer out as one batch with an id, so the aggregate can
// apply every batch exactly once even when a flush is retried. Pure: no Workers imports (tested in plain Node).
import type { RequestStats } from "../core/stats";
import {
  DOMAIN_NOT_FOUND_OVERFLOW,
  domainNotFoundName,
  GLOBAL_SHADOW_MODE,
  isDomainNotFoundName,
  MAX_RULE_STATS_PER_DOMAIN,
  MAX_UNKNOWN_DOMAIN_STATS,
  RULE_STATS,
  ruleStatName,
  ruleStatsOverflowKey,
  type RuleCounts,
} from "./names";

let isolateId: string | undefined;
/** Batch numbers of this isolate, shared by every buffer it flushes (the Worker's and the counter objects'). */
let batchSeq = 0;

/** This isolate's id; random ids cannot be drawn at the top level of a Worker, so it is drawn on first use. */
export const currentIsolateId = (): string => (isolateId ??= crypto.randomUUID());

/** The id of this isolate's next batch: the aggregate tells batches apart by it and applies each one once. */
export const nextBatchId = (): string => `${currentIsolateId()}-${++batchSeq}`;

/**
 * Upper bounds (milliseconds) of the response-time histogram kept everywhere (isolates and aggregate). They include
 * the Prometheus default buckets (5 ms to 10 s), so the default mapping's histogram is exact; a custom mapping's
 * bucket is counted up to the largest of these bounds not above it.
 */
export const TIMER_BOUNDS_MS = [
  0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 25000, 60000,
];

/** A timer's observations: count, sum and the count per TIMER_BOUNDS_MS bucket (not cumulative; last is +Inf). */
export interface TimerTotals {
  count: number;
  sumMs: number;
  buckets: number[];
}

/** Statistics of one aggregate instance, or of several merged. */
export interface StatsTotals {
  counters: Record<string, number>;
  /** Rule key (`domain.key_value...`) to its counters, indexed like RULE_STATS. */
  rules: Record<string, RuleCounts>;
  timers: Record<string, TimerTotals>;
}

/** What one isolate flushes at once. */
export interface StatsBatch {
  id: string;
  counters: Record<string, number>;
  timers: Record<string, TimerTotals>;
  /** Domain to rule key to counters. */
  domains: Record<string, Record<string, RuleCounts>>;
  /** Timer samples in milliseconds, kept only for statsd pushes (which send every sample). */
  samples: Record<string, number[]>;
}

/** The part of a batch one aggregate instance applies: the service instance, or one domain's instance. */
export interface AggregatePart {
  /** "service", or "domain:<domain>". */
  target: string;
  id: string;
  counters: Record<string, number>;
  timers: Record<string, TimerTotals>;
  rules: Record<string, RuleCounts>;
  /** Domains with rule statistics, recorded by the service instance so that readers find their instances. */
  domains: string[];
}

export const SERVICE_TARGET = "service";
export const domainTarget = (domain: string): string => `domain:${domain}`;

export const emptyTimer = (): TimerTotals => ({
  count: 0,
  sumMs: 0,
  buckets: new Array(TIMER_BOUNDS_MS.length + 1).fill(0),
});
export const emptyTotals = (): StatsTotals => ({ counters: {}, rules: {}, timers: {} });

function bucketOf(ms: number): number {
  let i = 0;
  while (i < TIMER_BOUNDS_MS.length && ms > TIMER_BOUNDS_MS[i]) i++;
  return i;
}

export function addTimer(target: TimerTotals, source: TimerTotals): void {
  target.count += source.count;
  target.sumMs += source.sumMs;
  source.buckets.forEach((n, i) => (target.buckets[i] = (target.buckets[i] ?? 0) + n));
}

export function addRuleCounts(target: RuleCounts, source: RuleCounts): void {
  for (let i = 0; i < RULE_STATS.length; i++) target[i] = (target[i] ?? 0) + (source[i] ?? 0);
}

/** Adds `source` into `target` (rules with the same key, e.g. from two instances, are summed). */
export function mergeTotals(target: StatsTotals, source: StatsTotals): StatsTotals {
  for (const [name, value] of Object.entries(source.counters))
    target.counters[name] = (target.counters[name] ?? 0) + value;
  for (const [key, counts] of Object.entries(source.rules))
    addRuleCounts((target.rules[key] ??= new Array(RULE_STATS.length).fill(0)), counts);
  for (const [name, timer] of Object.entries(source.timers)) addTimer((target.timers[name] ??= emptyTimer()), timer);
  return target;
}

interface BufferedTimer extends TimerTotals {
  samples: number[];
}

export interface StatsBufferOptions {
  /** Keep timer samples for statsd pushes. */
  keepSamples: boolean;
  /** At most this many samples per timer per flush; the totals stay exact beyond it. */
  maxSamples?: number;
}

/** One isolate's statistics since its last flush. */
export class StatsBuffer {
  private counters = new Map<string, number>();
  private domains = new Map<string, Map<string, RuleCounts>>();
  private timers = new Map<string, BufferedTimer>();
  /** Unknown domains with a domain_not_found counter of their own in this buffer. */
  private unknownDomains = 0;
  private readonly maxSamples: number;

  constructor(private readonly options: StatsBufferOptions) {
    this.maxSamples = options.maxSamples ?? 10_000;
  }

  get isEmpty(): boolean {
    return this.counters.size === 0 && this.domains.size === 0 && this.timers.size === 0;
  }

  addCounter(name: string, amount = 1): void {
    this.counters.set(name, (this.counters.get(name) ?? 0) + amount);
  }

  /** Adds what one decision contributes: its rules' counters, unknown-domain descriptors, a global shadow override. */
  addRequestStats(domain: string, stats: RequestStats): void {
    if (stats.rules.length > 0) {
      let rules = this.domains.get(domain);
      if (!rules) this.domains.set(domain, (rules = new Map()));
      for (const rule of stats.rules) {
        const key =
          rules.has(rule.key) || rules.size < MAX_RULE_STATS_PER_DOMAIN ? rule.key : ruleStatsOverflowKey(domain);
        let counts = rules.get(key);
        if (!counts) rules.set(key, (counts = [0, 0, 0, 0, 0, 0]));
        counts[0] += rule.totalHits;
        counts[1] += rule.overLimit;
        counts[2] += rule.nearLimit;
        counts[3] += rule.withinLimit;
        counts[4] += rule.shadowMode;
        counts[5] += rule.overLimitWithLocalCache;
      }
    }
    if (stats.domainNotFound > 0) this.addDomainNotFound(domain, stats.domainNotFound);
    if (stats.globalShadowMode > 0) this.addCounter(GLOBAL_SHADOW_MODE, stats.globalShadowMode);
  }

  /** Counts under the domain's own name for the first MAX_UNKNOWN_DOMAIN_STATS domains, then under the overflow. */
  private addDomainNotFound(domain: string, amount: number): void {
    const name = domainNotFoundName(domain);
    if (this.counters.has(name)) this.addCounter(name, amount);
    else if (this.unknownDomains < MAX_UNKNOWN_DOMAIN_STATS) {
      this.unknownDomains++;
      this.addCounter(name, amount);
    } else this.addCounter(DOMAIN_NOT_FOUND_OVERFLOW, amount);
  }

  addTiming(name: string, ms: number): void {
    let timer = this.timers.get(name);
    if (!timer) this.timers.set(name, (timer = { ...emptyTimer(), samples: [] }));
    timer.count++;
    timer.sumMs += ms;
    timer.buckets[bucketOf(ms)]++;
    if (this.options.keepSamples && timer.samples.length < this.maxSamples) timer.samples.push(ms);
  }

  /** Empties the buffer into a batch with this id; undefined when there is nothing to flush. */
  take(id: string): StatsBatch | undefined {
    if (this.isEmpty) return undefined;
    const batch: StatsBatch = {
      id,
      counters: Object.fromEntries(this.counters),
      timers: {},
      domains: {},
      samples: {},
    };
    for (const [name, { samples, ...totals }] of this.timers) {
      batch.timers[name] = totals;
      if (samples.length > 0) batch.samples[name] = samples;
    }
    for (const [domain, rules] of this.domains) batch.domains[domain] = Object.fromEntries(rules);
    this.counters = new Map();
    this.domains = new Map();
    this.timers = new Map();
    this.unknownDomains = 0;
    return batch;
  }
}

/**
 * A part's counters as the aggregate may store them: a domain_not_found counter it holds already, or one of the first
 * to fill its room up to MAX_UNKNOWN_DOMAIN_STATS, keeps its name; the others add to DOMAIN_NOT_FOUND_OVERFLOW.
 * @param stored how many domain_not_found counters the aggregate holds.
 * @param isStored whether the aggregate holds this counter.
 */
export function boundDomainNotFound(
  counters: Record<string, number>,
  stored: number,
  isStored: (name: string) => boolean,
): Record<string, number> {
  const bounded: Record<string, number> = {};
  let room = MAX_UNKNOWN_DOMAIN_STATS - stored;
  for (const [name, value] of Object.entries(counters)) {
    let target = name;
    if (isDomainNotFoundName(name) && !isStored(name)) {
      if (room > 0) room--;
      else target = DOMAIN_NOT_FOUND_OVERFLOW;
    }
    bounded[target] = (bounded[target] ?? 0) + value;
  }
  return bounded;
}

/**
 * A domain part's rules as the aggregate may store them: a key it holds already, or one of the first to fill its room
 * up to MAX_RULE_STATS_PER_DOMAIN, keeps its name; the others add to the domain's ruleStatsOverflowKey.
 * @param stored how many rule keys the aggregate holds, its overflow not counted.
 * @param isStored whether the aggregate holds this key.
 */
export function boundRules(
  rules: Record<string, RuleCounts>,
  overflow: string,
  stored: number,
  isStored: (key: string) => boolean,
): Record<string, RuleCounts> {
  const bounded: Record<string, RuleCounts> = {};
  let room = MAX_RULE_STATS_PER_DOMAIN - stored;
  for (const [key, counts] of Object.entries(rules)) {
    let target = key;
    if (key !== overflow && !isStored(key)) {
      if (room > 0) room--;
      else target = overflow;
    }
    addRuleCounts((bounded[target] ??= new Array(RULE_STATS.length).fill(0)), counts);
  }
  return bounded;
}

/** Splits a batch into the parts each aggregate instance applies (all with the batch's id). */
export function partsOf(batch: StatsBatch): AggregatePart[] {
  const domains = Object.keys(batch.domains);
  const parts: AggregatePart[] = [
    { target: SERVICE_TARGET, id: batch.id, counters: batch.counters, timers: batch.timers, rules: {}, domains },
  ];
  for (const domain of domains) {
    parts.push({
      target: domainTarget(domain),
      id: batch.id,
      counters: {},
      timers: {},
      rules: batch.domains[domain],
      domains: [],
    });
  }
  return parts;
}

/**
 * Parts whose delivery failed, kept to be sent again with the same id (the aggregate ignores an id it has already
 * applied, so a retry after a lost answer counts nothing twice). Bounded: the oldest are dropped past `limit`.
 */
export class RetryQueue {
  private parts: AggregatePart[] = [];
  dropped = 0;

  constructor(private readonly limit = 1000) {}

  get size(): number {
    return this.parts.length;
  }

  push(parts: AggregatePart[]): void {
    this.parts.push(...parts);
    const excess = this.parts.length - this.limit;
    if (excess > 0) {
      this.parts.splice(0, excess);
      this.dropped += excess;
    }
  }

  takeAll(): AggregatePart[] {
    return this.parts.splice(0);
  }
}

/** One statistic with its value, named as statsd receives it (before tags). */
export type StatEntry =
  | { name: string; kind: "counter"; value: number }
  | { name: string; kind: "timer"; timer: TimerTotals; samples?: number[] };

/** Every statistic of a snapshot, sorted by name; a rule that was ever hit lists all its counters, zeros included. */
export function snapshotEntries(totals: StatsTotals): StatEntry[] {
  const entries: StatEntry[] = [];
  for (const [name, value] of Object.entries(totals.counters)) entries.push({ name, kind: "counter", value });
  for (const [key, counts] of Object.entries(totals.rules)) {
    RULE_STATS.forEach((stat, i) =>
      entries.push({ name: ruleStatName(key, stat), kind: "counter", value: counts[i] ?? 0 }),
    );
  }
  for (const [name, timer] of Object.entries(totals.timers)) entries.push({ name, kind: "timer", timer });
  return entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** The changes one batch carries, sorted by name: counters that moved, and timers with their samples. */
export function batchEntries(batch: StatsBatch): StatEntry[] {
  const totals: StatsTotals = { counters: batch.counters, rules: {}, timers: batch.timers };
  for (const rules of Object.values(batch.domains)) mergeTotals(totals, { counters: {}, rules, timers: {} });
  return snapshotEntries(totals)
    .filter((entry) => entry.kind === "timer" || entry.value !== 0)
    .map((entry) => (entry.kind === "timer" ? { ...entry, samples: batch.samples[entry.name] } : entry));
}
