// Statistics and traces whose destination fails or never answers: the statistics aggregate (a Durable Object), statsd
// and the OTLP trace exporter. A decision records into its isolate's buffer only, and the flush runs in the call's
// waitUntil, after the answer: the decision neither fails nor waits; what cannot be delivered is logged.
import { afterEach, beforeEach, describe, expect, it, vi, type MockInstance } from "vitest";
import { SINK_TIMEOUT_MS, statsConfig } from "../../../src/ratelimit/stats/config";
import { service, simpleConfig } from "./telemetry-fixtures";

/** Every call flushes at its end, so that each decision's waitUntil meets the failing destination (decideTwice). */
const EAGER = { STATS_FLUSH_INTERVAL: "0" };
const TRACING = { TRACING_ENABLED: "true", OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector.test:4318/" };
const never = () => new Promise<never>(() => {});

/** A statistics aggregate binding whose every call answers `answer()`. */
const aggregate = (answer: () => Promise<never>) => ({
  RATE_LIMIT_STATS: { getByName: () => ({ add: answer, snapshot: answer }) },
});

let warnings: MockInstance<typeof console.warn>;
beforeEach(() => {
  vi.spyOn(console, "log").mockImplementation(() => {});
  warnings = vi.spyOn(console, "warn").mockImplementation(() => {});
});

afterEach(() => {
  vi.restoreAllMocks();
});

/** The trace exporter's endpoint answered by `answer`, given the request's signal; any other fetch fails the test. */
function collector(answer: (signal: AbortSignal | undefined) => Promise<Response>) {
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const url = new Request(input, init).url;
    if (url !== "http://collector.test:4318/v1/traces") throw new Error(`unexpected fetch to ${url}`);
    return answer(init?.signal ?? undefined);
  });
}

/**
 * Two decisions on a fresh domain: each answers 200 with its exact statuses, in well under a second (the flush is
 * not awaited). Returns the Worker, to settle its waitUntils.
 */
async function decideTwice(vars: Record<string, unknown>, domain: string) {
  const s = service({ ...EAGER, ...vars, LOG_FORMAT: "json" });
  expect((await s.put({ [`${domain}.yaml`]: simpleConfig(domain, 100) })).status).toBe(200);
  for (const remaining of [99, 98]) {
    const started = performance.now();
    const response = await s.fetch("/json", {
      method: "POST",
      body: JSON.stringify({ domain, descriptors: [{ entries: [{ key: "k", value: "v" }] }] }),
    });
    expect(performance.now() - started).toBeLessThan(1000);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      overallCode: "OK",
      statuses: [
        {
          code: "OK",
          currentLimit: { requestsPerUnit: 100, unit: "HOUR" },
          limitRemaining: remaining,
          durationUntilReset: expect.stringMatching(/^\d+s$/),
        },
      ],
    });
  }
  return s;
}

/** The warnings logged so far, as JSON objects. */
const warned = (): Record<string, unknown>[] => warnings.mock.calls.map(([line]) => JSON.parse(String(line)));

describe("a decision whose statistics cannot be delivered", () => {
  it("is flushed with 5 s for each sink by default", () => {
    expect(statsConfig(service().env).sinkTimeoutMs).toBe(5000);
    expect(SINK_TIMEOUT_MS).toBe(5000);
  });

  it("answers when the statistics aggregate fails, and the flush logs it and keeps the parts to retry", async () => {
    const s = await decideTwice(
      aggregate(() => Promise.reject(new Error("Durable Object is overloaded"))),
      "agg-down",
    );
    await s.settle();
    // Each flush tries again the parts the earlier ones could not deliver: 1 part, then 1 + 2, then 3 + 2.
    const targets = warned().map(({ target }) => target);
    expect(targets.sort()).toEqual([...Array(3).fill("domain:agg-down"), ...Array(6).fill("service")]);
    for (const warning of warned()) {
      expect(warning).toMatchObject({
        "@message": "ratelimit: statistics flush to the aggregate failed, will retry",
        error: "Durable Object is overloaded",
      });
    }
  });

  it("answers when statsd refuses the connection, and the flush logs it", async () => {
    const s = await decideTwice(
      { USE_METRICSD: "true", METRICSD_HOST: "127.0.0.1", METRICSD_PORT: "1" },
      "statsd-down",
    );
    await s.settle();
    const pushes = warned().filter((warning) => warning["@message"] === "ratelimit: statsd push failed");
    // Each flush pushes once, not again: the configuration load's line, then each decision's four.
    const refused = "proxy request failed, cannot connect to the specified address";
    expect(pushes.map(({ host, port, lines, error }) => ({ host, port, lines, error }))).toEqual(
      [1, 4, 4].map((lines) => ({ host: "127.0.0.1", port: 1, lines, error: refused })),
    );
  });

  it("answers when the trace exporter fails", async () => {
    collector(() => Promise.reject(new Error("Network connection lost.")));
    const s = await decideTwice(TRACING, "otlp-down");
    await s.settle();
    expect(warned().filter((warning) => warning["@message"] === "ratelimit: span export failed")).toEqual([
      expect.objectContaining({
        url: "http://collector.test:4318/v1/traces",
        spans: 1,
        error: "Network connection lost.",
      }),
      expect.objectContaining({
        url: "http://collector.test:4318/v1/traces",
        spans: 1,
        error: "Network connection lost.",
      }),
    ]);
  });

  // Each sink given its bound alone, shortened: test/ratelimit/stats/sinks.test.ts.
  it(
    "answers when the aggregate and the trace exporter never answer; the flush gives up at SINK_TIMEOUT_MS",
    { timeout: 30_000 },
    async () => {
      // Silent until the request's signal ends it, as the runtime's fetch is.
      collector((signal) => new Promise((_, reject) => signal?.addEventListener("abort", () => reject(signal.reason))));
      const s = await decideTwice({ ...aggregate(never), ...TRACING }, "all-hung");
      const started = performance.now();
      await s.settle();
      const elapsed = performance.now() - started;
      expect(elapsed).toBeGreaterThanOrEqual(SINK_TIMEOUT_MS - 1000);
      expect(elapsed).toBeLessThan(SINK_TIMEOUT_MS + 3000);
      const flushes = warned().filter(({ target }) => target !== undefined);
      // The configuration load's part, then each decision's two: each kept to be sent again with the next flush.
      expect(flushes.map(({ target }) => target).sort()).toEqual([
        ...Array(2).fill("domain:all-hung"),
        ...Array(3).fill("service"),
      ]);
      for (const warning of flushes) {
        expect(warning).toMatchObject({
          "@message": "ratelimit: statistics flush to the aggregate failed, will retry",
          error: `statistics flush timed out after ${SINK_TIMEOUT_MS} ms`,
        });
      }
      const timedOut = `span export timed out after ${SINK_TIMEOUT_MS} ms`;
      expect(warned().filter((warning) => warning["@message"] === "ratelimit: span export failed")).toEqual([
        expect.objectContaining({ spans: 1, error: timedOut }),
        expect.objectContaining({ spans: 1, error: timedOut }),
      ]);
      expect(warned()).toHaveLength(flushes.length + 2);
    },
  );
});
