// The strongly consistent aggregate of the rate limit service's statistics: one instance for the service-level
// statistics (and the list of domains that have rule statistics), one per domain for its rules' counters. Storage
// and RPC only; isolates buffer and flush to it (src/ratelimit/stats/).
import { DurableObject } from "cloudflare:workers";
import {
  isDomainNotFoundName,
  MAX_RULE_STATS_PER_DOMAIN,
  RULE_STAT_PREFIX,
  RULE_STATS,
  ruleStatsOverflowKey,
  type RuleCounts,
} from "../src/ratelimit/stats/names";
import {
  type AggregatePart,
  boundDomainNotFound,
  boundRules,
  domainTarget,
  type StatsTotals,
  type TimerTotals,
} from "../src/ratelimit/stats/buffer";

// Isolates send batch parts, each carrying the id of the isolate's batch. A part is applied in one synchronous SQLite
// transaction (the object is single-threaded, so concurrent flushes from many isolates add up exactly), and its id
// is remembered for a day so that a part retried after a lost answer is not counted twice. The answer waits for the
// write to be durable (output gate), so an isolate drops a batch only once it is stored.

export interface AggregateSnapshot extends StatsTotals {
  /** Domains with rule statistics (kept by the service instance). */
  domains: string[];
}

/** The counters isDomainNotFoundName names, as a GLOB (`*` any text, `.` itself). */
const UNKNOWN_DOMAINS = `${RULE_STAT_PREFIX}*.domain_not_found`;

/** How long applied batch ids are remembered; a retry comes within minutes. */
const BATCH_MEMORY_MS = 24 * 3600 * 1000;

const RULE_COLUMNS = RULE_STATS.join(", ");
const RULE_UPSERT = `INSERT INTO rules (key, ${RULE_COLUMNS}) VALUES (?, ${RULE_STATS.map(() => "?").join(", ")})
  ON CONFLICT (key) DO UPDATE SET ${RULE_STATS.map((stat) => `${stat} = ${stat} + excluded.${stat}`).join(", ")}`;

export class RateLimitStats extends DurableObject<Env> {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.storage.sql.exec(`
      CREATE TABLE IF NOT EXISTS counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
      CREATE TABLE IF NOT EXISTS rules (key TEXT PRIMARY KEY, ${RULE_STATS.map((stat) => `${stat} INTEGER NOT NULL`).join(", ")});
      CREATE TABLE IF NOT EXISTS timers (name TEXT PRIMARY KEY, count INTEGER NOT NULL, sum_ms REAL NOT NULL, buckets TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS domains (name TEXT PRIMARY KEY);
      CREATE TABLE IF NOT EXISTS batches (id TEXT PRIMARY KEY, applied_at INTEGER NOT NULL);
      CREATE INDEX IF NOT EXISTS batches_applied_at ON batches (applied_at);
    `);
  }

  /** Adds one batch part atomically. Returns false when this id was applied before (a retry), changing nothing. */
  add(part: AggregatePart): boolean {
    const sql = this.ctx.storage.sql;
    return this.ctx.storage.transactionSync(() => {
      if (sql.exec("SELECT 1 FROM batches WHERE id = ?", part.id).toArray().length > 0) return false;
      const now = Date.now();
      sql.exec("INSERT INTO batches (id, applied_at) VALUES (?, ?)", part.id, now);
      sql.exec("DELETE FROM batches WHERE applied_at < ?", now - BATCH_MEMORY_MS);
      for (const [name, value] of Object.entries(this.storable(part.counters))) {
        sql.exec(
          "INSERT INTO counters (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = value + excluded.value",
          name,
          value,
        );
      }
      for (const [key, counts] of Object.entries(this.storableRules(part))) {
        sql.exec(RULE_UPSERT, key, ...RULE_STATS.map((_, i) => counts[i] ?? 0));
      }
      for (const [name, timer] of Object.entries(part.timers)) {
        const [row] = sql
          .exec<{ count: number; sum_ms: number; buckets: string }>(
            "SELECT count, sum_ms, buckets FROM timers WHERE name = ?",
            name,
          )
          .toArray();
        const stored: number[] = row ? JSON.parse(row.buckets) : [];
        const buckets = timer.buckets.map((n, i) => n + (stored[i] ?? 0));
        sql.exec(
          "INSERT OR REPLACE INTO timers (name, count, sum_ms, buckets) VALUES (?, ?, ?, ?)",
          name,
          (row?.count ?? 0) + timer.count,
          (row?.sum_ms ?? 0) + timer.sumMs,
          JSON.stringify(buckets),
        );
      }
      for (const domain of part.domains) sql.exec("INSERT OR IGNORE INTO domains (name) VALUES (?)", domain);
      return true;
    });
  }

  /** The part's counters with unknown domains past the stored ones' room folded into one name (buffer.ts). */
  private storable(counters: Record<string, number>): Record<string, number> {
    const sql = this.ctx.storage.sql;
    if (!Object.keys(counters).some(isDomainNotFoundName)) return counters;
    const { n } = sql
      .exec<{ n: number }>("SELECT COUNT(*) AS n FROM counters WHERE name GLOB ?", UNKNOWN_DOMAINS)
      .one();
    const isStored = (name: string) => sql.exec("SELECT 1 FROM counters WHERE name = ?", name).toArray().length > 0;
    return boundDomainNotFound(counters, n, isStored);
  }

  /** The part's rules with keys past the domain's room folded into its overflow key (buffer.ts). */
  private storableRules(part: AggregatePart): Record<string, RuleCounts> {
    const sql = this.ctx.storage.sql;
    const keys = Object.keys(part.rules).length;
    if (keys === 0) return part.rules;
    const overflow = ruleStatsOverflowKey(part.target.slice(domainTarget("").length));
    const { n } = sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM rules WHERE key != ?", overflow).one();
    if (n + keys <= MAX_RULE_STATS_PER_DOMAIN) return part.rules;
    const isStored = (key: string) => sql.exec("SELECT 1 FROM rules WHERE key = ?", key).toArray().length > 0;
    return boundRules(part.rules, overflow, n, isStored);
  }

  /** Everything this instance holds. */
  snapshot(): AggregateSnapshot {
    const sql = this.ctx.storage.sql;
    const counters: Record<string, number> = {};
    for (const row of sql.exec<{ name: string; value: number }>("SELECT name, value FROM counters"))
      counters[row.name] = row.value;
    const rules: Record<string, number[]> = {};
    for (const row of sql.exec<Record<string, string | number>>(`SELECT key, ${RULE_COLUMNS} FROM rules`)) {
      rules[String(row.key)] = RULE_STATS.map((stat) => Number(row[stat]));
    }
    const timers: Record<string, TimerTotals> = {};
    for (const row of sql.exec<{ name: string; count: number; sum_ms: number; buckets: string }>(
      "SELECT name, count, sum_ms, buckets FROM timers",
    )) {
      timers[row.name] = { count: row.count, sumMs: row.sum_ms, buckets: JSON.parse(row.buckets) };
    }
    const domains = sql
      .exec<{ name: string }>("SELECT name FROM domains ORDER BY name")
      .toArray()
      .map((row) => row.name);
    return { counters, rules, timers, domains };
  }
}
