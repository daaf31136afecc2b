#!/usr/bin/env node
// `npm run client -- -dial_string localhost:8081 -domain mydomain -descriptors key=value,key2=value2 -descriptors other=x`:
// the reference's command-line client. Calls ShouldRateLimit over real gRPC, prints `response: <JSON>` (proto3
// JSON, as POST /json answers) and exits 0; on any error prints it to stderr and exits 1.
import grpc from "@grpc/grpc-js";
import { readFileSync } from "node:fs";
import { loadProto } from "./proto.mjs";
import { parseDurationMs } from "./settings.mjs";

const USAGE = `Usage: npm run client -- [flags]
  -dial_string string        server address, host:port or unix:/path (default "localhost:8081")
  -domain string             rate limit domain
  -descriptors value         one descriptor as comma-separated key=value pairs; repeat for more descriptors
  -timeout duration          deadline of the call (default "10s")
  -grpc-use-tls              use TLS
  -grpc-server-ca-file path  CA that signed the server certificate (default: the system's roots)
  -grpc-cert-file path       client certificate, for mutual TLS
  -grpc-key-file path        client key, for mutual TLS
  -h, -help                  this help
Flags take one or two dashes, and -name=value or -name value. Environment: none of its own (flags only);
grpc-js itself reads GRPC_TRACE and GRPC_VERBOSITY (its own diagnostics).`;

const BOOLEAN_FLAGS = new Set(["grpc-use-tls"]);
const VALUE_FLAGS = new Set([
  "dial_string",
  "domain",
  "descriptors",
  "timeout",
  "grpc-server-ca-file",
  "grpc-cert-file",
  "grpc-key-file",
]);

class UsageError extends Error {}

/**
 * Parses flags as Go's flag package does: -name value, -name=value, or with two dashes; booleans take no value.
 * @param {string[]} args
 */
function parseFlags(args) {
  /** @type {Record<string, string[]>} */
  const values = {};
  for (let i = 0; i < args.length; i++) {
    const match = /^--?([^=]+)(?:=(.*))?$/s.exec(args[i]);
    if (!match) throw new UsageError(`unexpected argument ${args[i]}`);
    const [, name, inline] = match;
    if (name === "h" || name === "help") return undefined;
    let value = inline;
    if (BOOLEAN_FLAGS.has(name)) value ??= "true";
    else if (!VALUE_FLAGS.has(name)) throw new UsageError(`flag provided but not defined: -${name}`);
    else if (value === undefined) {
      if (i + 1 >= args.length) throw new UsageError(`flag needs an argument: -${name}`);
      value = args[++i];
    }
    (values[name] ??= []).push(value);
  }
  const last = (/** @type {string} */ name, /** @type {string} */ fallback) => values[name]?.at(-1) ?? fallback;
  const useTls = last("grpc-use-tls", "false");
  // Go's strconv.ParseBool, as the reference's flag reads it, and as the gateway's own settings are read.
  if (!/^(true|false|1|0|t|f)$/i.test(useTls)) {
    throw new UsageError(`invalid boolean value ${JSON.stringify(useTls)} for -grpc-use-tls`);
  }
  const timeoutMs = parseDurationMs(last("timeout", "10s"));
  if (timeoutMs === undefined)
    throw new UsageError("invalid value for -timeout: expected a duration such as 10s or 500ms");
  return {
    dialString: last("dial_string", "localhost:8081"),
    domain: last("domain", ""),
    descriptors: (values.descriptors ?? []).map(parseDescriptor),
    timeoutMs,
    useTls: /^(true|1|t)$/i.test(useTls),
    caFile: values["grpc-server-ca-file"]?.at(-1),
    certFile: values["grpc-cert-file"]?.at(-1),
    keyFile: values["grpc-key-file"]?.at(-1),
  };
}

/** "k=v,k2=v2" → a descriptor; each pair must hold exactly one "=", as in the reference. */
function parseDescriptor(/** @type {string} */ text) {
  const entries = text.split(",").map((pair) => {
    const parts = pair.split("=");
    if (parts.length !== 2) throw new UsageError(`invalid descriptor list: ${JSON.stringify(text)}`);
    return { key: parts[0], value: parts[1] };
  });
  return { entries };
}

/** grpc-js status names as Go's codes print them (DEADLINE_EXCEEDED → DeadlineExceeded). */
function codeName(/** @type {number} */ code) {
  const name = grpc.status[code] ?? String(code);
  if (name === "CANCELLED") return "Canceled";
  if (name === "OK") return "OK";
  return name.toLowerCase().replace(/(?:^|_)(\w)/g, (_, letter) => letter.toUpperCase());
}

/**
 * A decoded Duration (seconds a string, as proto.mjs loads 64-bit integers; either field may be absent) as POST /json
 * writes it (durationJson in src/ratelimit/routes/codec-json-common.ts): whole seconds, then milliseconds if any.
 * @param {{ seconds?: string | number, nanos?: number }} duration
 */
function durationJson({ seconds = 0, nanos = 0 }) {
  const ms = Math.round(Number(seconds) * 1000 + nanos / 1e6);
  const whole = Math.floor(ms / 1000);
  const millis = ms - whole * 1000;
  return millis === 0 ? `${whole}s` : `${whole}.${String(millis).padStart(3, "0")}s`;
}

/** proto3 JSON of a decoded response: the same text shape as POST /json (durations as "58s" or "0.100s"). */
function responseJson(/** @type {object} */ response) {
  return JSON.stringify(response, (key, value) =>
    key === "durationUntilReset" && value && typeof value === "object" ? durationJson(value) : value,
  );
}

function main() {
  let flags;
  try {
    flags = parseFlags(process.argv.slice(2));
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    console.error(`${error.message}\n${USAGE}`);
    process.exit(1);
  }
  if (!flags) {
    console.log(USAGE);
    return;
  }
  const credentials = flags.useTls
    ? grpc.credentials.createSsl(
        flags.caFile ? readFileSync(flags.caFile) : null,
        flags.keyFile ? readFileSync(flags.keyFile) : null,
        flags.certFile ? readFileSync(flags.certFile) : null,
      )
    : grpc.credentials.createInsecure();
  const { RateLimitService } = loadProto("envoy/service/ratelimit/v3/rls.proto").envoy.service.ratelimit.v3;
  const client = new RateLimitService(flags.dialString, credentials);
  const request = { domain: flags.domain, descriptors: flags.descriptors };
  console.log(`domain: ${flags.domain}, descriptors: ${JSON.stringify(flags.descriptors)}`);
  /** @param {grpc.ServiceError | null} error @param {object} response */
  const printAnswer = (error, response) => {
    client.close();
    if (error) {
      console.error(`request error: rpc error: code = ${codeName(error.code)} desc = ${error.details}`);
      process.exit(1);
    }
    console.log(`response: ${responseJson(response)}`);
  };
  client.ShouldRateLimit(request, { deadline: Date.now() + flags.timeoutMs }, printAnswer);
}

main();
