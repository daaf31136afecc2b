// The caller's W3C trace context (https://www.w3.org/TR/trace-context/), read from its gRPC metadata and passed to the
// Worker as the HTTP headers of the same names, so that the decision's span (src/ratelimit/stats/telemetry.ts reads
// `traceparent`) joins the caller's trace. Only well-formed values go through: the metadata is the caller's text.

const TRACEPARENT = /^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;

/** The length W3C asks a platform to propagate at least; a longer tracestate is dropped rather than cut. */
export const TRACESTATE_MAX_LENGTH = 512;

/** Printable ASCII only: no control character (CR and LF above all) reaches an HTTP header. */
const TRACESTATE = /^[\x20-\x7e]*$/;

/**
 * A traceparent of W3C's form with a trace and a parent id that are not all zeros, and a version other than the
 * invalid `ff`.
 * @param {unknown} value
 * @returns {value is string}
 */
export function isValidTraceparent(value) {
  if (typeof value !== "string" || !TRACEPARENT.test(value)) return false;
  const [version, traceId, parentId] = value.split("-");
  return version !== "ff" && !/^0+$/.test(traceId) && !/^0+$/.test(parentId);
}

/**
 * A tracestate of at most TRACESTATE_MAX_LENGTH printable ASCII characters, not empty.
 * @param {string} value
 */
export function isValidTracestate(value) {
  return value.length > 0 && value.length <= TRACESTATE_MAX_LENGTH && TRACESTATE.test(value);
}

/**
 * The trace headers to send with a call: `traceparent` when the metadata holds exactly one valid one, with
 * `tracestate` (several values joined with commas, as W3C joins repeated headers) when that is valid too. W3C drops
 * a tracestate that comes without a valid traceparent, and so does this.
 * @param {import("@grpc/grpc-js").Metadata} metadata
 * @returns {Record<string, string>}
 */
export function traceHeaders(metadata) {
  const parents = metadata.get("traceparent");
  if (parents.length !== 1 || !isValidTraceparent(parents[0])) return {};
  const traceparent = parents[0];
  const tracestate = metadata.get("tracestate").join(",");
  return isValidTracestate(tracestate) ? { traceparent, tracestate } : { traceparent };
}
