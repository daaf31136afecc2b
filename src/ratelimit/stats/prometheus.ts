// Prometheus text exposition (format 0.0.4) of the aggregated statistics through a statsd_exporter mapping: the
// statsd names become metric families with labels, counters stay counters and timers become histograms (or
// summaries with sum and count only: quantiles cannot be merged across isolates). Pure: no Workers imports.
import { TIMER_BOUNDS_MS, addTimer, emptyTimer, type StatEntry, type TimerTotals } from "./buffer";
import { mapMetric, type MapperConfig } from "./mapper";
import type { Tags } from "./names";

export const PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

type Labels = [string, string][];

interface Series {
  labels: Labels;
  value: number;
  timer: TimerTotals;
}

interface Family {
  type: "counter" | "histogram" | "summary";
  help: string;
  buckets: number[];
  scale: number;
  series: Map<string, Series>;
}

const escapeLabelValue = (value: string) => value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
const escapeHelp = (text: string) => text.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");
const labelName = (name: string) => {
  const clean = name.replace(/[^a-zA-Z0-9_]/g, "_");
  return /^[0-9]/.test(clean) ? `_${clean}` : clean;
};

function formatLabels(labels: Labels, extra?: [string, string]): string {
  const all = extra ? [...labels, extra] : labels;
  if (all.length === 0) return "";
  return `{${all.map(([name, value]) => `${name}="${escapeLabelValue(value)}"`).join(",")}}`;
}

/** Numbers as Go's Prometheus client writes them; rounding hides binary noise such as 0.30000000000000004. */
function formatNumber(value: number): string {
  if (value === Infinity) return "+Inf";
  if (Number.isInteger(value)) return String(value);
  return String(Number(value.toPrecision(12)));
}

/** Observations at or below `bound` (in the metric's unit) from the stored millisecond buckets. */
function cumulativeCount(timer: TimerTotals, boundInUnit: number, scale: number): number {
  const boundMs = boundInUnit / scale;
  let count = 0;
  TIMER_BOUNDS_MS.forEach((stored, i) => {
    if (stored <= boundMs * (1 + 1e-9)) count += timer.buckets[i] ?? 0;
  });
  return count;
}

/**
 * Renders the statistics as Prometheus text. Several statsd names that map to the same metric and labels add up
 * (as statsd_exporter would count both); EXTRA_TAGS become labels unless the mapping sets the same label.
 */
export function renderPrometheus(entries: readonly StatEntry[], config: MapperConfig, extraTags: Tags): string {
  const families = new Map<string, Family>();
  for (const entry of entries) {
    const mapped = mapMetric(config, entry.name, entry.kind);
    if (mapped === undefined) continue;
    const type = entry.kind === "counter" ? "counter" : mapped.observerType;
    let family = families.get(mapped.name);
    if (!family) {
      family = {
        type,
        help: mapped.help ?? "Rate limit service statistic.",
        buckets: mapped.buckets,
        scale: mapped.scale,
        series: new Map(),
      };
      families.set(mapped.name, family);
    }
    // One family has one type; statsd_exporter refuses the later conflicting sample too.
    if (family.type !== type) continue;
    const labels: Labels = [...mapped.labels];
    for (const [key, value] of extraTags) {
      const name = labelName(key);
      if (!labels.some(([existing]) => existing === name)) labels.push([name, value]);
    }
    labels.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    const key = JSON.stringify(labels);
    let series = family.series.get(key);
    if (!series) family.series.set(key, (series = { labels, value: 0, timer: emptyTimer() }));
    if (entry.kind === "counter") series.value += entry.value;
    else addTimer(series.timer, entry.timer);
  }

  const lines: string[] = [];
  for (const name of [...families.keys()].sort()) {
    const family = families.get(name)!;
    lines.push(`# HELP ${name} ${escapeHelp(family.help)}`, `# TYPE ${name} ${family.type}`);
    const series = [...family.series.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, s]) => s);
    for (const { labels, value, timer } of series) {
      if (family.type === "counter") {
        lines.push(`${name}${formatLabels(labels)} ${formatNumber(value)}`);
        continue;
      }
      if (family.type === "histogram") {
        for (const bound of family.buckets) {
          lines.push(
            `${name}_bucket${formatLabels(labels, ["le", formatNumber(bound)])} ${cumulativeCount(timer, bound, family.scale)}`,
          );
        }
        lines.push(`${name}_bucket${formatLabels(labels, ["le", "+Inf"])} ${timer.count}`);
      }
      lines.push(`${name}_sum${formatLabels(labels)} ${formatNumber(timer.sumMs * family.scale)}`);
      lines.push(`${name}_count${formatLabels(labels)} ${timer.count}`);
    }
  }
  return lines.length === 0 ? "" : `${lines.join("\n")}\n`;
}
