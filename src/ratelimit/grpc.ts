// Envoy's RateLimitService v3 on the Worker: the Connect protocol (binary and JSON), gRPC-Web, and the plain
// application/proto POST of Envoy's grpc_http1_reverse_bridge, at /envoy.service.ratelimit.v3.RateLimitService/
// ShouldRateLimit. Every path decides through `decide`, like POST /json: same request, same answer, same counters.
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  createConnectRouter,
  createContextKey,
  createContextValues,
  type HandlerContext,
} from "@connectrpc/connect";
import type { UniversalServerRequest } from "@connectrpc/connect/protocol";
import { codeToHttpStatus, errorToJsonBytes, parseTimeout } from "@connectrpc/connect/protocol-connect";
import { Hono } from "hono";
import { logError } from "../shared/log";
import { SettingsError } from "../shared/settings";
import { storeErrorsArePublic } from "./counter-stores";
import type { ServiceError } from "./core/service";
import { decide } from "./engine";
import {
  RateLimitRequestSchema,
  RateLimitResponseSchema,
  RateLimitService,
  type RateLimitRequest,
} from "./gen/envoy/service/ratelimit/v3/rls_pb";
import { requestFromProto, responseToProto } from "./grpc-codec";
import { shouldRateLimitCall } from "./stats/isolate";

/** gRPC's default largest message; a rate limit request is a few hundred bytes. */
const MAX_MESSAGE_BYTES = 4 * 1024 * 1024;

const OVERRIDE_WITHOUT_UNIT = /^descriptor \d+: limit override needs a unit$/;

const workerEnv = createContextKey<Env | undefined>(undefined, { description: "the Worker's env" });

/**
 * The reference answers its service errors with gRPC status UNKNOWN and their text. An override without a unit
 * crashes the reference; refusing it as INVALID_ARGUMENT tells the caller what to fix. Store failures read as on
 * /json: the detail only for the stores whose messages are safe to show (see counter-stores).
 */
function connectErrorOf(error: ServiceError, env: Env): ConnectError {
  if (error.kind === "store") {
    logError("ratelimit: counter store failed", { message: error.message });
    const generic = "rate limit counter store error";
    return new ConnectError(storeErrorsArePublic(env) ? `${generic}: ${error.message}` : generic, Code.Unknown);
  }
  if (OVERRIDE_WITHOUT_UNIT.test(error.message)) return new ConnectError(error.message, Code.InvalidArgument);
  return new ConnectError(error.message, Code.Unknown);
}

/** Settles with `work`, or fails when the call's signal aborts first (its deadline, or the caller going away). */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(ConnectError.from(signal.reason));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(ConnectError.from(signal.reason));
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

/**
 * Decides one request message.
 * @param signal aborts the wait (the call's deadline, or the caller going away); increments already sent to the
 *   counters still land, as the reference's Redis calls do.
 * @throws ConnectError the error the caller gets
 */
async function decideMessage(env: Env, message: RateLimitRequest, signal: AbortSignal | undefined) {
  const request = requestFromProto(message);
  if (!request.ok) throw new ConnectError(request.error, Code.InvalidArgument);
  try {
    const deciding = decide(env, request.value, Date.now());
    const decision = await (signal ? untilAborted(deciding, signal) : deciding);
    if (!decision.ok) throw connectErrorOf(decision.error, env);
    return responseToProto(decision.value.response);
  } catch (error) {
    if (error instanceof ConnectError) throw error;
    if (error instanceof SettingsError) {
      logError("ratelimit: invalid settings", error);
      throw new ConnectError(error.message, Code.Internal);
    }
    logError("ratelimit: unexpected error in ShouldRateLimit", error);
    throw new ConnectError("internal error", Code.Internal);
  }
}

async function shouldRateLimit(message: RateLimitRequest, context: HandlerContext) {
  const env = context.values.get(workerEnv);
  if (!env) throw new ConnectError("the Worker's env is missing", Code.Internal);
  return decideMessage(env, message, context.signal);
}

// gRPC proper is off: a Worker cannot send HTTP trailers, so a gRPC client would never see a status. Such
// requests answer 415; real gRPC clients go through the Node gateway (grpc-gateway/).
const router = createConnectRouter({
  grpc: false,
  readMaxBytes: MAX_MESSAGE_BYTES,
  writeMaxBytes: MAX_MESSAGE_BYTES,
  // Like the reference's protojson (and /json), unknown JSON fields are refused.
  jsonOptions: { ignoreUnknownFields: false },
}).service(RateLimitService, { shouldRateLimit });

const [shouldRateLimitHandler] = router.handlers;

/** The method path Envoy calls, "/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit". */
export const SHOULD_RATE_LIMIT_PATH = shouldRateLimitHandler.requestPath;

export const ratelimitGrpcApp = new Hono<{ Bindings: Env }>();

/** The whole body as one chunk: unary messages are small, and one buffer is cheaper than a stream both ways. */
async function* oneChunk(bytes: Uint8Array) {
  yield bytes;
}

async function allBytes(chunks: AsyncIterable<Uint8Array>): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  for await (const chunk of chunks) parts.push(chunk);
  if (parts.length === 1) return parts[0];
  const joined = new Uint8Array(parts.reduce((length, part) => length + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    joined.set(part, offset);
    offset += part.length;
  }
  return joined;
}

// Counts ratelimit_server.ShouldRateLimit.* and joins the caller's trace (src/ratelimit/stats).
ratelimitGrpcApp.use(SHOULD_RATE_LIMIT_PATH, shouldRateLimitCall("ShouldRateLimit"));

/** Through the Connect router: every protocol, content type and error the router knows. */
async function viaRouter(raw: Request, body: Uint8Array, env: Env): Promise<Response> {
  const request: UniversalServerRequest = {
    httpVersion: "1.1",
    method: raw.method,
    url: raw.url,
    header: raw.headers,
    body: oneChunk(body),
    signal: raw.signal,
    contextValues: createContextValues().set(workerEnv, env),
  };
  const response = await shouldRateLimitHandler(request);
  return new Response(response.body === undefined ? null : await allBytes(response.body), {
    status: response.status,
    headers: response.header,
  });
}

/**
 * The Connect unary call with a binary body and nothing more (no compression): what the gateway and Envoy's reverse
 * bridge send, so the hot path. Answered with Connect's own wire helpers, because under workerd the router's
 * generic machinery costs about a quarter of a millisecond per call, as much as the rest of the call. Answers are
 * those of the router (the Workers tests compare them); anything else, and a body that does not decode, goes there.
 */
function isBareBinaryCall(raw: Request): boolean {
  const version = raw.headers.get("connect-protocol-version");
  return (
    raw.method === "POST" &&
    raw.headers.get("content-type") === "application/proto" &&
    !raw.headers.has("content-encoding") &&
    (version === null || version === "1")
  );
}

function connectErrorResponse(error: ConnectError): Response {
  return new Response(errorToJsonBytes(error, {}), {
    status: codeToHttpStatus(error.code),
    headers: { "content-type": "application/json" },
  });
}

async function answerBareBinaryCall(raw: Request, body: Uint8Array, env: Env): Promise<Response> {
  const timeout = parseTimeout(raw.headers.get("connect-timeout-ms"), Number.MAX_SAFE_INTEGER);
  if (timeout.error) return connectErrorResponse(timeout.error);
  let message: RateLimitRequest;
  try {
    message = fromBinary(RateLimitRequestSchema, body);
  } catch {
    return viaRouter(raw, body, env);
  }
  // The router's deadline, with its words.
  const deadline = timeout.timeoutMs === undefined ? undefined : new AbortController();
  const expire = () => deadline?.abort(new ConnectError("the operation timed out", Code.DeadlineExceeded));
  const timer = deadline && setTimeout(expire, timeout.timeoutMs);
  try {
    const response = create(RateLimitResponseSchema, await decideMessage(env, message, deadline?.signal));
    return new Response(toBinary(RateLimitResponseSchema, response), {
      status: 200,
      headers: { "content-type": "application/proto" },
    });
  } catch (error) {
    return connectErrorResponse(ConnectError.from(error));
  } finally {
    clearTimeout(timer);
  }
}

ratelimitGrpcApp.all(SHOULD_RATE_LIMIT_PATH, async (c) => {
  const raw = c.req.raw;
  const body = new Uint8Array(await raw.arrayBuffer());
  if (body.length <= MAX_MESSAGE_BYTES && isBareBinaryCall(raw)) return answerBareBinaryCall(raw, body, c.env);
  // Connect picks the protocol from the content type and answers its own errors (405 for other methods).
  return viaRouter(raw, body, c.env);
});
