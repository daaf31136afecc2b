// Live charts of the rate limit service, from /stats read every few seconds: decisions and over-limit answers a
// second overall and per rule, and the rules closest to their limits. Each chart has its numbers as text too.
import { useEffect, useRef, useState } from "preact/hooks";
import uPlot from "uplot";
import { rateLimitApi } from "../api";
import { failureOf, html } from "../ui";

const PREFIX = "ratelimit.service.rate_limit.";
const REFRESH_MS = 2000;
const KEPT = 150;

/** Per rule (`<domain>.<path>`), its counters from a /stats text. */
export function ruleCounters(text: string): Map<string, Record<string, number>> {
  const rules = new Map<string, Record<string, number>>();
  for (const line of text.split("\n")) {
    const match = /^(.+)\.(total_hits|over_limit|near_limit): (\d+)$/.exec(line);
    if (!match || !match[1].startsWith(PREFIX)) continue;
    const rule = match[1].slice(PREFIX.length);
    rules.set(rule, { ...rules.get(rule), [match[2]]: Number(match[3]) });
  }
  return rules;
}

type Sample = { at: number; rules: Map<string, Record<string, number>> };
type Point = {
  at: number;
  total: number;
  over: number;
  perRule: Record<string, number>;
  nearShare: Record<string, number>;
};

function pointBetween(before: Sample, after: Sample): Point {
  const seconds = Math.max((after.at - before.at) / 1000, 0.001);
  const delta = (rule: string, stat: string) =>
    (after.rules.get(rule)?.[stat] ?? 0) - (before.rules.get(rule)?.[stat] ?? 0);
  const point: Point = { at: after.at / 1000, total: 0, over: 0, perRule: {}, nearShare: {} };
  for (const rule of after.rules.keys()) {
    const hits = delta(rule, "total_hits");
    point.total += hits / seconds;
    point.over += delta(rule, "over_limit") / seconds;
    point.perRule[rule] = hits / seconds;
    if (hits > 0) point.nearShare[rule] = (delta(rule, "near_limit") + delta(rule, "over_limit")) / hits;
  }
  return point;
}

/** "decisions 3.5, over the limit 0.0": each series' value, one decimal. */
const describe = (series: string[], value: (index: number) => number) =>
  series.map((label, index) => `${label} ${value(index).toFixed(1)}`).join(", ");

function Chart({ title, series, data }: { title: string; series: string[]; data: number[][] }) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const shape = series.join("\n");
  useEffect(() => {
    const options = {
      width: 640,
      height: 220,
      series: [
        {},
        ...series.map((label, index) => ({
          label,
          stroke: ["#1f5fa8", "#b3261e", "#2e7d32", "#7b3fa0", "#a15c00"][index % 5],
          width: 2,
        })),
      ],
      axes: [{}, { label: "a second" }],
    };
    plot.current = new uPlot(options, data as uPlot.AlignedData, box.current!);
    return () => plot.current?.destroy();
  }, [shape]);
  useEffect(() => plot.current?.setData(data as uPlot.AlignedData), [data]);
  const last = data[0].length - 1;
  return html`<figure class="chart" data-points=${data[0].length}>
    <figcaption>${title}</figcaption>
    <div ref=${box} aria-hidden="true"></div>
    <p class="chart-text">
      ${
        last < 0
          ? "No reading yet: the first comes a few seconds after the page opens."
          : `${data[0].length} readings. Last: ${describe(series, (index) => data[index + 1][last])}. Highest: ${describe(series, (index) => Math.max(...data[index + 1]))}.`
      }
    </p>
  </figure>`;
}

export function RateLimitCharts() {
  const [points, setPoints] = useState<Point[]>([]);
  const [problem, setProblem] = useState("");
  useEffect(() => {
    let previous: Sample | undefined;
    let live = true;
    const read = async () => {
      const answer = await rateLimitApi("GET", "/stats", { text: true });
      if (!live) return;
      if (!answer.ok) return setProblem(`The statistics could not be read: ${failureOf(answer)}`);
      setProblem("");
      const sample = { at: Date.now(), rules: ruleCounters(answer.text) };
      if (previous) setPoints((kept) => [...kept, pointBetween(previous!, sample)].slice(-KEPT));
      previous = sample;
    };
    read();
    const timer = setInterval(read, REFRESH_MS);
    return () => ((live = false), clearInterval(timer));
  }, []);
  const times = points.map((point) => point.at);
  const rules = [...new Set(points.flatMap((point) => Object.keys(point.perRule)))].sort().slice(0, 5);
  const latest = points.at(-1);
  const closest = Object.entries(latest?.nearShare ?? {})
    .sort((a, b) => b[1] - a[1])
    .slice(0, 5);
  return html`<section aria-label="Live charts">
    <h2>Live charts</h2>
    <p>Read from the service's statistics every ${REFRESH_MS / 1000} seconds while this page is open.</p>
    ${problem && html`<p class="problem" role="alert">${problem}</p>`}
    <${Chart}
      title="Decisions a second, overall"
      series=${["decisions", "over the limit"]}
      data=${[times, points.map((p) => p.total), points.map((p) => p.over)]}
    />
    <${Chart}
      title="Decisions a second, per rule"
      series=${rules}
      data=${[times, ...rules.map((rule) => points.map((p) => p.perRule[rule] ?? 0))]}
    />
    <h3>Rules closest to their limits</h3>
    <p>Share of the last few seconds' requests that were near or over the rule's limit.</p>
    ${
      closest.length === 0
        ? html`<p>No request in the last few seconds.</p>`
        : html`<ol class="closest">
            ${closest.map(([rule, share]) => html`<li>${rule}: ${Math.round(share * 100)}%</li>`)}
          </ol>`
    }
  </section>`;
}
