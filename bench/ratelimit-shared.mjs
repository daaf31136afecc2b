// What every mode of `npm run bench:ratelimit` shares: the autocannon run, its settings, the bench configuration.
import autocannon from "autocannon";

export const DURATION = Number(process.env.BENCH_DURATION ?? 10);
export const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
export const KEYS = 1000;
export const TOKEN = "bench-admin-token";
export const CONFIG = `domain: bench
descriptors:
  - key: client
    rate_limit:
      unit: hour
      requests_per_unit: 4000000000
`;

/** Every test key's request body for the `client` rule (`key: limited` for the exactness check). */
export const keyBody = (value, key = "client") =>
  JSON.stringify({ domain: "bench", descriptors: [{ entries: [{ key, value }] }] });

export const fixed = (value, digits) => (value === undefined ? "n/a" : value.toFixed(digits));

export function run(title, options) {
  return new Promise((resolve, reject) => {
    autocannon({ connections: CONNECTIONS, duration: DURATION, ...options }, (error, result) => {
      if (error) return reject(error);
      const statuses = Object.entries(result.statusCodeStats ?? {}).filter(([code]) => !code.startsWith("2"));
      const bad = result.non2xx + result.errors + result.timeouts;
      const codes = statuses.map(([code, { count }]) => ` ${code}×${count}`).join("");
      resolve({
        title,
        rps: result.requests.average,
        p50: result.latency.p50,
        p99: result.latency.p99,
        bad,
        codes,
        decisions: result["2xx"],
      });
    });
  });
}
