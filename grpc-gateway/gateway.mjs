#!/usr/bin/env node
// `npm run grpc-gateway`: Envoy's RateLimitService v3 over real HTTP/2 gRPC (@grpc/grpc-js), forwarding every call
// to the Worker at RATELIMIT_UPSTREAM_URL, plus grpc.health.v1.Health/Check. Settings: grpc-gateway/settings.mjs
// and the README. Logs are JSON lines like the Worker's. SIGTERM or SIGINT: drain, finish calls in flight, exit 0.
import { startGateway } from "./server.mjs";
import { gatewaySettings } from "./settings.mjs";

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

let gateway;
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
});

let stopping = false;
for (const signal of ["SIGTERM", "SIGINT"]) {
  process.on(signal, async () => {
    if (stopping) return;
    stopping = true;
    log("info", `grpc-gateway: ${signal} received; health turns NOT_SERVING, calls in flight finish`);
    await gateway.shutdown();
    log("info", "grpc-gateway: stopped");
    process.exit(0);
  });
}
