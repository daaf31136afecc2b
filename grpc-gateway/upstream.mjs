// The gateway's way to the Worker: each gRPC call becomes one Connect unary POST of the raw protobuf bytes
// (application/proto) over keep-alive HTTP, with the caller's remaining deadline as connect-timeout-ms; the
// Worker's Connect errors ({code, message} JSON) come back as gRPC status codes.
import grpc from "@grpc/grpc-js";
import http from "node:http";
import https from "node:https";

export const SHOULD_RATE_LIMIT_PATH = "/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit";

const { status: Status } = grpc;

/** Connect's error codes (https://connectrpc.com/docs/protocol#error-codes) as gRPC status codes. */
const CONNECT_CODES = {
  canceled: Status.CANCELLED,
  unknown: Status.UNKNOWN,
  invalid_argument: Status.INVALID_ARGUMENT,
  deadline_exceeded: Status.DEADLINE_EXCEEDED,
  not_found: Status.NOT_FOUND,
  already_exists: Status.ALREADY_EXISTS,
  permission_denied: Status.PERMISSION_DENIED,
  resource_exhausted: Status.RESOURCE_EXHAUSTED,
  failed_precondition: Status.FAILED_PRECONDITION,
  aborted: Status.ABORTED,
  out_of_range: Status.OUT_OF_RANGE,
  unimplemented: Status.UNIMPLEMENTED,
  internal: Status.INTERNAL,
  unavailable: Status.UNAVAILABLE,
  data_loss: Status.DATA_LOSS,
  unauthenticated: Status.UNAUTHENTICATED,
};

/**
 * An HTTP status without a Connect error body (a proxy in between, a wrong URL), mapped as gRPC maps HTTP
 * statuses (https://github.com/grpc/grpc/blob/master/doc/http-grpc-status-mapping.md), except that every 5xx but 501
 * is UNAVAILABLE: such an answer is the upstream failing (a Worker that threw or ran out of resources, a crashed
 * runtime), which Envoy retries on UNAVAILABLE and not on UNKNOWN.
 * @param {number} httpStatus
 */
function statusOfHttp(httpStatus) {
  if (httpStatus === 400) return Status.INTERNAL;
  if (httpStatus === 401) return Status.UNAUTHENTICATED;
  if (httpStatus === 403) return Status.PERMISSION_DENIED;
  if (httpStatus === 404 || httpStatus === 501) return Status.UNIMPLEMENTED;
  if (httpStatus === 429 || (httpStatus >= 500 && httpStatus <= 599)) return Status.UNAVAILABLE;
  return Status.UNKNOWN;
}

/** @typedef {{ ok: true, body: Buffer } | { ok: false, code: grpc.status, details: string }} UpstreamResult */

/** A warning about the Worker's answers is logged at most this often per kind: every call may meet the same fault. */
const WARNING_INTERVAL_MS = 10_000;

/** A failure with the gRPC status it stands for. */
class CallFailure extends Error {
  /** @param {grpc.status} code @param {string} details */
  constructor(code, details) {
    super(details);
    this.code = code;
  }
}

/**
 * A call's `deadline` in epoch ms (Infinity: none), `onCancel`, which subscribes to the caller going away and
 * answers the unsubscribe function, and `trace`, the caller's trace context headers (trace-context.mjs).
 * @typedef {{ deadline: number, onCancel?: (abort: () => void) => () => void, trace?: Record<string, string> }}
 *   CallOptions
 */

/**
 * What the functions behind `createUpstream` share: the Worker's address and the keep-alive agent that reaches it.
 * @typedef {{ base: URL, client: typeof http | typeof https, prefix: string,
 *   target: { protocol: string, hostname: string, port: string, agent: http.Agent }, connectTimeoutMs: number,
 *   defaultTimeoutMs: number, log: (level: string, message: string, fields?: object) => void,
 *   warned: Map<string, { at: number, suppressed: number }> }} UpstreamContext
 */

/**
 * @param {{ url: string, connectTimeoutMs: number, defaultTimeoutMs: number,
 *   log: (level: string, message: string, fields?: object) => void }} options
 */
export function createUpstream({ url, connectTimeoutMs, defaultTimeoutMs, log }) {
  const base = new URL(url);
  const client = base.protocol === "https:" ? https : http;
  // One socket per call in flight (HTTP/1.1), kept open between calls; LIFO keeps the warmest sockets busy.
  const agent = new client.Agent({ keepAlive: true, maxSockets: 256, scheduling: "lifo" });
  const prefix = base.pathname.replace(/\/$/, "");
  const target = { protocol: base.protocol, hostname: base.hostname.replace(/^\[|\]$/g, ""), port: base.port, agent };
  /** @type {UpstreamContext} */
  const upstream = { base, client, prefix, target, connectTimeoutMs, defaultTimeoutMs, log, warned: new Map() };

  return {
    /**
     * Forwards one ShouldRateLimit call.
     * @param {Buffer} requestBytes the caller's RateLimitRequest, as received
     * @param {CallOptions} call
     * @returns {Promise<UpstreamResult>}
     */
    shouldRateLimit(requestBytes, call) {
      return forwardShouldRateLimit(upstream, requestBytes, call);
    },

    /**
     * Whether the Worker's /healthcheck answers 200 within `timeoutMs`.
     * @param {number} timeoutMs
     */
    healthy(timeoutMs) {
      return checkHealth(upstream, timeoutMs);
    },

    close() {
      agent.destroy();
    },
  };
}

/**
 * @param {UpstreamContext} upstream @param {Buffer} requestBytes @param {CallOptions} call
 * @returns {Promise<UpstreamResult>}
 */
async function forwardShouldRateLimit(upstream, requestBytes, { deadline, onCancel, trace }) {
  const callerLeft = deadline === Infinity ? Infinity : Math.ceil(deadline - Date.now());
  if (callerLeft <= 0) return { ok: false, code: Status.DEADLINE_EXCEEDED, details: "deadline exceeded" };
  // The caller's deadline, whole, when it set one (a longer one than the default included); the default only
  // when it set none, and then passing it is the Worker failing to answer: UNAVAILABLE, which Envoy retries.
  const timeoutMs = callerLeft === Infinity ? upstream.defaultTimeoutMs : callerLeft;
  const timedOut = () =>
    callerLeft === Infinity
      ? new CallFailure(Status.UNAVAILABLE, `rate limit service did not answer within ${timeoutMs} ms`)
      : new CallFailure(Status.DEADLINE_EXCEEDED, "deadline exceeded");
  try {
    const response = await exchange(upstream, {
      method: "POST",
      path: upstream.prefix + SHOULD_RATE_LIMIT_PATH,
      headers: {
        ...trace,
        "content-type": "application/proto",
        "content-length": String(requestBytes.length),
        "connect-protocol-version": "1",
        "connect-timeout-ms": String(timeoutMs),
      },
      body: requestBytes,
      timeoutMs,
      timedOut,
      onCancel,
    });
    const answered = response.status === 200 && response.contentType === "application/proto";
    if (answered) return { ok: true, body: response.body };
    return errorOf(upstream, response);
  } catch (error) {
    if (error instanceof CallFailure) return { ok: false, code: error.code, details: error.message };
    throw error;
  }
}

/** @param {UpstreamContext} upstream @param {number} timeoutMs */
async function checkHealth(upstream, timeoutMs) {
  try {
    const timedOut = () => new CallFailure(Status.UNAVAILABLE, "health check timed out");
    const response = await exchange(upstream, {
      method: "GET",
      path: `${upstream.prefix}/healthcheck`,
      headers: {},
      timeoutMs,
      timedOut,
    });
    if (response.status !== 200) {
      warnThrottled(upstream, "grpc-gateway: Worker health check answered other than 200", {
        status: response.status,
      });
    }
    return response.status === 200;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    upstream.log("warn", "grpc-gateway: Worker health check failed", { error: message });
    return false;
  }
}

/**
 * One HTTP exchange with the Worker, failing with a CallFailure on time-outs, cancellation and network errors.
 * @param {UpstreamContext} upstream
 * @param {{ method: string, path: string, headers: Record<string, string>, body?: Buffer, timeoutMs: number,
 *   timedOut: () => CallFailure, onCancel?: CallOptions["onCancel"] }} options
 * @returns {Promise<{ status: number, contentType: string, body: Buffer }>}
 */
function exchange(upstream, { method, path, headers, body, timeoutMs, timedOut, onCancel }) {
  return new Promise((resolve, reject) => {
    /** @type {CallFailure | undefined} */
    let failure;
    /** @type {http.ClientRequest} */
    let request;
    const fail = (/** @type {CallFailure} */ reason) => {
      failure ??= reason;
      request.destroy(reason);
    };
    const deadline = setTimeout(() => fail(timedOut()), timeoutMs);
    const unsubscribe = onCancel?.(() => fail(new CallFailure(Status.CANCELLED, "call cancelled by the caller")));
    const settle = () => {
      clearTimeout(deadline);
      unsubscribe?.();
    };

    /** @param {boolean} firstAttempt */
    function send(firstAttempt) {
      request = upstream.client.request({ ...upstream.target, method, path, headers });
      request.on("socket", (socket) => limitConnectTime(upstream, socket, fail));
      request.on("response", (response) => {
        const chunks = /** @type {Buffer[]} */ ([]);
        response.on("data", (chunk) => chunks.push(chunk));
        response.on("end", () => {
          settle();
          const contentType = response.headers["content-type"] ?? "";
          resolve({ status: response.statusCode ?? 0, contentType, body: Buffer.concat(chunks) });
        });
        response.on("error", (error) => {
          settle();
          reject(
            failure ?? new CallFailure(Status.UNAVAILABLE, `rate limit service connection failed: ${error.message}`),
          );
        });
      });
      request.on("error", (error) => {
        const code = /** @type {NodeJS.ErrnoException} */ (error).code;
        // A kept-alive socket that the Worker closed just as it was reused: send once more on a fresh socket
        // (the retry Node's http documentation recommends for this race; the request never got an answer).
        const closedUnderUs = request.reusedSocket && (code === "ECONNRESET" || code === "EPIPE");
        if (!failure && firstAttempt && closedUnderUs) return send(false);
        settle();
        reject(
          failure ?? new CallFailure(Status.UNAVAILABLE, `rate limit service unreachable: ${code ?? error.message}`),
        );
      });
      request.end(body);
    }
    send(true);
  });
}

/**
 * Fails the exchange with UNAVAILABLE when a new socket does not connect within `connectTimeoutMs`.
 * @param {UpstreamContext} upstream @param {import("node:net").Socket} socket
 * @param {(reason: CallFailure) => void} fail
 */
function limitConnectTime(upstream, socket, fail) {
  // A blackholed Worker must fail fast, not at the caller's deadline; reused sockets are connected already.
  if (!socket.connecting) return;
  const unreachable = `rate limit service unreachable: no connection within ${upstream.connectTimeoutMs} ms`;
  const connectTimer = setTimeout(
    () => fail(new CallFailure(Status.UNAVAILABLE, unreachable)),
    upstream.connectTimeoutMs,
  );
  socket.once(upstream.base.protocol === "https:" ? "secureConnect" : "connect", () => clearTimeout(connectTimer));
  socket.once("close", () => clearTimeout(connectTimer));
}

/**
 * Logs `message` as a warning, unless it was logged less than WARNING_INTERVAL_MS ago; the next line counts the
 * ones left out meanwhile.
 * @param {UpstreamContext} upstream @param {string} message @param {object} fields
 */
function warnThrottled(upstream, message, fields) {
  const now = Date.now();
  const last = upstream.warned.get(message);
  if (last && now - last.at < WARNING_INTERVAL_MS) {
    last.suppressed++;
    return;
  }
  upstream.warned.set(message, { at: now, suppressed: 0 });
  upstream.log("warn", message, last?.suppressed ? { ...fields, suppressed: last.suppressed } : fields);
}

/**
 * The gRPC status of a non-200 answer: the Connect error's code and message, else the HTTP status. The latter is no
 * answer of the Worker's (a wrong URL or prefix, a proxy in between), so it is logged.
 * @param {UpstreamContext} upstream
 * @param {{ status: number, contentType: string, body: Buffer }} response
 * @returns {UpstreamResult}
 */
function errorOf(upstream, response) {
  if (response.contentType.startsWith("application/json")) {
    try {
      const error = JSON.parse(response.body.toString("utf8"));
      const code = CONNECT_CODES[/** @type {keyof typeof CONNECT_CODES} */ (error?.code)];
      if (code !== undefined)
        return { ok: false, code, details: typeof error.message === "string" ? error.message : "" };
    } catch {}
  }
  warnThrottled(upstream, "grpc-gateway: the rate limit service answered without a Connect error", {
    status: response.status,
    contentType: response.contentType,
  });
  return {
    ok: false,
    code: statusOfHttp(response.status),
    details: `rate limit service answered HTTP ${response.status}`,
  };
}
