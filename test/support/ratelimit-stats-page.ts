// Reading the rate limit service's /stats page (`name: value` lines) in Workers tests and integration suites alike.

/** `/stats` lines into name → number (timers → their count). */
export function parseStats(text: string): Record<string, number> {
  const result: Record<string, number> = {};
  for (const line of text.split("\n").filter(Boolean)) {
    const separator = line.lastIndexOf(": ");
    const value = JSON.parse(line.slice(separator + 2));
    result[line.slice(0, separator)] = typeof value === "number" ? value : value.count;
  }
  return result;
}

/** How much a statistic grew between two parsed pages. */
export const statDelta = (before: Record<string, number>, after: Record<string, number>, name: string) =>
  (after[name] ?? 0) - (before[name] ?? 0);
