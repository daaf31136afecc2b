#!/usr/bin/env node
// `npm run grpc-gateway`: Envoy's RateLimitService v3 over real HTTP/2 gRPC (@grpc/grpc-js), forwarding every call
// to the Worker at RATELIMIT_UPSTREAM_URL, plus grpc.health.v1.Health/Check. Settings: grpc-gateway/settings.mjs
// and the README. With CONFIG_TYPE=GRPC_XDS_SOTW it is also the xDS client that stores each snapshot in the Worker
// (xds-client.mjs). Logs are JSON lines like the Worker's. SIGTERM or SIGINT: drain, finish calls in flight, exit 0.
import { startGateway } from "./server.mjs";
import { gatewaySettings } from "./settings.mjs";
import { workerApplier, XdsConfigClient } from "./xds-client.mjs";

/** @param {string} level @param {string} message @param {object} [fields] */
function log(level, message, fields = {}) {
  const line = JSON.stringify({ level, "@message": message, "@timestamp": new Date().toISOString(), ...fields });
  if (level === "info") console.log(line);
  else console.error(line);
}

let settings;
try {
  settings = gatewaySettings(process.env);
} catch (error) {
  log("error", error instanceof Error ? error.message : String(error));
  process.exit(1);
}

/** @type {XdsConfigClient | undefined} */
let xds;
if (settings.CONFIG_TYPE === "GRPC_XDS_SOTW") {
  const apply = workerApplier({
    url: settings.RATELIMIT_UPSTREAM_URL,
    token: /** @type {string} */ (settings.RATELIMIT_ADMIN_TOKEN),
    log,
  });
  xds = new XdsConfigClient(settings, { apply, log }).start();
}

/** @type {Awaited<ReturnType<typeof startGateway>> | undefined} */
let gateway;
let stopping = false;
for (const signal of ["SIGTERM", "SIGINT"]) {
  process.on(signal, async () => {
    if (stopping) return;
    stopping = true;
    log("info", `grpc-gateway: ${signal} received; health turns NOT_SERVING, calls in flight finish`);
    await Promise.all([gateway?.shutdown(), xds?.stop()]);
    log("info", "grpc-gateway: stopped");
    process.exit(0);
  });
}

if (xds && !settings.FORCE_START_WITHOUT_INITIAL_CONFIG) {
  // As the reference, gRPC is served only with a configuration (FORCE_START_WITHOUT_INITIAL_CONFIG=false).
  log("info", "grpc-gateway: waiting for the first xDS snapshot before serving", {
    server: settings.CONFIG_GRPC_XDS_SERVER_URL,
  });
  await xds.firstAccepted;
}
if (!stopping) {
  try {
    gateway = await startGateway(settings, log);
  } catch (error) {
    log("error", "grpc-gateway: cannot start", { error: error instanceof Error ? error.message : String(error) });
    process.exit(1);
  }
  log("info", "grpc-gateway: serving", {
    address: gateway.address,
    upstream: settings.RATELIMIT_UPSTREAM_URL,
    tls: settings.GRPC_SERVER_USE_TLS,
    config: settings.CONFIG_TYPE,
  });
}
