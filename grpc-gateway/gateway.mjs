#!/usr/bin/env node
// `npm run grpc-gateway`: Envoy's RateLimitService v3 over real HTTP/2 gRPC (@grpc/grpc-js), forwarding every call
// to the Worker at RATELIMIT_UPSTREAM_URL, plus grpc.health.v1.Health/Check. Settings: grpc-gateway/settings.mjs
// and the README. With CONFIG_TYPE=GRPC_XDS_SOTW it is also the xDS client that stores each snapshot in the Worker
// (xds-client.mjs). Logs are JSON lines like the Worker's. SIGTERM or SIGINT: drain, finish calls in flight, exit 0.
// --help lists every variable from settings.mjs's metadata (kind, default, meaning), so it cannot miss one.
import { startGateway } from "./server.mjs";
import { checkTlsFiles, GatewaySettingsSchema, gatewaySettings } from "./settings.mjs";
import { workerApplier, XdsConfigClient } from "./xds-client.mjs";

/**
 * Words of `text` in lines of at most `width` characters, each indented by `indent` spaces.
 * @param {string} text @param {number} indent @param {number} width
 */
function wrap(text, indent, width) {
  const lines = [""];
  for (const word of text.split(/\s+/)) {
    const last = lines.length - 1;
    if (lines[last] && indent + lines[last].length + 1 + word.length > width) lines.push(word);
    else lines[last] = lines[last] ? `${lines[last]} ${word}` : word;
  }
  return lines.map((line) => " ".repeat(indent) + line).join("\n");
}

/**
 * The default as written in the metadata, else the value the field takes when unset (not for durations, which
 * it holds in milliseconds).
 * @param {import("zod").ZodType} field @param {string | undefined} kind @param {string | undefined} stated
 */
function defaultText(field, kind, stated) {
  if (stated) return stated;
  const unset = field.safeParse(undefined).data;
  if (kind === "duration" || unset === "" || !["string", "number", "boolean"].includes(typeof unset)) return undefined;
  return String(unset);
}

/** Each variable settings.mjs reads: name, (kind, secret, default), then its meaning. */
function variablesHelp() {
  return Object.entries(GatewaySettingsSchema.in.shape)
    .map(([name, field]) => {
      const meta =
        /** @type {{ kind?: string, choices?: string[], secret?: boolean, default?: string, description?: string }} */ (
          field.meta() ?? {}
        );
      const defaultValue = defaultText(field, meta.kind, meta.default);
      const facts = [
        meta.choices ? meta.choices.join(" | ") : meta.kind,
        meta.secret ? "secret" : undefined,
        defaultValue ? `default ${defaultValue}` : undefined,
      ].filter(Boolean);
      const head = `  ${name}${facts.length > 0 ? ` (${facts.join(", ")})` : ""}`;
      return meta.description ? `${head}\n${wrap(meta.description.replaceAll("`", ""), 6, 116)}` : head;
    })
    .join("\n");
}

const usage = `usage: npm run grpc-gateway            (node grpc-gateway/gateway.mjs [-h | --help])
Envoy's RateLimitService v3 over gRPC, forwarding each call to the rate limit Worker. No flags besides --help:
every setting is an environment variable, and an empty one means its default. Durations are Go's ("500ms", "1m30s").
npm start passes the CONFIG_*, XDS_*, GRPC_*, FORCE_START_* and RATELIMIT_ADMIN_TOKEN lines of .dev.vars.
grpc-js itself reads GRPC_TRACE and GRPC_VERBOSITY (its own diagnostics).

environment:
${variablesHelp()}`;

const args = process.argv.slice(2);
if (args.some((arg) => arg === "-h" || arg === "--help")) {
  console.log(usage);
  process.exit(0);
}
if (args.length > 0) {
  console.error(`grpc-gateway: unexpected argument ${args[0]} (settings are environment variables)\n${usage}`);
  process.exit(2);
}

/** @param {string} level @param {string} message @param {object} [fields] */
function log(level, message, fields = {}) {
  const line = JSON.stringify({ level, "@message": message, "@timestamp": new Date().toISOString(), ...fields });
  if (level === "info") console.log(line);
  else console.error(line);
}

let settings;
try {
  settings = gatewaySettings(process.env);
  checkTlsFiles(settings);
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
