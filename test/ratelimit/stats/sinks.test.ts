// The statistics sinks, called as the flush and the statistics pages call them, with the time bound they are given
// (StatsConfig.sinkTimeoutMs) shortened: an aggregate or a trace exporter that never answers is given up at that bound,
// logged (a flush) or named (a read), and nothing waits longer; a trace exporter's answer is never read.
import { afterEach, beforeEach, describe, expect, it, vi, type MockInstance } from "vitest";
import type { AggregatePart } from "../../../src/ratelimit/stats/buffer";
import type { StatsConfig } from "../../../src/ratelimit/stats/config";
import { AggregateUnanswered, deliverParts, exportSpans, readAggregate } from "../../../src/ratelimit/stats/sinks";
import type { FinishedSpan } from "../../../src/ratelimit/stats/tracing";
import { configureLogging } from "../../../src/shared/log";

/** The bound these sinks are given, well under SINK_TIMEOUT_MS so that the tests need not wait it. */
const BOUND_MS = 200;
const never = () => new Promise<never>(() => {});
const TRACES_URL = "http://collector.test:4318/v1/traces";

const tracing: NonNullable<StatsConfig["tracing"]> = {
  url: TRACES_URL,
  headers: {},
  samplingRate: 1,
  serviceName: "ratelimit",
  serviceNamespace: "test",
  serviceInstanceId: "sinks-test",
  grpcRequested: false,
};
const resource = { serviceName: "ratelimit", serviceNamespace: "test", serviceInstanceId: "sinks-test" };
const span: FinishedSpan = {
  traceId: "0af7651916cd43dd8448eb211c80319c",
  spanId: "b7ad6b7169203331",
  name: "ShouldRateLimit",
  startMs: 1000,
  endMs: 1002,
  attributes: {},
};

const part = (target: string): AggregatePart => ({
  target,
  id: `sinks-${target}`,
  counters: { "test.sinks.calls": 1 },
  timers: {},
  rules: {},
  domains: [],
});

/** A statistics aggregate binding whose every call answers `answer()`. */
const aggregate = (answer: () => Promise<never>) =>
  ({ RATE_LIMIT_STATS: { getByName: () => ({ add: answer, snapshot: answer }) } }) as unknown as Env;

let warnings: MockInstance<typeof console.warn>;
beforeEach(() => {
  configureLogging({ LOG_FORMAT: "json" });
  warnings = vi.spyOn(console, "warn").mockImplementation(() => {});
});

afterEach(() => {
  vi.restoreAllMocks();
});

/** The warnings logged so far, as JSON objects without their time. */
const warned = () =>
  warnings.mock.calls.map(([line]) => {
    const { "@timestamp": _, ...fields } = JSON.parse(String(line)) as Record<string, unknown>;
    return fields;
  });

/**
 * The trace exporter's endpoint answered by `answer`, given the request's signal; any other outbound fetch fails the
 * test. Returns the signals it was given.
 */
function collector(answer: (signal: AbortSignal | undefined) => Promise<Response>) {
  const signals: (AbortSignal | undefined)[] = [];
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const url = new Request(input, init).url;
    if (url !== TRACES_URL) throw new Error(`unexpected fetch to ${url}`);
    signals.push(init?.signal ?? undefined);
    return answer(init?.signal ?? undefined);
  });
  return signals;
}

/** A rejection with the signal's reason once it fires, as the runtime's fetch ends a request; without one, never. */
const whenAborted = (signal: AbortSignal | undefined) =>
  new Promise<never>((_, reject) => signal?.addEventListener("abort", () => reject(signal.reason)));

/** A body of 16 MiB (64 KiB a read) that counts its reads, none before the first, and records a cancel. */
function hugeBody() {
  const watched = { pulls: 0, cancelled: false };
  const source = {
    pull(controller: ReadableStreamDefaultController<Uint8Array>) {
      watched.pulls += 1;
      controller.enqueue(new Uint8Array(65_536));
      if (watched.pulls === 256) controller.close();
    },
    cancel() {
      watched.cancelled = true;
    },
  };
  return { body: new ReadableStream<Uint8Array>(source, { highWaterMark: 0 }), watched };
}

/** Runs `work`, checking that it ends at the bound: not before it, and not much after. */
async function endsAtBound<T>(work: () => Promise<T>): Promise<T> {
  const started = performance.now();
  const result = await work();
  const elapsed = performance.now() - started;
  expect(elapsed).toBeGreaterThanOrEqual(BOUND_MS - 5);
  expect(elapsed).toBeLessThan(BOUND_MS + 1000);
  return result;
}

describe("the statistics aggregate", () => {
  it("is given up at the bound it is given when a flush's delivery is never answered, and the parts kept", async () => {
    const parts = [part("service"), part("domain:hung")];
    expect(await endsAtBound(() => deliverParts(aggregate(never), parts, BOUND_MS))).toEqual(parts);
    const failed = (target: string) => ({
      level: "warning",
      "@message": "ratelimit: statistics flush to the aggregate failed, will retry",
      target,
      error: `statistics flush timed out after ${BOUND_MS} ms`,
    });
    expect(warned()).toEqual([failed("service"), failed("domain:hung")]);
  });

  it("is named as unanswered at the bound it is given when a read is never answered", async () => {
    const failure = await endsAtBound(() =>
      readAggregate(aggregate(never), BOUND_MS).then(
        () => expect.unreachable("it answered"),
        (error: unknown) => error,
      ),
    );
    expect(failure).toBeInstanceOf(AggregateUnanswered);
    expect(failure).toMatchObject({
      target: "service",
      message: `the statistics aggregate (Durable Object RATE_LIMIT_STATS "service") did not answer within ${BOUND_MS} ms`,
    });
    expect(warned()).toEqual([]);
  });
});

describe("the trace exporter", () => {
  it("is asked with a signal that ends the request at the bound it is given when it never answers", async () => {
    const signals = collector(whenAborted);
    await endsAtBound(() => exportSpans(tracing, resource, [span], BOUND_MS));
    expect(signals).toHaveLength(1);
    expect(signals[0]?.aborted).toBe(true);
    expect(signals[0]?.reason).toMatchObject({ name: "TimeoutError" });
    expect(warned()).toEqual([
      {
        level: "warning",
        "@message": "ratelimit: span export failed",
        url: TRACES_URL,
        spans: 1,
        error: `span export timed out after ${BOUND_MS} ms`,
      },
    ]);
  });

  it.each([
    [200, []],
    [503, [{ level: "warning", "@message": "ratelimit: span export refused", url: TRACES_URL, status: 503, spans: 1 }]],
  ])("releases an answer %i unread, however large, and logs only a refusal", async (status, warnings) => {
    const { body, watched } = hugeBody();
    collector(async () => new Response(body, { status }));
    const started = performance.now();
    await exportSpans(tracing, resource, [span], BOUND_MS);
    expect(performance.now() - started).toBeLessThan(BOUND_MS);
    expect(watched).toEqual({ pulls: 0, cancelled: true });
    expect(warned()).toEqual(warnings);
  });
});
