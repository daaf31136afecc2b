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
import { encodeEnvelope, type UniversalHandler, type UniversalServerRequest } from "@connectrpc/connect/protocol";
import {
  codeToHttpStatus,
  contentTypeUnaryRegExp,
  errorToJsonBytes,
  parseTimeout,
} from "@connectrpc/connect/protocol-connect";
import {
  contentTypeJson as grpcWebJson,
  contentTypeProto as grpcWebProto,
  parseContentType as parseGrpcWebContentType,
  setTrailerStatus,
  trailerFlag,
  trailerSerialize,
} from "@connectrpc/connect/protocol-grpc-web";
import { createRoute, OpenAPIHono } from "@hono/zod-openapi";
import { logError } from "../../shared/log";
import { PayloadTooLarge, readBodyBytes } from "../../shared/http/request-body";
import { SettingsError } from "../../shared/settings";
import { decide } from "../runtime";
import { DEFAULT_LIMITS } from "../core/limits";
import type { ServiceError } from "../core/service";
import {
  RateLimitRequestSchema,
  RateLimitResponseSchema,
  RateLimitService,
  type RateLimitRequest,
} from "../gen/envoy/service/ratelimit/v3/rls_pb";
import { requestFromProto, responseToProto } from "./codec";
import { rateLimitRequestExample } from "./examples";
import { CONNECT_ERROR, RATE_LIMIT_REQUEST, RATE_LIMIT_RESPONSE } from "./message-schemas";
import { rateLimitSettings, requestLimits } from "../settings";
import { shouldRateLimitCall } from "../stats/telemetry";

/** gRPC's default largest message, for responses: a decision for every descriptor a request may hold is a few KB. */
const MAX_RESPONSE_BYTES = 4 * 1024 * 1024;

const OVERRIDE_WITHOUT_UNIT = /^descriptor \d+: limit override needs a unit$/;

const workerEnv = createContextKey<Env | undefined>(undefined, { description: "the Worker's env" });

/**
 * The reference answers its service errors with gRPC status UNKNOWN and their text. An override without a unit
 * crashes the reference; refusing it as INVALID_ARGUMENT tells the caller what to fix. Store failures are UNAVAILABLE
 * (the reference's UNKNOWN is not among the codes Envoy retries on) and read as on /json: the detail only when it is a
 * server's own error reply or what the service composed itself (PublicStoreError), never an address or a node list.
 */
function connectErrorOf(error: ServiceError): ConnectError {
  if (error.kind === "store") {
    logError("ratelimit: counter store failed", { message: error.message });
    const shown = error.shown === undefined ? "" : `: ${error.shown}`;
    return new ConnectError(`rate limit counter store error${shown}`, Code.Unavailable);
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
  try {
    // The descriptor and entry limits are checked here, before any counter is touched.
    const request = requestFromProto(message, requestLimits(rateLimitSettings(env)));
    if (!request.ok) throw new ConnectError(request.error, Code.InvalidArgument);
    const deciding = decide(env, request.value, Date.now());
    const decision = await (signal ? untilAborted(deciding, signal) : deciding);
    if (!decision.ok) throw connectErrorOf(decision.error);
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

const handlers = new Map<number, UniversalHandler>();

/**
 * The router's handler of ShouldRateLimit for a body limit (RATELIMIT_MAX_REQUEST_BYTES); the route reads no more than
 * that, and the router's own limit holds it for the message inside a gRPC-Web frame too.
 */
function handlerFor(readMaxBytes: number): UniversalHandler {
  let handler = handlers.get(readMaxBytes);
  if (!handler) {
    // gRPC proper is off: a Worker cannot send HTTP trailers, so a gRPC client would never see a status. Such
    // requests answer 415; real gRPC clients go through the Node gateway (grpc-gateway/).
    const router = createConnectRouter({
      grpc: false,
      readMaxBytes,
      writeMaxBytes: MAX_RESPONSE_BYTES,
      // Like the reference's protojson (and /json), unknown JSON fields are refused.
      jsonOptions: { ignoreUnknownFields: false },
    }).service(RateLimitService, { shouldRateLimit });
    handlers.set(readMaxBytes, (handler = router.handlers[0]));
  }
  return handler;
}

/** The method path Envoy calls, "/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit". */
export const SHOULD_RATE_LIMIT_PATH = handlerFor(DEFAULT_LIMITS.RATELIMIT_MAX_REQUEST_BYTES).requestPath;

export const ratelimitGrpcApp = new OpenAPIHono<{ Bindings: Env }>();

const binary = (description: string) => ({ schema: { type: "string" as const, format: "binary", description } });
const connectError = (description: string) => ({
  description,
  content: { "application/json": { schema: CONNECT_ERROR } },
});

/**
 * The method over HTTP, for the OpenAPI document (the route below serves it; the Connect router reads the body).
 * gRPC-Web answers every outcome with 200 and the status in its trailer frame, Connect with the statuses listed.
 */
export const shouldRateLimitConnectRoute = createRoute({
  method: "post",
  path: SHOULD_RATE_LIMIT_PATH,
  operationId: "shouldRateLimit",
  security: [],
  tags: ["ratelimit"],
  summary: "Envoy's RateLimitService.ShouldRateLimit over Connect (binary or JSON) and gRPC-Web",
  description:
    "The call Envoy makes, answered like POST /json (same decision, same counters) except that over the limit " +
    "is overallCode OVER_LIMIT with status 200. Connect unary: Content-Type application/proto or application/json, " +
    "optional Connect-Protocol-Version: 1 and Connect-Timeout-Ms. gRPC-Web: application/grpc-web+proto or " +
    "application/grpc-web+json, one length-prefixed message. Plain gRPC (application/grpc) needs HTTP trailers, " +
    "which a Worker cannot send: it goes through the Node gateway (grpc-gateway/).",
  request: {
    body: {
      required: true,
      content: {
        // First, so that Swagger UI's "Try it out" shows the JSON example rather than a file upload.
        "application/json": { schema: RATE_LIMIT_REQUEST, example: rateLimitRequestExample },
        "application/proto": binary("RateLimitRequest, protobuf binary"),
        "application/grpc-web+proto": binary("one gRPC-Web frame holding a RateLimitRequest"),
        "application/grpc-web+json": binary("one gRPC-Web frame holding a RateLimitRequest in proto3 JSON"),
      },
    },
  },
  responses: {
    200: {
      description: "The decision (gRPC-Web: the message frame, or none on an error, then the trailer frame)",
      content: {
        "application/proto": binary("RateLimitResponse, protobuf binary"),
        "application/json": { schema: RATE_LIMIT_RESPONSE },
        "application/grpc-web+proto": binary("frames: RateLimitResponse, then the trailers with grpc-status"),
        "application/grpc-web+json": binary("frames: RateLimitResponse in proto3 JSON, then the trailers"),
      },
    },
    400: connectError(
      "invalid_argument: the message does not decode, a descriptor, entry or byte limit is passed, or an override has no unit",
    ),
    405: { description: "Not POST" },
    415: { description: "Neither Connect nor gRPC-Web (plain gRPC included)" },
    429: connectError("resource_exhausted: the message is larger than RATELIMIT_MAX_REQUEST_BYTES"),
    500: connectError("unknown: the service refuses the request (e.g. no configuration); internal: settings"),
    503: connectError("unavailable: the counter store failed or gave no answer within its time-out"),
    504: connectError("deadline_exceeded: Connect-Timeout-Ms passed before the decision"),
  },
});
ratelimitGrpcApp.openAPIRegistry.registerPath(shouldRateLimitConnectRoute);

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
async function viaRouter(handler: UniversalHandler, raw: Request, body: Uint8Array, env: Env): Promise<Response> {
  const request: UniversalServerRequest = {
    httpVersion: "1.1",
    method: raw.method,
    url: raw.url,
    header: raw.headers,
    body: oneChunk(body),
    signal: raw.signal,
    contextValues: createContextValues().set(workerEnv, env),
  };
  const response = await handler(request);
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

async function answerBareBinaryCall(
  handler: UniversalHandler,
  raw: Request,
  body: Uint8Array,
  env: Env,
): Promise<Response> {
  const timeout = parseTimeout(raw.headers.get("connect-timeout-ms"), Number.MAX_SAFE_INTEGER);
  if (timeout.error) return connectErrorResponse(timeout.error);
  let message: RateLimitRequest;
  try {
    message = fromBinary(RateLimitRequestSchema, body);
  } catch {
    return viaRouter(handler, raw, body, env);
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

/**
 * A call refused before the router reads it, answered in the caller's protocol: a gRPC-Web trailer frame, or Connect's
 * JSON error. A request in neither gets the router's answer to its content type (415).
 */
function refusal(handler: UniversalHandler, raw: Request, error: ConnectError, env: Env): Promise<Response> | Response {
  const contentType = raw.headers.get("content-type") ?? "";
  const grpcWeb = parseGrpcWebContentType(contentType);
  if (grpcWeb && !grpcWeb.text) {
    const trailer = setTrailerStatus(new Headers(), error);
    return new Response(encodeEnvelope(trailerFlag, trailerSerialize(trailer)), {
      status: 200,
      headers: { "content-type": grpcWeb.binary ? grpcWebProto : grpcWebJson },
    });
  }
  if (contentTypeUnaryRegExp.test(contentType)) return connectErrorResponse(error);
  return viaRouter(handler, raw, new Uint8Array(0), env);
}

// Every protocol here posts: another method is answered by the root's 405 (with `Allow`), not by Connect's router.
ratelimitGrpcApp.post(SHOULD_RATE_LIMIT_PATH, async (c) => {
  const raw = c.req.raw;
  let handler = handlerFor(DEFAULT_LIMITS.RATELIMIT_MAX_REQUEST_BYTES);
  let body: Uint8Array;
  try {
    const maxBytes = rateLimitSettings(c.env).RATELIMIT_MAX_REQUEST_BYTES;
    handler = handlerFor(maxBytes);
    body = await readBodyBytes(raw, { maxBytes, setting: "RATELIMIT_MAX_REQUEST_BYTES" });
  } catch (error) {
    // An oversized message is RESOURCE_EXHAUSTED, as grpc-go answers it.
    if (error instanceof PayloadTooLarge) {
      return refusal(handler, raw, new ConnectError(error.message, Code.ResourceExhausted), c.env);
    }
    if (!(error instanceof SettingsError)) throw error;
    logError("ratelimit: invalid settings", error);
    return refusal(handler, raw, new ConnectError(error.message, Code.Internal), c.env);
  }
  if (isBareBinaryCall(raw)) return answerBareBinaryCall(handler, raw, body, c.env);
  // Connect picks the protocol from the content type and answers its own errors.
  return viaRouter(handler, raw, body, c.env);
});
