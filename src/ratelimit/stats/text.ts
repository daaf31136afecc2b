// The /stats page and the log sink's record: every statistic with its value, named as the plain statsd sink names
// it (EXTRA_TAGS as `.__k=v`). Pure: no Workers imports (tested in plain Node).
import type { StatEntry } from "./buffer";
import { nameWithTags, type Tags } from "./names";

/** A counter's value is its number; a timer's is `{"count": n, "sum_ms": total}` (JSON, as the reference's /stats). */
function valueOf(entry: StatEntry): number | { count: number; sum_ms: number } {
  if (entry.kind === "counter") return entry.value;
  return { count: entry.timer.count, sum_ms: Math.round(entry.timer.sumMs * 1000) / 1000 };
}

/** `name: value`, one statistic per line, sorted by name. */
export function statsText(entries: readonly StatEntry[], extraTags: Tags): string {
  return entries.map((entry) => `${nameWithTags(entry.name, extraTags)}: ${JSON.stringify(valueOf(entry))}\n`).join("");
}

/** The same statistics as one object, for the log sink (USE_METRICSD=false). */
export function statsRecord(
  entries: readonly StatEntry[],
  extraTags: Tags,
): Record<string, ReturnType<typeof valueOf>> {
  return Object.fromEntries(entries.map((entry) => [nameWithTags(entry.name, extraTags), valueOf(entry)]));
}
