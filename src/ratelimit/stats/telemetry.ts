// Statistics and traces of this isolate: what each call and decision records (numbers added to a buffer, no I/O),
// and when the buffer is flushed. Nothing is written per request: a call that leaves work buffered schedules one
// flush in its waitUntil, at STATS_FLUSH_INTERVAL after the previous flush (at once when that has already passed),
// so an isolate flushes at most once per interval and never keeps statistics longer than the interval. Flushes go
// to the RateLimitStats aggregate, which applies each batch exactly once, plus the push sink and the span exporter.
import { AsyncLocalStorage } from "node:async_hooks";
import type { Context, MiddlewareHandler } from "hono";
import type { Decision, ServiceError } from "../core/service";
import type { Result } from "../../shared/result";
import type { RateLimitRequest } from "../core/types";
import { perIsolate } from "../../shared/isolate";
import { logWarn } from "../../shared/log";
import { rateLimitSettings, type RateLimitSettings } from "../settings";
import { statsConfig, type StatsConfig } from "./config";
import { batchEntries, currentIsolateId, nextBatchId, partsOf, RetryQueue, StatsBuffer } from "./buffer";
import {
  CONFIG_LOAD_ERROR,
  CONFIG_LOAD_SUCCESS,
  responseTimeName,
  shouldRateLimitErrorName,
  totalRequestsName,
} from "./names";
import { deliverParts, exportSpans, pushFlush } from "./sinks";
import { parseTraceparent, randomHex, shouldSample, type FinishedSpan, type SpanContext } from "./tracing";

/** A waitUntil lives at most 30 s after the response; a flush timer never waits longer than this. */
export const MAX_FLUSH_WAIT_MS = 25_000;
/** Spans buffered beyond this are exported at the end of the call rather than at the interval. */
const SPAN_BATCH = 512;
const SPAN_NAME = "ShouldRateLimit Execution";

interface Telemetry {
  settings: RateLimitSettings;
  /** Set once a call has run with this env: what flushes need. */
  env?: Env;
  config?: StatsConfig;
  stats: StatsBuffer;
  samplesOption: { keepSamples: boolean };
  retries: RetryQueue;
  spans: FinishedSpan[];
  lastFlushAt: number;
  /** When the scheduled flush is due; undefined when none is scheduled. */
  timerDue?: number;
  warnedGrpc: boolean;
}

/** The telemetry of one settings object, that is of one env: built once per isolate. */
const telemetryOf = perIsolate("ratelimit telemetry", (settings: RateLimitSettings): Telemetry => {
  const samplesOption = { keepSamples: false };
  return {
    settings,
    stats: new StatsBuffer(samplesOption),
    samplesOption,
    retries: new RetryQueue(),
    spans: [],
    lastFlushAt: Date.now(),
    warnedGrpc: false,
  };
});

/** This env's telemetry, bound to the env for its flushes. Throws SettingsError for malformed statistics settings. */
function telemetryFor(env: Env): Telemetry & { env: Env; config: StatsConfig } {
  const telemetry = telemetryOf(rateLimitSettings(env));
  if (telemetry.env !== env) {
    telemetry.config = statsConfig(env);
    telemetry.env = env;
    telemetry.samplesOption.keepSamples = telemetry.config.push.kind === "statsd";
  }
  return telemetry as Telemetry & { env: Env; config: StatsConfig };
}

/** Counts a configuration load (success or failure) of this isolate. */
export function recordConfigLoad(settings: RateLimitSettings, ok: boolean): void {
  if (settings.DISABLE_STATS) return;
  telemetryOf(settings).stats.addCounter(ok ? CONFIG_LOAD_SUCCESS : CONFIG_LOAD_ERROR);
}

interface CallScope {
  parent?: SpanContext;
}

/** The transport's call around a decision (with tracing on), so that the decision's span joins the caller's trace. */
const callScope = new AsyncLocalStorage<CallScope>();

function startSpan(telemetry: Telemetry & { config: StatsConfig }, nowMs: number) {
  const tracing = telemetry.config.tracing;
  if (!tracing) return undefined;
  const parent = callScope.getStore()?.parent;
  const traceId = parent?.traceId ?? randomHex(16);
  if (!shouldSample(traceId, tracing.samplingRate, parent)) return undefined;
  return { traceId, spanId: randomHex(8), parentSpanId: parent?.spanId, startMs: nowMs };
}

type DecisionResult = Result<Decision, ServiceError>;

/**
 * Runs one decision and records what it contributes: its rules' statistics, or the error's counter, and its span.
 * A malformed statistics setting fails the decision with a SettingsError, like any other setting.
 */
export async function observeDecision(
  env: Env,
  request: RateLimitRequest,
  decide: () => Promise<DecisionResult>,
): Promise<DecisionResult> {
  const telemetry = telemetryFor(env);
  const span = startSpan(telemetry, Date.now());
  const finish = (extra: FinishedSpan["attributes"], error?: string) => {
    if (!span) return;
    const attributes = { domain: request.domain, descriptor_count: request.descriptors.length, ...extra };
    telemetry.spans.push({ ...span, name: SPAN_NAME, endMs: Date.now(), attributes, error });
  };
  let result: DecisionResult;
  try {
    result = await decide();
  } catch (error) {
    finish({}, error instanceof Error ? error.message : String(error));
    throw error;
  }
  if (telemetry.config.enabled) {
    if (result.ok) telemetry.stats.addRequestStats(request.domain, result.value.stats);
    else telemetry.stats.addCounter(shouldRateLimitErrorName(result.error.kind));
  }
  if (result.ok) finish({ overall_code: result.value.response.overallCode });
  else finish({}, result.error.kind === "store" ? "rate limit counter store error" : result.error.message);
  return result;
}

/** The part of an ExecutionContext a flush needs (Hono's and the runtime's types differ). */
interface WaitUntil {
  waitUntil(promise: Promise<unknown>): void;
}

function executionCtxOf(c: Context): WaitUntil | undefined {
  try {
    return c.executionCtx;
  } catch {
    return undefined;
  }
}

const hasWork = (t: Telemetry) => !t.stats.isEmpty || t.spans.length > 0 || t.retries.size > 0;

/** Sends everything buffered: the batch to the aggregate (with earlier failed parts), the push sink, the spans. */
async function flush(telemetry: Telemetry): Promise<void> {
  const { env, config } = telemetry;
  if (!env || !config) return;
  telemetry.lastFlushAt = Date.now();
  const batch = telemetry.stats.take(nextBatchId());
  const spans = telemetry.spans.splice(0);
  const parts = [...telemetry.retries.takeAll(), ...(batch ? partsOf(batch) : [])];
  const tracing = config.tracing;
  if (tracing?.grpcRequested && !telemetry.warnedGrpc) {
    telemetry.warnedGrpc = true;
    logWarn(
      "ratelimit: TRACING_EXPORTER_PROTOCOL=grpc is not possible from a Worker; spans are exported over OTLP/HTTP",
    );
  }
  const [failed] = await Promise.all([
    parts.length > 0 ? deliverParts(env, parts, config.sinkTimeoutMs) : [],
    batch ? pushFlush(config, batchEntries(batch)) : undefined,
    tracing && spans.length > 0
      ? exportSpans(
          tracing,
          {
            serviceName: tracing.serviceName,
            serviceNamespace: tracing.serviceNamespace,
            serviceInstanceId: tracing.serviceInstanceId || currentIsolateId(),
          },
          spans,
          config.sinkTimeoutMs,
        )
      : undefined,
  ]);
  if (failed.length > 0) {
    const dropped = telemetry.retries.dropped;
    telemetry.retries.push(failed);
    if (telemetry.retries.dropped > dropped) {
      logWarn("ratelimit: statistics dropped after repeated aggregate failures", {
        parts: telemetry.retries.dropped - dropped,
      });
    }
  }
}

/**
 * Makes sure buffered work gets flushed: at once (in this call's waitUntil) when the interval has passed since the
 * last flush or too many spans wait, else by one timer per isolate at the end of the interval. Without an
 * ExecutionContext (a direct app.fetch) nothing is scheduled; the next call with one flushes.
 */
export function scheduleFlush(env: Env, ctx: WaitUntil | undefined): void {
  if (!ctx) return;
  let telemetry: ReturnType<typeof telemetryFor>;
  try {
    telemetry = telemetryFor(env);
  } catch {
    return;
  }
  if (!hasWork(telemetry)) return;
  const now = Date.now();
  const sinceLast = now - telemetry.lastFlushAt;
  const interval = telemetry.config.flushIntervalMs;
  if (sinceLast >= interval || telemetry.spans.length >= SPAN_BATCH) {
    ctx.waitUntil(flush(telemetry));
    return;
  }
  // A timer whose waitUntil was cut short never fires; after its due time plus a grace, another one is set.
  if (telemetry.timerDue !== undefined && now < telemetry.timerDue + 5000) return;
  const wait = Math.min(interval - sinceLast, MAX_FLUSH_WAIT_MS);
  telemetry.timerDue = now + wait;
  ctx.waitUntil(
    new Promise((resolve) => setTimeout(resolve, wait)).then(() => {
      telemetry.timerDue = undefined;
      return flush(telemetry);
    }),
  );
}

/** Flushes this isolate's buffer now (GET /stats and /metrics do, so they show at least this isolate's latest). */
export async function flushNow(env: Env): Promise<void> {
  const telemetry = telemetryFor(env);
  if (hasWork(telemetry)) await flush(telemetry);
}

/**
 * Middleware of a ShouldRateLimit transport (/json, Connect and gRPC-Web): counts the call and its response time
 * under `ratelimit_server.<method>.*`, carries the caller's traceparent to the decision's span, and schedules the
 * flush. When the statistics settings are malformed it stays out of the way: the decision reports them.
 */
export function shouldRateLimitCall(method: string): MiddlewareHandler<{ Bindings: Env }> {
  return async (c, next) => {
    let telemetry: ReturnType<typeof telemetryFor>;
    try {
      telemetry = telemetryFor(c.env);
    } catch {
      return next();
    }
    const started = Date.now();
    try {
      // The scope only carries the caller's span, so without tracing the call runs outside one.
      if (telemetry.config.tracing)
        await callScope.run({ parent: parseTraceparent(c.req.header("traceparent")) }, next);
      else await next();
    } finally {
      if (telemetry.config.enabled) {
        telemetry.stats.addCounter(totalRequestsName(method));
        telemetry.stats.addTiming(responseTimeName(method), Date.now() - started);
      }
      scheduleFlush(c.env, executionCtxOf(c));
    }
  };
}

/** Schedules the flush of what a non-decision route recorded (configuration loads of the admin routes). */
export function flushAfter(c: Context<{ Bindings: Env }>): void {
  scheduleFlush(c.env, executionCtxOf(c));
}
