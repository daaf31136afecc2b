// Traces of decisions: W3C traceparent parsing, the sampling decision, finished spans and their OTLP/HTTP JSON
// export body (opentelemetry-proto's JSON mapping: hex ids, nanosecond strings). Pure: no Workers imports.
import { toHex } from "../../shared/bytes";
import { err, ok, type Result } from "../../shared/result";

export interface SpanContext {
  traceId: string;
  spanId: string;
  sampled: boolean;
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

/** The caller's span from a `traceparent` header (version 00 and later versions' prefix), or undefined. */
export function parseTraceparent(header: string | null | undefined): SpanContext | undefined {
  const match = TRACEPARENT.exec((header ?? "").trim().toLowerCase());
  if (!match) return undefined;
  const [, version, traceId, spanId, flags, rest] = match;
  if (version === "ff" || (version === "00" && rest !== undefined)) return undefined;
  if (/^0+$/.test(traceId) || /^0+$/.test(spanId)) return undefined;
  return { traceId, spanId, sampled: (parseInt(flags, 16) & 1) === 1 };
}

export function randomHex(bytes: number): string {
  return toHex(crypto.getRandomValues(new Uint8Array(bytes)));
}

/**
 * Parent-based sampling: a caller's traceparent decides for its trace; a new trace is sampled when the low 63 bits
 * of its id fall under rate × 2^63 (OpenTelemetry's TraceIdRatioBased), so every service sampling by ratio agrees.
 */
export function shouldSample(traceId: string, rate: number, parent: SpanContext | undefined): boolean {
  if (parent) return parent.sampled;
  if (rate <= 0) return false;
  if (rate >= 1) return true;
  const low = BigInt(`0x${traceId.slice(16)}`) >> 1n;
  return low < BigInt(Math.floor(rate * 2 ** 63));
}

export type AttributeValue = string | number | boolean;

export interface FinishedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  startMs: number;
  endMs: number;
  attributes: Record<string, AttributeValue>;
  /** Set when the decision failed. */
  error?: string;
}

export interface TraceResource {
  serviceName: string;
  serviceNamespace: string;
  serviceInstanceId: string;
}

function attribute(key: string, value: AttributeValue) {
  if (typeof value === "boolean") return { key, value: { boolValue: value } };
  if (typeof value === "number" && Number.isInteger(value)) return { key, value: { intValue: String(value) } };
  if (typeof value === "number") return { key, value: { doubleValue: value } };
  return { key, value: { stringValue: value } };
}

const nanos = (ms: number): string => (BigInt(Math.round(ms * 1000)) * 1000n).toString();

/** SPAN_KIND_SERVER: the decision answers a caller. */
const SPAN_KIND_SERVER = 2;
const STATUS_OK = 1;
const STATUS_ERROR = 2;

/** The body of `POST <endpoint>/v1/traces` (Content-Type application/json). */
export function otlpTraceRequest(resource: TraceResource, spans: readonly FinishedSpan[]) {
  const resourceAttributes = [attribute("service.name", resource.serviceName)];
  if (resource.serviceNamespace !== "")
    resourceAttributes.push(attribute("service.namespace", resource.serviceNamespace));
  resourceAttributes.push(attribute("service.instance.id", resource.serviceInstanceId));
  return {
    resourceSpans: [
      {
        resource: { attributes: resourceAttributes },
        scopeSpans: [
          {
            scope: { name: "ratelimit" },
            spans: spans.map((span) => ({
              traceId: span.traceId,
              spanId: span.spanId,
              ...(span.parentSpanId ? { parentSpanId: span.parentSpanId } : {}),
              name: span.name,
              kind: SPAN_KIND_SERVER,
              startTimeUnixNano: nanos(span.startMs),
              endTimeUnixNano: nanos(span.endMs),
              attributes: Object.entries(span.attributes).map(([key, value]) => attribute(key, value)),
              status: span.error === undefined ? { code: STATUS_OK } : { code: STATUS_ERROR, message: span.error },
            })),
          },
        ],
      },
    ],
  };
}

/**
 * OTEL_EXPORTER_OTLP_HEADERS: `k=v,k2=v2` with URL-encoded values; malformed entries are an error. The values carry
 * credentials (`authorization=Bearer%20...`), so an error names the entry by its place, never by its text.
 */
export function parseOtlpHeaders(text: string): Result<Record<string, string>, string> {
  const headers: Record<string, string> = {};
  for (const [index, raw] of text.split(",").entries()) {
    const entry = raw.trim();
    if (entry === "") continue;
    const place = `entry ${index + 1}`;
    const equals = entry.indexOf("=");
    if (equals <= 0) return err(`${place}: expected key=value (the value URL-encoded)`);
    try {
      headers[decodeURIComponent(entry.slice(0, equals).trim())] = decodeURIComponent(entry.slice(equals + 1).trim());
    } catch {
      return err(`${place} is not URL-encoded correctly`);
    }
  }
  return ok(headers);
}

/** The traces URL: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as given, else OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces. */
export function tracesUrl(endpoint: string, tracesEndpoint: string | undefined): string {
  if (tracesEndpoint) return tracesEndpoint;
  return `${endpoint.replace(/\/+$/, "")}/v1/traces`;
}
