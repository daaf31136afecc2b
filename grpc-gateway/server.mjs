// The gateway's gRPC server: ShouldRateLimit forwarded to the Worker as raw protobuf bytes (no decoding here, so
// the Worker alone validates and decides) with the caller's trace context, and the gRPC health check.
import grpc from "@grpc/grpc-js";
import { lstatSync, unlinkSync } from "node:fs";
import { connect } from "node:net";
import { createHealth } from "./health.mjs";
import { loadProto } from "./proto.mjs";
import { clientSanProblem, serverCredentials } from "./tls.mjs";
import { traceHeaders } from "./trace-context.mjs";
import { createUpstream, SHOULD_RATE_LIMIT_PATH } from "./upstream.mjs";

/** @typedef {(level: string, message: string, fields?: object) => void} Log */

const passBytes = (/** @type {Buffer} */ bytes) => bytes;

/** ShouldRateLimit with the messages left as bytes. */
const RATE_LIMIT_SERVICE = {
  ShouldRateLimit: {
    path: SHOULD_RATE_LIMIT_PATH,
    requestStream: false,
    responseStream: false,
    requestSerialize: passBytes,
    requestDeserialize: passBytes,
    responseSerialize: passBytes,
    responseDeserialize: passBytes,
  },
};

/** @param {import("./settings.mjs").GatewaySettings} settings */
function listenAddress(settings) {
  if (settings.GRPC_UDS) return `unix:${settings.GRPC_UDS}`;
  const host = settings.GRPC_HOST.includes(":") ? `[${settings.GRPC_HOST}]` : settings.GRPC_HOST;
  return `${host}:${settings.GRPC_PORT}`;
}

/**
 * What answers on the unix socket `path`: a process ("live", also when it does not answer within 1 s), nothing
 * ("stale": ECONNREFUSED), or "unknown" (EACCES...), left for the bind to report.
 * @param {string} path @returns {Promise<"live" | "stale" | "unknown">}
 */
function socketState(path) {
  return new Promise((resolve) => {
    const socket = connect(path);
    const settle = (/** @type {"live" | "stale" | "unknown"} */ state) => {
      socket.destroy();
      resolve(state);
    };
    socket.setTimeout(1000, () => settle("live"));
    socket.once("connect", () => settle("live"));
    socket.once("error", (/** @type {NodeJS.ErrnoException} */ error) =>
      settle(error.code === "ECONNREFUSED" ? "stale" : "unknown"),
    );
  });
}

/**
 * A socket file left by a gateway that did not exit cleanly would make the bind fail, so it is removed; one a process
 * still listens on (another gateway) is kept, and the start fails naming GRPC_UDS.
 * @param {string} path
 */
async function removeStaleSocket(path) {
  try {
    if (!lstatSync(path).isSocket()) return;
  } catch {
    return;
  }
  const state = await socketState(path);
  if (state === "live") {
    throw new Error(`${path} is in use by a process listening on it; set GRPC_UDS to another path`);
  }
  if (state === "stale") unlinkSync(path);
}

/**
 * grpc-js says "No address added out of total 1 resolved errors: [listen EADDRINUSE ...]": an address in use is said
 * plainly, with the settings that choose another.
 * @param {Error} error @param {import("./settings.mjs").GatewaySettings} settings
 */
function bindError(error, settings) {
  if (!error.message.includes("EADDRINUSE")) return error;
  return new Error(
    settings.GRPC_UDS
      ? `${settings.GRPC_UDS} is in use by something that is not a socket; set GRPC_UDS to another path`
      : `${listenAddress(settings)} is already in use; set GRPC_PORT to another port (or GRPC_HOST to another ` +
          "address, or GRPC_UDS to a unix socket path)",
  );
}

/**
 * The grpc.Server options from the settings.
 * @param {import("./settings.mjs").GatewaySettings} settings
 */
function serverOptions(settings) {
  // Channelz (grpc-js's call statistics) has no reader here and costs time on every call. A message over the Worker's
  // limit is refused here, as the Worker would refuse it, without being forwarded.
  /** @type {Record<string, number>} */
  const options = {
    "grpc.enable_channelz": 0,
    "grpc.max_receive_message_length": settings.RATELIMIT_MAX_REQUEST_BYTES,
  };
  // grpc-js adds the spec's plus or minus 10 % jitter to the age itself.
  const age = settings.GRPC_MAX_CONNECTION_AGE;
  const grace = settings.GRPC_MAX_CONNECTION_AGE_GRACE;
  if (age !== undefined) options["grpc.max_connection_age_ms"] = age;
  if (grace !== undefined) options["grpc.max_connection_age_grace_ms"] = grace;
  return options;
}

/**
 * The ShouldRateLimit implementation: each call forwarded to the Worker, its answer or failure passed back.
 * @param {import("./settings.mjs").GatewaySettings} settings
 * @param {ReturnType<typeof createUpstream>} upstream
 * @param {Log} log
 */
function rateLimitService(settings, upstream, log) {
  return {
    /**
     * @param {grpc.ServerUnaryCall<Buffer, Buffer>} call
     * @param {grpc.sendUnaryData<Buffer>} callback
     */
    async ShouldRateLimit(call, callback) {
      const refused = clientSanProblem(call, settings.GRPC_CLIENT_TLS_SAN);
      if (refused) return callback({ code: grpc.status.UNAUTHENTICATED, details: refused });
      const onCancel = (/** @type {() => void} */ abort) => {
        call.once("cancelled", abort);
        return () => call.removeListener("cancelled", abort);
      };
      const result = await upstream.shouldRateLimit(call.request, {
        deadline: Number(call.getDeadline()),
        onCancel,
        trace: traceHeaders(call.metadata),
      });
      if (result.ok) return callback(null, result.body);
      if (result.code === grpc.status.UNAVAILABLE) {
        log("warn", "grpc-gateway: rate limit service unavailable", { error: result.details });
      }
      callback({ code: result.code, details: result.details });
    },
  };
}

/**
 * Stops taking calls and waits for those in flight, closing the ones still open after `graceMs`.
 * @param {grpc.Server} server @param {number} graceMs @param {Log} log
 */
function closeServer(server, graceMs, log) {
  return new Promise((resolve) => {
    const force = setTimeout(() => {
      log("warn", "grpc-gateway: calls still in flight at the end of the shutdown grace; closing them");
      server.forceShutdown();
      resolve(undefined);
    }, graceMs);
    server.tryShutdown(() => {
      clearTimeout(force);
      resolve(undefined);
    });
  });
}

/**
 * Starts serving; resolves once bound.
 * @param {import("./settings.mjs").GatewaySettings} settings
 * @param {Log} log
 */
export async function startGateway(settings, log) {
  const upstream = createUpstream({
    url: settings.RATELIMIT_UPSTREAM_URL,
    connectTimeoutMs: settings.RATELIMIT_UPSTREAM_CONNECT_TIMEOUT,
    defaultTimeoutMs: settings.RATELIMIT_UPSTREAM_TIMEOUT,
    log,
  });
  const health = createHealth(upstream);
  const { Health } = loadProto("grpc/health/v1/health.proto").grpc.health.v1;
  const server = new grpc.Server(serverOptions(settings));

  server.addService(RATE_LIMIT_SERVICE, rateLimitService(settings, upstream, log));
  // Watch is not offered (Envoy's gRPC health checker calls Check): it answers UNIMPLEMENTED.
  server.addService(
    { Check: Health.service.Check },
    {
      /** @type {grpc.handleUnaryCall<{ service?: string }, { status: string }>} */
      Check(call, callback) {
        const refused = clientSanProblem(call, settings.GRPC_CLIENT_TLS_SAN);
        if (refused) return callback({ code: grpc.status.UNAUTHENTICATED, details: refused });
        health.check(call, callback);
      },
    },
  );

  if (settings.GRPC_UDS) await removeStaleSocket(settings.GRPC_UDS);
  const address = listenAddress(settings);
  const credentials = serverCredentials(settings, log);
  const port = await new Promise((resolve, reject) =>
    server.bindAsync(address, credentials, (error, boundPort) =>
      error ? reject(bindError(error, settings)) : resolve(boundPort),
    ),
  );

  return {
    /** Where it listens: host:port with the bound port, or the unix socket. */
    address: settings.GRPC_UDS ? address : `${settings.GRPC_HOST}:${port}`,
    /**
     * Stops as the reference does on SIGTERM: the health check answers NOT_SERVING at once (calls are still taken
     * for GRPC_GATEWAY_DRAIN_TIME), then no new calls, and the calls in flight finish (for at most
     * GRPC_GATEWAY_SHUTDOWN_GRACE).
     */
    async shutdown() {
      health.shutDown();
      await new Promise((resolve) => setTimeout(resolve, settings.GRPC_GATEWAY_DRAIN_TIME));
      await closeServer(server, settings.GRPC_GATEWAY_SHUTDOWN_GRACE, log);
      upstream.close();
    },
  };
}
