// Where a flush goes, on Workers: the RateLimitStats aggregate (Durable Objects), statsd over TCP with
// cloudflare:sockets, the log, and OTLP/HTTP for spans; and reading the aggregate back for /stats and /metrics.
// Every sink reports failure by its return value or a log line; none throws into the flush.
import { connect } from "cloudflare:sockets";
import type { AggregateSnapshot } from "../../../durable-objects/rate-limit-stats";
import { fetchWithin, type NoAnswer } from "../../shared/http/bounded-fetch";
import { logInfo, logWarn } from "../../shared/log";
import type { StatsConfig } from "./config";
import {
  domainTarget,
  emptyTotals,
  mergeTotals,
  SERVICE_TARGET,
  type AggregatePart,
  type StatEntry,
  type StatsTotals,
} from "./buffer";
import { statsdLines } from "./statsd";
import { statsRecord } from "./text";
import { otlpTraceRequest, type FinishedSpan, type TraceResource } from "./tracing";

/**
 * `work`, or a failure after `timeoutMs` (StatsConfig.sinkTimeoutMs): a flush never holds its waitUntil much longer,
 * and a read of the aggregate (/stats, /metrics) never holds its caller much longer per instance. `what` names the
 * work in the error, or makes the error.
 */
function withTimeout<T>(work: Promise<T>, what: string | (() => Error), timeoutMs: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = () => (typeof what === "string" ? new Error(`${what} timed out after ${timeoutMs} ms`) : what());
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(timedOut()), timeoutMs);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/** An instance of the statistics aggregate that gave no answer to a read within the sinks' bound (`timeoutMs`). */
export class AggregateUnanswered extends Error {
  override name = "AggregateUnanswered";
  constructor(
    readonly target: string,
    timeoutMs: number,
  ) {
    super(
      `the statistics aggregate (Durable Object RATE_LIMIT_STATS "${target}") did not answer within ${timeoutMs} ms`,
    );
  }
}

const errorText = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** Sends each part to its aggregate instance, all at once. Returns the parts that were not confirmed. */
export async function deliverParts(
  env: Env,
  parts: readonly AggregatePart[],
  timeoutMs: number,
): Promise<AggregatePart[]> {
  const failed: AggregatePart[] = [];
  await Promise.all(
    parts.map(async (part) => {
      try {
        // A part given up here may still be applied; sent again, it is not counted twice (its batch id).
        await withTimeout(env.RATE_LIMIT_STATS.getByName(part.target).add(part), "statistics flush", timeoutMs);
      } catch (error) {
        failed.push(part);
        logWarn("ratelimit: statistics flush to the aggregate failed, will retry", {
          target: part.target,
          error: errorText(error),
        });
      }
    }),
  );
  return failed;
}

/** One instance's snapshot; AggregateUnanswered when it gives none within `timeoutMs`. */
const snapshotOf = (env: Env, target: string, timeoutMs: number): Promise<AggregateSnapshot> =>
  withTimeout(
    env.RATE_LIMIT_STATS.getByName(target).snapshot(),
    () => new AggregateUnanswered(target, timeoutMs),
    timeoutMs,
  );

/**
 * The service instance's statistics merged with every domain instance's. Each read is bounded by `timeoutMs`
 * (StatsConfig.sinkTimeoutMs): an instance that never answers is AggregateUnanswered, naming it.
 */
export async function readAggregate(env: Env, timeoutMs: number): Promise<StatsTotals> {
  const service = await snapshotOf(env, SERVICE_TARGET, timeoutMs);
  const domains = await Promise.all(service.domains.map((domain) => snapshotOf(env, domainTarget(domain), timeoutMs)));
  const totals = mergeTotals(emptyTotals(), service);
  for (const snapshot of domains) mergeTotals(totals, snapshot);
  return totals;
}

/** Writes the lines to statsd over one TCP connection (Workers have no UDP). */
async function sendStatsd(host: string, port: number, lines: string[]): Promise<void> {
  const socket = connect({ hostname: host, port });
  try {
    await socket.opened;
    const writer = socket.writable.getWriter();
    await writer.write(new TextEncoder().encode(`${lines.join("\n")}\n`));
    await writer.close();
  } finally {
    await socket.close().catch(() => {});
  }
}

/** Pushes one flush's changes: statsd lines, or a log line (the reference's logging sink), or nothing. */
export async function pushFlush(config: StatsConfig, entries: StatEntry[]): Promise<void> {
  if (entries.length === 0) return;
  const push = config.push;
  if (push.kind === "log") {
    logInfo("ratelimit: statistics", { stats: statsRecord(entries, config.extraTags) });
    return;
  }
  if (push.kind !== "statsd") return;
  const lines = statsdLines(entries, { tagged: push.tagged, mogrifiers: push.mogrifiers, extraTags: config.extraTags });
  if (lines.length === 0) return;
  try {
    await withTimeout(sendStatsd(push.host, push.port, lines), "statsd push", config.sinkTimeoutMs);
  } catch (error) {
    logWarn("ratelimit: statsd push failed", {
      host: push.host,
      port: push.port,
      lines: lines.length,
      error: errorText(error),
    });
  }
}

/**
 * Exports finished spans in one OTLP/HTTP JSON request, ended (not only given up) after `timeoutMs`. The answer's body
 * is released unread: the flush uses only its status, so one without end or of any size costs it nothing.
 */
export async function exportSpans(
  tracing: NonNullable<StatsConfig["tracing"]>,
  resource: TraceResource,
  spans: FinishedSpan[],
  timeoutMs: number,
): Promise<void> {
  const init = {
    method: "POST",
    headers: { ...tracing.headers, "content-type": "application/json" },
    body: JSON.stringify(otlpTraceRequest(resource, spans)),
  };
  const unanswered = (failure: NoAnswer) =>
    new Error(failure.timedOut ? `span export timed out after ${timeoutMs} ms` : failure.detail);
  try {
    const response = await fetchWithin(fetch, tracing.url, init, timeoutMs, unanswered);
    await response.body?.cancel().catch(() => {});
    if (!response.ok)
      logWarn("ratelimit: span export refused", { url: tracing.url, status: response.status, spans: spans.length });
  } catch (error) {
    logWarn("ratelimit: span export failed", { url: tracing.url, spans: spans.length, error: errorText(error) });
  }
}
