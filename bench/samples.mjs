// Order statistics of the benchmarks' samples: one definition of a percentile (nearest rank) for every script.

/**
 * The smallest sample with at least p % of the samples at or below it (nearest rank; p50 of an even count is the lower
 * middle).
 * @param {readonly number[]} samples @param {number} p 0 < p <= 100
 */
export function percentile(samples, p) {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

/** @param {readonly number[]} samples */
export const median = (samples) => percentile(samples, 50);

/** @param {readonly number[]} samples */
export const mean = (samples) => samples.reduce((sum, x) => sum + x, 0) / samples.length;
