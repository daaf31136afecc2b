// Settings of the Node gRPC gateway, read from the environment with zod. The GRPC_* names and meanings are the
// reference service's (spec 3); the RATELIMIT_UPSTREAM_* and GRPC_GATEWAY_* ones exist because the decisions are
// made by the Worker behind the gateway. An empty variable means its default, as for the Worker's settings. Each field
// carries its kind, default and meaning as zod metadata, as the Worker's do: docs/settings.md is generated from them.
import { createPrivateKey, X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import { createSecureContext } from "node:tls";
import { z } from "zod";

const durationUnits = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/**
 * Parses a Go duration ("10s", "1m30s", "150ms", "0") into milliseconds.
 * @param {string} text
 * @returns {number | undefined} undefined when the text is not a duration
 */
export function parseDurationMs(text) {
  if (text === "0") return 0;
  let total = 0;
  let consumed = 0;
  for (const match of text.matchAll(/(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/gy)) {
    total += Number(match[1]) * durationUnits[/** @type {keyof typeof durationUnits} */ (match[2])];
    consumed += match[0].length;
  }
  return consumed === text.length && consumed > 0 ? total : undefined;
}

/** @param {unknown} value */
const unsetIfEmpty = (value) => (value === "" ? undefined : value);

/** @param {string} [defaultValue] documented only: the caller applies it */
const optionalString = (defaultValue) =>
  z.preprocess(unsetIfEmpty, z.string().optional()).meta({ kind: "string", default: defaultValue });

/** @param {string} defaultValue */
const string = (defaultValue) => optionalString(defaultValue).transform((value) => value ?? defaultValue);

/** Read as the Worker reads booleans (src/shared/settings.ts booleanText). @param {boolean} defaultValue */
const boolean = (defaultValue) =>
  z
    .preprocess(
      unsetIfEmpty,
      z
        .stringbool({ truthy: ["true", "1", "t"], falsy: ["false", "0", "f"], case: "insensitive" })
        .optional()
        .transform((value) => value ?? defaultValue),
    )
    .meta({ kind: "boolean", default: String(defaultValue) });

/**
 * An integer as Go's strconv.ParseInt reads it with base 0, as the reference's settings are read (envconfig): decimal
 * digits, or 0x, 0o, 0b or a leading 0 (octal) with a sign; anything else, " " or "8e3" included, is no integer
 * (Number() would read " " as 0).
 */
const GO_INTEGER = /^([+-]?)(?:0[xX]([0-9a-fA-F]+)|0[oO]([0-7]+)|0[bB]([01]+)|0([0-7]+)|(0|[1-9][0-9]*))$/;

/** @param {string} text @returns {number} NaN for text Go's ParseInt refuses */
function goInteger(text) {
  const parts = GO_INTEGER.exec(text);
  if (!parts) return Number.NaN;
  const [, sign, hex, octal, binary, leadingZero, decimal] = parts;
  const value =
    hex !== undefined
      ? parseInt(hex, 16)
      : binary !== undefined
        ? parseInt(binary, 2)
        : (octal ?? leadingZero) !== undefined
          ? parseInt(octal ?? leadingZero, 8)
          : Number(decimal);
  return sign === "-" ? -value : value;
}

/**
 * An integer within bounds (goInteger).
 * @param {number} defaultValue @param {number} min @param {number} [max]
 */
const integer = (defaultValue, min, max) => {
  const bounded = z.number().int().min(min);
  const digits = z
    .string()
    .refine((text) => GO_INTEGER.test(text), "expected a whole number")
    .transform(goInteger)
    .pipe(max === undefined ? bounded : bounded.max(max));
  return z
    .preprocess(unsetIfEmpty, digits.optional())
    .transform((value) => value ?? defaultValue)
    .meta({ kind: "integer", default: String(defaultValue) });
};

/**
 * Why gRPC would refuse this header (grpc-js throws with the value in its message), else undefined: a name of lower-
 * case letters, digits, `_`, `.`, `-` (a `-bin` one would need a binary value), a value of printable ASCII.
 * @param {string} name lower-cased @param {string} value @param {number} position from 1
 */
function metadataProblem(name, value, position) {
  if (!/^[0-9a-z_.-]+$/.test(name) || name.endsWith("-bin")) {
    return `header ${position}: a gRPC metadata name has only letters, digits, "_", "." and "-", and no "-bin" suffix`;
  }
  if (!/^[\x20-\x7e]*$/.test(value)) return `header ${position}: its value may have only printable ASCII characters`;
  return undefined;
}

/**
 * A list of `name<sep>value` pairs separated by commas (spaces around each trimmed), as [name, value] entries.
 * @param {string} separator @param {string} variable
 * @param {(name: string, value: string, position: number) => string | undefined} [problem] refuses a pair
 */
const pairs = (separator, variable, problem = () => undefined) =>
  string("")
    .transform((text, ctx) => {
      /** @type {[string, string][]} */
      const out = [];
      for (const item of text
        .split(",")
        .map((part) => part.trim())
        .filter(Boolean)) {
        const at = item.indexOf(separator);
        const refused =
          at <= 0
            ? `expected ${variable} as name${separator}value pairs separated by commas`
            : problem(item.slice(0, at).trim(), item.slice(at + 1).trim(), out.length + 1);
        if (refused) {
          ctx.addIssue({ code: "custom", message: refused });
          return z.NEVER;
        }
        out.push([item.slice(0, at).trim(), item.slice(at + 1).trim()]);
      }
      return out;
    })
    .meta({ kind: "list", items: `name${separator}value pairs` });

/** Node's longest timer: a longer one fires after 1 ms, so such a value would cut every call or connection at once. */
const MAX_TIMER_MS = 2_147_483_647;

/** A Go duration in milliseconds, or undefined when unset. */
const optionalDuration = () =>
  optionalString()
    .transform((text, ctx) => {
      if (text === undefined) return undefined;
      const exact = parseDurationMs(text);
      if (exact === undefined) {
        ctx.addIssue({ code: "custom", message: 'expected a duration such as "10s", "500ms" or "1m"' });
        return z.NEVER;
      }
      // Whole milliseconds, rounded up: the Worker reads connect-timeout-ms as an integer, and timers keep no less.
      const ms = Math.ceil(exact);
      if (ms > MAX_TIMER_MS) {
        ctx.addIssue({ code: "custom", message: "must be at most 596h (the longest timer Node keeps)" });
        return z.NEVER;
      }
      return ms;
    })
    .meta({ kind: "duration" });

/** A connection's age limit: `0` means none, as in grpc-go (a GOAWAY at once would refuse every call). */
const connectionAge = () => optionalDuration().transform((ms) => (ms === 0 ? undefined : ms));

/** A time-out: `0` would fail every call at once. @param {string} defaultValue */
const timeout = (defaultValue) => duration(defaultValue).pipe(z.number().min(1, "must be more than 0"));

/** A Go duration in milliseconds. @param {string} defaultValue */
const duration = (defaultValue) =>
  optionalDuration()
    .transform((ms) => ms ?? /** @type {number} */ (parseDurationMs(defaultValue)))
    .meta({ kind: "duration", default: defaultValue });

export const GatewaySettingsSchema = z
  .object({
    RATELIMIT_UPSTREAM_URL: optionalString()
      .pipe(z.url({ protocol: /^https?$/ }).optional())
      .meta({
        kind: "url",
        description:
          "Origin of the Worker that decides, e.g. `https://ratelimit.example.com`; unset: the local `wrangler dev` " +
          "at `http://127.0.0.1:$PORT` (`npm start` passes the origin of the one it runs).",
      }),
    PORT: integer(8787, 1, 65535).describe("Port of the local `wrangler dev`, for the default RATELIMIT_UPSTREAM_URL."),
    RATELIMIT_UPSTREAM_CONNECT_TIMEOUT: timeout("2s").describe(
      "How long opening a connection to the Worker may take; then the call answers UNAVAILABLE.",
    ),
    RATELIMIT_UPSTREAM_TIMEOUT: timeout("3s").describe(
      "Time limit of a forwarded call whose caller set no deadline (a caller's deadline always applies, longer " +
        "ones included); then the call answers UNAVAILABLE. Above the Worker's KVSTORE_TIMEOUT (2 s), so that a " +
        "hung store is answered with the store's own error.",
    ),
    RATELIMIT_MAX_REQUEST_BYTES: integer(1024 * 1024, 1).describe(
      "Largest ShouldRateLimit message taken, in bytes; a larger one answers RESOURCE_EXHAUSTED before it is " +
        "forwarded (grpc-js's own limit is 4 MiB). The Worker's setting of the same name refuses larger bodies " +
        "anyway: give both the same value.",
    ),
    GRPC_HOST: string("0.0.0.0").describe("Address the gRPC server binds; ignored when GRPC_UDS is set."),
    GRPC_PORT: integer(8081, 0, 65535).describe("Port of the gRPC server; `0` takes a free one (logged)."),
    GRPC_UDS: optionalString().describe(
      "Unix socket path to serve on instead of GRPC_HOST and GRPC_PORT (a stale socket file is replaced; one a " +
        "process still listens on is refused at start).",
    ),
    GRPC_MAX_CONNECTION_AGE: connectionAge().describe(
      "Largest age of a client connection, plus or minus 10 % jitter; then it is sent a GOAWAY. Unset or `0`: no " +
        "limit.",
    ),
    GRPC_MAX_CONNECTION_AGE_GRACE: connectionAge().describe(
      "After GRPC_MAX_CONNECTION_AGE, how long calls may still run before the connection is closed. Unset or `0`: " +
        "no limit.",
    ),
    GRPC_SERVER_USE_TLS: boolean(false).describe("Serve TLS with GRPC_SERVER_TLS_CERT and GRPC_SERVER_TLS_KEY."),
    GRPC_SERVER_TLS_CERT: optionalString().describe(
      "PEM file of the certificate chain; required with TLS. Checked every 0.5 s and reloaded when it changes " +
        "(new connections get the new pair; a pair that does not load is logged and the previous one kept).",
    ),
    GRPC_SERVER_TLS_KEY: optionalString().describe(
      "PEM file of the private key; required with TLS, reloaded likewise.",
    ),
    GRPC_CLIENT_TLS_CACERT: optionalString().describe(
      "PEM file of the CA that signs client certificates: turns on mutual TLS (needs GRPC_SERVER_USE_TLS).",
    ),
    GRPC_CLIENT_TLS_SAN: optionalString().describe(
      "With mutual TLS, a DNS name the client certificate must carry among its subject alternative names; calls " +
        "from other certificates answer UNAUTHENTICATED.",
    ),
    CONFIG_TYPE: z
      .preprocess(unsetIfEmpty, z.enum(["FILE", "GRPC_XDS_SOTW"]).optional())
      .transform((v) => v ?? "FILE")
      .meta({
        kind: "choice",
        choices: ["FILE", "GRPC_XDS_SOTW"],
        default: "FILE",
        description:
          "`FILE`: the Worker's own rules (bundled files or its runtime set). `GRPC_XDS_SOTW`: this process is the " +
          "xDS client (it subscribes to a management server's rate limit configuration) and stores each snapshot " +
          "in the Worker; set the same value for the Worker.",
      }),
    FORCE_START_WITHOUT_INITIAL_CONFIG: boolean(false).describe(
      "With `GRPC_XDS_SOTW`, `false` opens the gRPC port only once the first snapshot is accepted; `true` at once.",
    ),
    RATELIMIT_ADMIN_TOKEN: optionalString()
      .meta({ secret: true })
      .describe(
        "The Worker's admin bearer token, with which snapshots are stored (PUT /rlconfig/files); required with " +
          "`GRPC_XDS_SOTW`.",
      ),
    CONFIG_GRPC_XDS_NODE_ID: string("default").describe("The node id the client presents to the management server."),
    CONFIG_GRPC_XDS_NODE_METADATA: pairs("=", "CONFIG_GRPC_XDS_NODE_METADATA").describe(
      "`k1=v1,k2=v2`: the node's metadata (string values).",
    ),
    CONFIG_GRPC_XDS_SERVER_URL: string("localhost:18000")
      .pipe(
        z
          .string()
          .regex(
            /^(?:dns:\/\/\/)?(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):\d{1,5}$/,
            'expected host:port, e.g. "localhost:18000"',
          ),
      )
      .describe(
        "`host:port` of the management server (`[v6]:port` for an IPv6 address; a `dns:///` prefix is allowed).",
      ),
    CONFIG_GRPC_XDS_SERVER_CONNECT_RETRY_INTERVAL: duration("3s").describe(
      "While the server cannot be reached, how often a connection is tried (grpc-js adds its own jitter).",
    ),
    XDS_CLIENT_BACKOFF_INITIAL_INTERVAL: duration("10s").describe(
      "After a stream breaks, the first wait before the next one; doubled per failure up to the maximum.",
    ),
    XDS_CLIENT_BACKOFF_MAX_INTERVAL: duration("60s").describe("The longest wait between streams."),
    XDS_CLIENT_BACKOFF_RANDOM_FACTOR: z
      .preprocess(
        unsetIfEmpty,
        z
          .string()
          // The decimal forms of Go's strconv.ParseFloat, as the reference reads it: ".5", "5e-1", "+0.5".
          .regex(/^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/, "expected a decimal number from 0 to 1")
          .transform(Number)
          .pipe(z.number().max(1))
          .optional(),
      )
      .transform((v) => v ?? 0.5)
      .meta({
        kind: "number",
        default: "0.5",
        description:
          "Each wait is spread by plus or minus this fraction of itself when XDS_CLIENT_BACKOFF_JITTER is on.",
      }),
    XDS_CLIENT_BACKOFF_JITTER: boolean(true).describe("Spread the waits (see XDS_CLIENT_BACKOFF_RANDOM_FACTOR)."),
    XDS_CLIENT_MAX_MSG_SIZE_IN_BYTES: integer(0, 0).describe(
      "Largest snapshot message accepted, in bytes; `0` keeps grpc-js's default (4 MiB).",
    ),
    CONFIG_GRPC_XDS_SERVER_USE_TLS: boolean(false).describe(
      "TLS to the management server, checked against the system's CAs unless CONFIG_GRPC_XDS_SERVER_TLS_CACERT is set.",
    ),
    CONFIG_GRPC_XDS_SERVER_TLS_CACERT: optionalString().describe(
      "PEM file of the CA of the server's certificate; needs TLS.",
    ),
    CONFIG_GRPC_XDS_CLIENT_TLS_CERT: optionalString().describe(
      "PEM file of a client certificate, with CONFIG_GRPC_XDS_CLIENT_TLS_KEY (both or neither); needs TLS.",
    ),
    CONFIG_GRPC_XDS_CLIENT_TLS_KEY: optionalString().describe("PEM file of the client certificate's private key."),
    CONFIG_GRPC_XDS_SERVER_TLS_SAN: optionalString().describe(
      "The name the server's certificate must carry, when it differs from the URL's host; needs TLS.",
    ),
    CONFIG_GRPC_XDS_CLIENT_ADDITIONAL_HEADERS: pairs(
      ":",
      "CONFIG_GRPC_XDS_CLIENT_ADDITIONAL_HEADERS",
      (name, value, at) => metadataProblem(name.toLowerCase(), value, at),
    ).describe(
      "`k1:v1,k2:v2`: gRPC metadata sent with the stream, e.g. an authorization token (names lower-cased). A name " +
        "has only letters, digits, `_`, `.` and `-` (no `-bin` suffix), a value only printable ASCII; any other is " +
        "refused at start.",
    ),
    GRPC_GATEWAY_DRAIN_TIME: duration("1s").describe(
      "After SIGTERM, how long the health check answers NOT_SERVING while calls are still taken.",
    ),
    GRPC_GATEWAY_SHUTDOWN_GRACE: duration("10s").describe(
      "After the drain, how long calls in flight may take to finish before the gateway exits anyway.",
    ),
  })
  .superRefine((settings, ctx) => {
    if (settings.GRPC_SERVER_USE_TLS) {
      for (const name of /** @type {const} */ (["GRPC_SERVER_TLS_CERT", "GRPC_SERVER_TLS_KEY"])) {
        if (settings[name]) continue;
        ctx.addIssue({ code: "custom", path: [name], message: "is required when GRPC_SERVER_USE_TLS is true" });
      }
    } else if (settings.GRPC_CLIENT_TLS_CACERT) {
      const message = "mutual TLS needs GRPC_SERVER_USE_TLS=true";
      ctx.addIssue({ code: "custom", path: ["GRPC_CLIENT_TLS_CACERT"], message });
    }
    if (settings.GRPC_CLIENT_TLS_SAN && !settings.GRPC_CLIENT_TLS_CACERT) {
      ctx.addIssue({
        code: "custom",
        path: ["GRPC_CLIENT_TLS_SAN"],
        message: "needs GRPC_CLIENT_TLS_CACERT (mutual TLS)",
      });
    }
    if (settings.CONFIG_TYPE === "GRPC_XDS_SOTW" && !settings.RATELIMIT_ADMIN_TOKEN) {
      const message = "is required when CONFIG_TYPE is GRPC_XDS_SOTW (snapshots are stored with it)";
      ctx.addIssue({ code: "custom", path: ["RATELIMIT_ADMIN_TOKEN"], message });
    }
    if (Boolean(settings.CONFIG_GRPC_XDS_CLIENT_TLS_CERT) !== Boolean(settings.CONFIG_GRPC_XDS_CLIENT_TLS_KEY)) {
      const message = "CONFIG_GRPC_XDS_CLIENT_TLS_CERT and CONFIG_GRPC_XDS_CLIENT_TLS_KEY go together";
      ctx.addIssue({ code: "custom", path: ["CONFIG_GRPC_XDS_CLIENT_TLS_CERT"], message });
    }
    if (!settings.CONFIG_GRPC_XDS_SERVER_USE_TLS) {
      for (const name of /** @type {const} */ ([
        "CONFIG_GRPC_XDS_SERVER_TLS_CACERT",
        "CONFIG_GRPC_XDS_CLIENT_TLS_CERT",
        "CONFIG_GRPC_XDS_SERVER_TLS_SAN",
      ])) {
        if (settings[name])
          ctx.addIssue({ code: "custom", path: [name], message: "needs CONFIG_GRPC_XDS_SERVER_USE_TLS=true" });
      }
    }
  })
  .transform(({ RATELIMIT_UPSTREAM_URL, PORT, ...rest }) => ({
    ...rest,
    RATELIMIT_UPSTREAM_URL: (RATELIMIT_UPSTREAM_URL ?? `http://127.0.0.1:${PORT}`).replace(/\/+$/, ""),
  }));

/** @typedef {z.output<typeof GatewaySettingsSchema>} GatewaySettings */

/**
 * Reads the settings; a malformed value fails with a message naming the variable, never its value.
 * @param {Record<string, string | undefined>} env
 * @returns {GatewaySettings}
 */
export function gatewaySettings(env) {
  const parsed = GatewaySettingsSchema.safeParse(env);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`);
  throw new Error(`invalid gateway settings: ${problems.join("; ")}`);
}

/**
 * The PEM files the settings name, each as its variable, what it holds, and the certificate a key must match; only
 * those whose TLS is on.
 * @param {GatewaySettings} settings
 * @returns {[keyof GatewaySettings, "certificate" | "key", keyof GatewaySettings | undefined][]}
 */
function pemFilesInUse(settings) {
  /** @type {[keyof GatewaySettings, "certificate" | "key", keyof GatewaySettings | undefined][]} */
  const files = [];
  if (settings.GRPC_SERVER_USE_TLS) {
    files.push(
      ["GRPC_SERVER_TLS_CERT", "certificate", undefined],
      ["GRPC_SERVER_TLS_KEY", "key", "GRPC_SERVER_TLS_CERT"],
    );
    files.push(["GRPC_CLIENT_TLS_CACERT", "certificate", undefined]);
  }
  if (settings.CONFIG_GRPC_XDS_SERVER_USE_TLS) {
    files.push(["CONFIG_GRPC_XDS_SERVER_TLS_CACERT", "certificate", undefined]);
    files.push(["CONFIG_GRPC_XDS_CLIENT_TLS_CERT", "certificate", undefined]);
    files.push(["CONFIG_GRPC_XDS_CLIENT_TLS_KEY", "key", "CONFIG_GRPC_XDS_CLIENT_TLS_CERT"]);
  }
  return files.filter(([name]) => settings[name] !== undefined);
}

/**
 * Why a PEM file cannot serve, else undefined; never its path or content.
 * @param {string} path @param {"certificate" | "key"} holds @param {string | undefined} certificatePath
 */
function pemProblem(path, holds, certificatePath) {
  let pem;
  try {
    pem = readFileSync(path);
  } catch (error) {
    return `cannot read the file (${/** @type {NodeJS.ErrnoException} */ (error).code ?? "error"})`;
  }
  try {
    if (holds === "certificate") new X509Certificate(pem);
    else createPrivateKey(pem);
  } catch {
    return holds === "certificate" ? "holds no PEM certificate" : "holds no unencrypted PEM private key";
  }
  if (certificatePath === undefined) return undefined;
  try {
    createSecureContext({ cert: readFileSync(certificatePath), key: pem });
  } catch {
    return "is not the key of the certificate given with it";
  }
  return undefined;
}

/**
 * Reads every PEM file the settings use, so that a missing or wrong one fails the start naming its variable (grpc-js
 * and Node would say ENOENT or "no start line" without it).
 * @param {GatewaySettings} settings
 */
export function checkTlsFiles(settings) {
  /** @type {Map<string, string>} */
  const problems = new Map();
  for (const [name, holds, certificate] of pemFilesInUse(settings)) {
    // A key is matched only against a certificate that could be read.
    const certificatePath =
      certificate && !problems.has(certificate) ? /** @type {string} */ (settings[certificate]) : undefined;
    const problem = pemProblem(/** @type {string} */ (settings[name]), holds, certificatePath);
    if (problem) problems.set(name, problem);
  }
  if (problems.size === 0) return;
  const listed = [...problems].map(([name, problem]) => `${name}: ${problem}`);
  throw new Error(`invalid gateway settings: ${listed.join("; ")}`);
}
