// grpc.health.v1.Health/Check for the gateway. The service "ratelimit" (as the reference names it) and the full
// service name mirror the Worker's /healthcheck, asked at most once a second; "" is the gateway itself. After
// SIGTERM every name answers NOT_SERVING.
import grpc from "@grpc/grpc-js";

const WORKER_CHECK_CACHE_MS = 1000;
const WORKER_CHECK_TIMEOUT_MS = 2000;

/** Service names whose health is the Worker's. */
const MIRRORED = new Set(["ratelimit", "envoy.service.ratelimit.v3.RateLimitService"]);

/**
 * @param {{ healthy(timeoutMs: number): Promise<boolean> }} upstream
 */
export function createHealth(upstream) {
  let shuttingDown = false;
  /** @type {{ at: number, serving: Promise<boolean> } | undefined} */
  let lastCheck;

  /** The Worker's health, shared by every Check within a second (including one still on its way). */
  function workerServing() {
    const now = Date.now();
    if (!lastCheck || now - lastCheck.at >= WORKER_CHECK_CACHE_MS) {
      lastCheck = { at: now, serving: upstream.healthy(WORKER_CHECK_TIMEOUT_MS) };
    }
    return lastCheck.serving;
  }

  return {
    shutDown() {
      shuttingDown = true;
    },

    /**
     * The Check handler.
     * @param {grpc.ServerUnaryCall<{ service?: string }, { status: string }>} call
     * @param {grpc.sendUnaryData<{ status: string }>} callback
     */
    async check(call, callback) {
      const service = call.request.service ?? "";
      if (service !== "" && !MIRRORED.has(service)) {
        // Not the caller's name back, as grpc-go: a name of any length would go out in the grpc-message trailer.
        return callback({ code: grpc.status.NOT_FOUND, details: "unknown service" });
      }
      if (shuttingDown) return callback(null, { status: "NOT_SERVING" });
      if (service === "") return callback(null, { status: "SERVING" });
      const serving = await workerServing();
      callback(null, { status: serving && !shuttingDown ? "SERVING" : "NOT_SERVING" });
    },
  };
}
