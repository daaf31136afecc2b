// Settings of the rate limit service, with the spec's names and defaults (the reference's envconfig names).
// Parsed once per isolate; each field says what it does here, including where Workers change the meaning.
import { z } from "../shared/zod";
import {
  envBoolean,
  envDurationMs,
  envEnum,
  envInteger,
  envNumber,
  envOptionalString,
  envSecret,
  envString,
  oneLine,
  settingsReader,
  unsetIfEmpty,
  type SettingDoc,
} from "../shared/settings";
import { perIsolate } from "../shared/isolate";
import { DEFAULT_LIMITS, type ConfigLimits, type RequestLimits } from "./core/limits";

/**
 * The defaults of the statistics settings that have an alias: their fields stay undefined when unset, so that the
 * spec's name can win over the reference's, and stats/config.ts applies these once the aliases are settled.
 */
export const STATS_DEFAULTS = {
  USE_METRICSD: true,
  METRICSD_HOST: "localhost",
  METRICSD_PORT: 8125,
  USE_TAGGED_METRICSD: false,
  USE_PULLMETRICS: false,
  PULLMETRICS_PATH: "/metrics",
} as const;

/** A boolean that stays undefined when unset, so a spec name can win over the reference's alias. */
const envOptionalBoolean = (effectiveDefault?: boolean) =>
  z
    .preprocess(
      unsetIfEmpty,
      z.stringbool({ truthy: ["true", "1"], falsy: ["false", "0"], case: "insensitive" }).optional(),
    )
    .meta({ kind: "boolean", default: effectiveDefault === undefined ? undefined : String(effectiveDefault) });
const envOptionalPort = (effectiveDefault?: number) =>
  z
    .preprocess(unsetIfEmpty, z.coerce.number().int().min(1).max(65535).optional())
    .meta({ kind: "integer", default: effectiveDefault === undefined ? undefined : String(effectiveDefault) });
const envOptionalPath = (effectiveDefault?: string) =>
  z.preprocess(unsetIfEmpty, z.string().startsWith("/").optional()).meta({ kind: "string", default: effectiveDefault });

/** The reference's name for a setting: read when the spec's name is unset (stats/config.ts settles which). */
const aliasOf = <S extends z.ZodType>(schema: S, name: string) => schema.meta({ aliasOf: name });

/**
 * Statistics, push and pull metrics, and traces (src/ratelimit/stats/). Where the reference's own name is an alias,
 * both are read and stats/config.ts resolves them: the spec's name wins when both are set. LOG_LEVEL and LOG_FORMAT
 * apply to every service and are read by src/shared/log.ts.
 */
export const observabilityFields = {
  DISABLE_STATS: envBoolean(false).describe(
    "Turns every statistic off: nothing is counted, flushed or pushed, and /stats and /metrics answer empty.",
  ),
  STATS_FLUSH_INTERVAL: envDurationMs("10s").describe(oneLine`
    How often an isolate sends the statistics it gathered to the aggregate (and to statsd); \`0\` flushes after every
    request. A flush waits inside the request's \`waitUntil\`, which lives at most 30 s, so values above \`25s\` act as
    \`25s\`.`),
  EXTRA_TAGS: envString("").describe(oneLine`
    \`k1:v1,k2:v2\`: tags on every statistic (statsd name suffix \`.__k=v\`, tagged statsd tags, Prometheus
    labels).`),
  USE_METRICSD: envOptionalBoolean(STATS_DEFAULTS.USE_METRICSD).describe(oneLine`
    Push statsd lines (the plain-text metrics protocol of statsd) over TCP at each flush; Workers have no UDP.
    \`false\` writes each flush's changes to the log instead, unless pull metrics are on.`),
  USE_STATSD: aliasOf(envOptionalBoolean(), "USE_METRICSD"),
  METRICSD_HOST: envOptionalString()
    .meta({ default: STATS_DEFAULTS.METRICSD_HOST })
    .describe("Host of the statsd server."),
  STATSD_HOST: aliasOf(envOptionalString(), "METRICSD_HOST"),
  METRICSD_PORT: envOptionalPort(STATS_DEFAULTS.METRICSD_PORT).describe("TCP port of the statsd server."),
  STATSD_PORT: aliasOf(envOptionalPort(), "METRICSD_PORT"),
  USE_TAGGED_METRICSD: envOptionalBoolean(STATS_DEFAULTS.USE_TAGGED_METRICSD).describe(oneLine`
    Push tagged statsd lines (the DogStatsD form, \`name:1|c|#k:v\`) instead of plain ones, rewritten by the
    mogrifiers.`),
  USE_DOG_STATSD: aliasOf(envOptionalBoolean(), "USE_TAGGED_METRICSD"),
  TAGGED_METRICSD_MOGRIFIERS: envOptionalString().describe(oneLine`
    Comma-separated names N of mogrifiers: rules that turn a statistic's name into a shorter name and tags for tagged
    statsd, each defined by the TAGGED_METRICSD_MOGRIFIER_<N>_* variables below.`),
  DOG_STATSD_MOGRIFIERS: aliasOf(envOptionalString(), "TAGGED_METRICSD_MOGRIFIERS"),
  USE_DOG_STATSD_MOGRIFIERS: aliasOf(envOptionalString(), "TAGGED_METRICSD_MOGRIFIERS"),
  USE_PULLMETRICS: envOptionalBoolean(STATS_DEFAULTS.USE_PULLMETRICS).describe(
    "Serve the statistics in the Prometheus text format at PULLMETRICS_PATH.",
  ),
  USE_PROMETHEUS: aliasOf(envOptionalBoolean(), "USE_PULLMETRICS"),
  PULLMETRICS_ADDR: envOptionalString().describe(
    "Accepted, not used: the Worker serves the Prometheus page on its own origin.",
  ),
  PROMETHEUS_ADDR: aliasOf(envOptionalString(), "PULLMETRICS_ADDR"),
  PULLMETRICS_PATH: envOptionalPath(STATS_DEFAULTS.PULLMETRICS_PATH).describe(
    "Path of the Prometheus page, on the Worker's origin.",
  ),
  PROMETHEUS_PATH: aliasOf(envOptionalPath(), "PULLMETRICS_PATH"),
  PULLMETRICS_MAPPER_YAML: envOptionalString().describe(oneLine`
    A statsd_exporter mapping (rules naming Prometheus metrics and labels after statsd names) that replaces the
    default one: the YAML itself, or the path of a file under config/, bundled with the Worker (e.g.
    \`metrics/mapper.yaml\`). One that does not parse makes the page answer 500 naming the variable.`),
  PROMETHEUS_MAPPER_YAML: aliasOf(envOptionalString(), "PULLMETRICS_MAPPER_YAML"),
  TRACING_ENABLED: envBoolean(false).describe(
    "Export one span per decision over OTLP/HTTP (OpenTelemetry's protocol, in its JSON form).",
  ),
  TRACING_EXPORTER_PROTOCOL: envEnum(["http", "grpc"], "http").describe(
    "OTLP transport. A Worker cannot speak OTLP/gRPC, so `grpc` also exports over OTLP/HTTP (and logs so once).",
  ),
  TRACING_SERVICE_NAME: envString("RateLimit").describe("The spans' resource attribute `service.name`."),
  TRACING_SERVICE_NAMESPACE: envString("").describe("The spans' resource attribute `service.namespace`."),
  TRACING_SERVICE_INSTANCE_ID: envString("").describe(
    "The spans' resource attribute `service.instance.id`; empty: a random UUID per isolate.",
  ),
  TRACING_SAMPLING_RATE: envNumber(1, (s) => s.min(0).max(1)).describe(
    "Share of new traces sampled (0 to 1); a caller's `traceparent` header decides for its own trace.",
  ),
  OTEL_EXPORTER_OTLP_ENDPOINT: envString("http://localhost:4318")
    .meta({ kind: "url" })
    .describe("OTLP/HTTP base URL: spans go to `<endpoint>/v1/traces`."),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: envOptionalString()
    .meta({ kind: "url" })
    .describe("Full URL for spans; wins over OTEL_EXPORTER_OTLP_ENDPOINT."),
  OTEL_EXPORTER_OTLP_HEADERS: envString("").describe(
    "`k=v,k2=v2` (values URL-encoded) sent with every export, e.g. `authorization=Bearer%20...`.",
  ),
  OTEL_EXPORTER_OTLP_TRACES_HEADERS: envOptionalString().describe(
    "The same, for spans only; wins over OTEL_EXPORTER_OTLP_HEADERS.",
  ),
};

/**
 * The variables of each mogrifier N named in TAGGED_METRICSD_MOGRIFIERS. stats/statsd.ts reads them itself, since
 * their names are the operator's choice; the first pattern that matches a statistic's name rewrites it.
 */
export const mogrifierSettingDocs: SettingDoc[] = [
  {
    name: "TAGGED_METRICSD_MOGRIFIER_<N>_PATTERN",
    kind: "string",
    alias: "DOG_STATSD_MOGRIFIER_<N>_PATTERN",
    description: "Regular expression matched against a statistic's name; required.",
  },
  {
    name: "TAGGED_METRICSD_MOGRIFIER_<N>_NAME",
    kind: "string",
    alias: "DOG_STATSD_MOGRIFIER_<N>_NAME",
    description: "The new name, with `$1`, `$2`... for the pattern's groups; required.",
  },
  {
    name: "TAGGED_METRICSD_MOGRIFIER_<N>_TAGS",
    kind: "string",
    alias: "DOG_STATSD_MOGRIFIER_<N>_TAGS",
    description: "`k:$1,k2:$2`: the tags added; an empty key or value answers 500 naming the variable.",
  },
];

/**
 * Limits on what the service reads, not in the spec (the reference has none): each bounds the work and memory one
 * request can cost, and every refusal names its setting. Defaults live in core/limits.ts.
 */
export const limitFields = {
  RATELIMIT_MAX_REQUEST_BYTES: envInteger(DEFAULT_LIMITS.RATELIMIT_MAX_REQUEST_BYTES, 1).describe(oneLine`
    Largest body, in bytes, of POST /json and of ShouldRateLimit over Connect, gRPC-Web and the reverse bridge; a
    larger one is refused before it is read whole (413 on /json, RESOURCE_EXHAUSTED on the gRPC routes, as grpc-go
    answers an oversized message). A request is a few hundred bytes. Give the gRPC gateway the same value.`),
  RATELIMIT_MAX_DESCRIPTORS: envInteger(DEFAULT_LIMITS.RATELIMIT_MAX_DESCRIPTORS, 1).describe(oneLine`
    Most descriptors (the lists of key/value entries Envoy sends, one per rate limit action set of a route) in one
    ShouldRateLimit request, checked before any counter is touched (/json: 400; gRPC: INVALID_ARGUMENT). Each costs a
    counter increment; Envoy rarely sends more than a handful.`),
  RATELIMIT_MAX_DESCRIPTOR_ENTRIES: envInteger(DEFAULT_LIMITS.RATELIMIT_MAX_DESCRIPTOR_ENTRIES, 1).describe(oneLine`
    Most entries in one descriptor, refused like too many descriptors. An entry matches one nested level of the
    configuration and adds to the cache key.`),
  RATELIMIT_MAX_VALUE_BYTES: envNumber(DEFAULT_LIMITS.RATELIMIT_MAX_VALUE_BYTES, (s) =>
    s
      .int()
      .min(1)
      .max(1024 * 1024),
  ).meta({ kind: "integer" }).describe(oneLine`
      Largest domain, and largest key or value of a descriptor entry, in UTF-8 bytes, refused like too many
      descriptors before any counter is touched. The values become counter keys (Durable Object names and rows, Redis
      keys). The default is above Envoy's default limit on all request headers (max_request_headers_kb, 60 KiB), so no
      value a default Envoy takes from a request is refused: Envoy lets a request through when the rate limit call
      fails, unless its failure_mode_deny is set. Lower it only with failure_mode_deny, or for descriptors that carry
      no request data.`),
  RATELIMIT_MAX_NESTING_DEPTH: envInteger(DEFAULT_LIMITS.RATELIMIT_MAX_NESTING_DEPTH, 1).describe(oneLine`
    Most JSON objects and arrays, or YAML maps and sequences, nested inside one another: in /json bodies, PUT
    /rlconfig/files bodies and each YAML file (aliases expanded), checked before a parser would recurse. A
    configuration as deep as RATELIMIT_MAX_DESCRIPTOR_ENTRIES needs about 70.`),
  RATELIMIT_CONFIG_MAX_BODY_BYTES: envInteger(DEFAULT_LIMITS.RATELIMIT_CONFIG_MAX_BODY_BYTES, 1).describe(oneLine`
    Largest body, in bytes, of PUT /rlconfig/files; a larger one answers 413 before it is read whole. The xDS
    client stores its snapshots through it: keep it above the JSON form of the largest snapshot.`),
  RATELIMIT_CONFIG_MAX_FILES: envInteger(DEFAULT_LIMITS.RATELIMIT_CONFIG_MAX_FILES, 1).describe(
    "Most files (or xDS resources) in one PUT /rlconfig/files; each is one row of the set's single D1 batch.",
  ),
  RATELIMIT_CONFIG_MAX_FILE_BYTES: envNumber(DEFAULT_LIMITS.RATELIMIT_CONFIG_MAX_FILE_BYTES, (s) =>
    s.int().min(1).max(1_900_000),
  ).meta({ kind: "integer" }).describe(oneLine`
      Largest YAML file in UTF-8 bytes (for the xDS form, the YAML a resource becomes), checked before it is parsed,
      in every set (bundled, runtime, xDS). The parser holds about 75 bytes of memory per byte of the densest input,
      so 512 KiB costs under 40 MB of a Worker's 128 MB; D1 stores a file in one row of at most 2,000,000 bytes.`),
  RATELIMIT_CONFIG_MAX_ALIAS_NODES: envInteger(DEFAULT_LIMITS.RATELIMIT_CONFIG_MAX_ALIAS_NODES, 0).describe(oneLine`
    How many YAML nodes aliases (\`*name\` references to an \`&name\` anchor) may add when expanded, across all
    files of one set. An alias bomb (aliases of aliases, each multiplying the last) is refused after this much work
    instead of expanding exponentially; 10,000 covers some 2,000 uses of a shared rate_limit block.`),
};

export const RateLimitSettings = z.object({
  CONFIG_TYPE: envEnum(["FILE", "GRPC_XDS_SOTW"], "FILE").describe(oneLine`
    Where the rate limit rules come from. \`FILE\`: the bundled YAML files, or the runtime set stored in D1 through
    PUT /rlconfig/files. \`GRPC_XDS_SOTW\`: only the snapshots the xDS client (the gRPC gateway, speaking Envoy's
    configuration-discovery protocol in its state-of-the-world form) stores; the bundled files never apply. Set the
    same value for the gateway.`),
  FORCE_START_WITHOUT_INITIAL_CONFIG: envBoolean(false).describe(oneLine`
    Serve before the first configuration is loaded. The Worker always does (/json answers 400 \`no rate limit
    configuration loaded\` while nothing is); the gRPC gateway reads it too: with CONFIG_TYPE=GRPC_XDS_SOTW and
    \`false\` it opens its port only once the first xDS snapshot is accepted.`),
  RUNTIME_ROOT: envString("/srv/runtime_data/current").describe(
    "Not read on Workers: the project's config/ folder, bundled with the Worker, plays the watched root.",
  ),
  RUNTIME_SUBDIRECTORY: envString("").describe("Subdirectory of config/ holding the application directory."),
  RUNTIME_APPDIRECTORY: envString("config").describe(
    "Directory (under config/ and RUNTIME_SUBDIRECTORY) of the rate limit `*.yaml` files.",
  ),
  RUNTIME_IGNOREDOTFILES: envBoolean(false).describe("Skip files whose name starts with a dot."),
  RUNTIME_WATCH_ROOT: envBoolean(true).describe(
    "Accepted, no effect: `wrangler dev` rebuilds on any change under config/, which covers both modes.",
  ),
  MERGE_DOMAIN_CONFIG: envBoolean(false).describe(
    "Allow several files to declare the same domain; their top-level descriptors are merged.",
  ),
  SHADOW_MODE: envBoolean(false).describe(
    "Global shadow mode: an OVER_LIMIT answer becomes OK overall (each descriptor's status is kept).",
  ),
  RATELIMIT_STRICT_UPSTREAM_CONFIG: envBoolean(false).describe(oneLine`
    Load only what the current upstream release loads: this project's \`algorithm\`, \`unit_multiplier\` and
    \`burst\` keys (and the xDS \`rateLimit.algorithm\` extension) are refused as unknown keys, with upstream's
    message.`),
  QUOTA_MODE: envBoolean(false).describe(oneLine`
    Global quota mode: every descriptor that is not unlimited is a quota descriptor. A quota descriptor over its
    limit keeps its OVER_LIMIT status, but the request is OVER_LIMIT only when a descriptor that is not a quota is, or
    every quota descriptor is. Per rule: \`quota_mode: true\`.`),
  RESPONSE_DYNAMIC_METADATA: envBoolean(false).describe(oneLine`
    Answer \`dynamicMetadata\`: the domain, each descriptor's entries (\`key=value\`), override and hits, the
    request's hits, and the merged \`metadata\` of the rules whose descriptors passed (the first value wins).`),
  STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT: envBoolean(false).describe(
    "When a request would take any descriptor over its limit, the other descriptors' counters are not incremented.",
  ),
  NEAR_LIMIT_RATIO: envNumber(0.8, (s) => s.min(0).max(1)).describe(
    "Fraction of the limit above which hits count in the `near_limit` statistic.",
  ),
  CACHE_KEY_PREFIX: envString("").describe(
    "Prepended verbatim to every cache key (a counter's name), and so to every counter's Durable Object name.",
  ),
  LocalCacheSizeInBytes: envInteger(0).describe(
    "Bytes of in-isolate cache for keys known to be over their limit until their window ends; `0` disables it.",
  ),
  LOCAL_CACHE_SIZE_IN_BYTES: aliasOf(envInteger(0), "LocalCacheSizeInBytes"),
  LIMIT_RESPONSE_HEADERS_ENABLED: envBoolean(false).describe(
    "Add the three headers below to the response's `responseHeadersToAdd`.",
  ),
  LIMIT_LIMIT_HEADER: envString("RateLimit-Limit").describe("Name of the header carrying the limit."),
  LIMIT_REMAINING_HEADER: envString("RateLimit-Remaining").describe(
    "Name of the header carrying the hits left in the window.",
  ),
  LIMIT_RESET_HEADER: envString("RateLimit-Reset").describe(
    "Name of the header carrying the seconds until the window ends.",
  ),
  HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED: envBoolean(false).describe(
    "/healthcheck also requires a loaded configuration with at least one domain.",
  ),
  RATELIMIT_ADMIN_TOKEN: envSecret().describe(
    "Bearer token of the admin routes (/rlconfig, /rlconfig/files, /stats, /metrics, /debug); unset, they answer 404.",
  ),
  ...limitFields,
  ...observabilityFields,
});
export type RateLimitSettings = z.output<typeof RateLimitSettings>;

export const rateLimitSettings: (env: object) => RateLimitSettings = settingsReader(RateLimitSettings, "ratelimit");

const limit = <K extends keyof typeof DEFAULT_LIMITS>(settings: RateLimitSettings, setting: K) => ({
  max: settings[setting],
  setting,
});

/** The limits of one ShouldRateLimit request, with the settings that hold them. */
export const requestLimits = (settings: RateLimitSettings): RequestLimits => ({
  descriptors: limit(settings, "RATELIMIT_MAX_DESCRIPTORS"),
  entries: limit(settings, "RATELIMIT_MAX_DESCRIPTOR_ENTRIES"),
  depth: limit(settings, "RATELIMIT_MAX_NESTING_DEPTH"),
  valueBytes: limit(settings, "RATELIMIT_MAX_VALUE_BYTES"),
});

/** The limits of one configuration set, with the settings that hold them. */
export const configLimits = (settings: RateLimitSettings): ConfigLimits => ({
  fileBytes: limit(settings, "RATELIMIT_CONFIG_MAX_FILE_BYTES"),
  aliasNodes: limit(settings, "RATELIMIT_CONFIG_MAX_ALIAS_NODES"),
  depth: limit(settings, "RATELIMIT_MAX_NESTING_DEPTH"),
});

/** The effective local cache size: the spec's LocalCacheSizeInBytes, else the reference's alias. */
export const localCacheSize = (settings: RateLimitSettings, env: Record<string, unknown>): number =>
  env.LocalCacheSizeInBytes !== undefined && env.LocalCacheSizeInBytes !== ""
    ? settings.LocalCacheSizeInBytes
    : settings.LOCAL_CACHE_SIZE_IN_BYTES;

// ---- Counter stores (BACKEND_TYPE): Durable Objects, the key-value store (Redis protocol), the object cache
// (memcached protocol). A schema of their own, read by src/ratelimit/stores/select.ts. The reference's names are
// aliases: REDIS_* for KVSTORE_*, MEMCACHE_* for OBJCACHE_*; the spec's name wins when both are set.

const STORE_ALIASES: [alias: string, name: string][] = [
  ["REDIS_", "KVSTORE_"],
  ["MEMCACHE_", "OBJCACHE_"],
];

/** Copies each REDIS_x / MEMCACHE_x variable to KVSTORE_x / OBJCACHE_x unless that one is set (non-empty). */
export function withStoreAliases(env: unknown): unknown {
  if (typeof env !== "object" || env === null) return env;
  const source = env as Record<string, unknown>;
  const result: Record<string, unknown> = { ...source };
  for (const [name, value] of Object.entries(source)) {
    for (const [alias, spec] of STORE_ALIASES) {
      if (!name.startsWith(alias)) continue;
      const specName = spec + name.slice(alias.length);
      if (result[specName] === undefined || result[specName] === "") result[specName] = value;
    }
  }
  return result;
}

/** The reference's name for a counter store setting, read when the spec's is unset (see withStoreAliases). */
export function storeAliasOf(name: string): string | undefined {
  const pair = STORE_ALIASES.find(([, spec]) => name.startsWith(spec));
  return pair && pair[0] + name.slice(pair[1].length);
}

/** An enum variable read case-insensitively (the reference lower-cases KVSTORE_TYPE, upper-cases the pool behaviour). */
const envChoice = <const T extends readonly [string, ...string[]]>(
  choices: T,
  defaultValue: T[number],
  upper = false,
) =>
  z
    .preprocess(
      (value) =>
        value === "" || value === undefined
          ? undefined
          : upper
            ? String(value).toUpperCase()
            : String(value).toLowerCase(),
      z.enum(choices).default(defaultValue as never),
    )
    .meta({ kind: "choice", choices, default: defaultValue });

/** A per-second store setting: the same as its KVSTORE_* counterpart, for the second store. */
const perSecond = <S extends z.ZodType>(schema: S, name: string) =>
  schema.describe(`As KVSTORE_${name}, for the per-second store.`);

export const CounterStoreSettings = z.preprocess(
  withStoreAliases,
  z.object({
    BACKEND_TYPE: envChoice(["durable-object", "redis", "kvstore", "memcache"], "durable-object").describe(oneLine`
      Where counters live: \`durable-object\`; \`redis\` or \`kvstore\`, the key-value store (a server speaking the
      Redis protocol); \`memcache\`, the object cache (memcached protocol). Any case.`),
    COUNTER_OBJECT_LAYOUT: envChoice(["per_key", "sharded"], "per_key").describe(oneLine`
      Durable Object store. \`per_key\`: one object per rate-limit key. \`sharded\`: the keys hashed over
      COUNTER_OBJECT_SHARDS objects, each holding many counters in one table; far fewer objects to create, for
      workloads where most keys are seen a few times (per client IP, per user). Changing it (or the shard count) on a
      running deployment starts every counter again from 0.`),
    COUNTER_OBJECT_ACTIVE_LIMIT: envInteger(2000).describe(oneLine`
      Durable Object store, \`per_key\` layout: most distinct counter objects one isolate calls within
      COUNTER_WRITE_BEHIND + 13 s; calls to further new keys wait until the oldest ages out. workerd (the Workers
      runtime) keeps an object's SQLite database open about 10 s after its last activity, and past about 2,800 open
      databases a process fails with SQLITE_NOMEM. \`0\`: no limit.`),
    COUNTER_OBJECT_SHARDS: envInteger(64, 1)
      .pipe(z.number().max(4096))
      .describe("Durable Object store, `sharded` layout: how many shard objects (1 to 4096)."),
    COUNTER_WRITE_BEHIND: envDurationMs("2s").pipe(z.number().max(5000, "must be at most 5s")).describe(oneLine`
        Durable Object store: how long a counter that must be stored may wait before it is written, gathering that
        interval's hits into one write; \`0\` writes before answering. A crash of the object loses at most this
        interval's hits (lets that many more through); an ordinary eviction loses nothing.`),
    COUNTER_OBJECT_MIN_IDLE_LIFETIME: envDurationMs("10s").pipe(z.number().max(60_000, "must be at most 60s"))
      .describe(oneLine`
        Durable Object store: how long the platform surely keeps an idle counter object in memory (workerd: 10 s;
        Cloudflare: longer). A hit whose window ends sooner is never written, so per-second windows never touch
        storage. \`0\` writes every window.`),
    KVSTORE_SOCKET_TYPE: envChoice(["tcp", "unix"], "tcp").describe(
      "`unix` is refused when the key-value store is used: a Worker cannot reach a unix socket.",
    ),
    KVSTORE_URL: envString("").describe(oneLine`
      Required with the key-value store. \`single\`: \`host:port\`; \`sentinel\`: the master's name, then the
      sentinels' \`host:port\` list; \`cluster\`: every node's \`host:port\`.`),
    KVSTORE_TYPE: envChoice(["single", "sentinel", "cluster"], "single").describe(oneLine`
      \`single\` server, \`sentinel\` (Redis Sentinel: sentinels that name the current master) or \`cluster\`
      (Redis Cluster: keys spread over nodes); any case.`),
    KVSTORE_POOL_SIZE: envInteger(10).describe(
      "Pooled connections, each held by one Durable Object; `0` opens a connection per request instead.",
    ),
    KVSTORE_TIMEOUT: envDurationMs("10s").describe(
      "Connect, reply and whole-call time-out: no request waits longer on the store.",
    ),
    KVSTORE_POOL_ON_EMPTY_BEHAVIOR: envChoice(["CREATE", "ERROR", "WAIT"], "CREATE", true).describe(oneLine`
      What a caller does after waiting KVSTORE_POOL_ON_EMPTY_WAIT_DURATION for a busy pooled connection: \`CREATE\`
      an extra connection, fail (\`ERROR\`) or \`WAIT\` on; any case.`),
    KVSTORE_POOL_ON_EMPTY_WAIT_DURATION: envDurationMs("1s").describe("See KVSTORE_POOL_ON_EMPTY_BEHAVIOR."),
    KVSTORE_PIPELINE_WINDOW: envDurationMs("0").describe(oneLine`
      \`0\` writes each batch of commands at once; longer holds it that long to gather more callers' commands into
      one write. \`cluster\` needs more than \`0\`.`),
    KVSTORE_PIPELINE_LIMIT: envInteger(0).describe("Deprecated in the reference; no effect."),
    KVSTORE_TLS: envBoolean(false).describe(oneLine`
      TLS to the store. The server's certificate must verify against the public CAs (locally:
      \`NODE_EXTRA_CA_CERTS\`).`),
    KVSTORE_AUTH: envSecret().describe("`password` or `user:password` for the store's nodes."),
    KVSTORE_SENTINEL_AUTH: envSecret().describe("`password` or `user:password` for the sentinels."),
    KVSTORE_PERSECOND: envBoolean(false).describe(
      "Counters of per-second limits go to a second store, set by the KVSTORE_PERSECOND_* variables.",
    ),
    KVSTORE_PERSECOND_SOCKET_TYPE: perSecond(envChoice(["tcp", "unix"], "tcp"), "SOCKET_TYPE"),
    KVSTORE_PERSECOND_URL: perSecond(envString(""), "URL"),
    KVSTORE_PERSECOND_TYPE: perSecond(envChoice(["single", "sentinel", "cluster"], "single"), "TYPE"),
    KVSTORE_PERSECOND_POOL_SIZE: perSecond(envInteger(10), "POOL_SIZE"),
    KVSTORE_PERSECOND_TIMEOUT: perSecond(envDurationMs("10s"), "TIMEOUT"),
    KVSTORE_PERSECOND_POOL_ON_EMPTY_BEHAVIOR: perSecond(
      envChoice(["CREATE", "ERROR", "WAIT"], "CREATE", true),
      "POOL_ON_EMPTY_BEHAVIOR",
    ),
    KVSTORE_PERSECOND_POOL_ON_EMPTY_WAIT_DURATION: perSecond(envDurationMs("1s"), "POOL_ON_EMPTY_WAIT_DURATION"),
    KVSTORE_PERSECOND_PIPELINE_WINDOW: perSecond(envDurationMs("0"), "PIPELINE_WINDOW"),
    KVSTORE_PERSECOND_PIPELINE_LIMIT: perSecond(envInteger(0), "PIPELINE_LIMIT"),
    KVSTORE_PERSECOND_TLS: perSecond(envBoolean(false), "TLS"),
    KVSTORE_PERSECOND_AUTH: perSecond(envSecret(), "AUTH"),
    KVSTORE_PERSECOND_SENTINEL_AUTH: perSecond(envSecret(), "SENTINEL_AUTH"),
    KVSTORE_TLS_CLIENT_CERT: envOptionalString().describe(oneLine`
      A file path in the reference. A Worker has no files, and its sockets take neither a client certificate nor a
      private CA: set while TLS is on, it is refused with an error saying so. The same holds for
      KVSTORE_TLS_CLIENT_KEY and KVSTORE_TLS_CACERT.`),
    KVSTORE_TLS_CLIENT_KEY: envOptionalString().describe("See KVSTORE_TLS_CLIENT_CERT."),
    KVSTORE_TLS_CACERT: envOptionalString().describe("See KVSTORE_TLS_CLIENT_CERT."),
    KVSTORE_TLS_SKIP_HOSTNAME_VERIFICATION: envBoolean(false).describe(
      "Refused when `true` while TLS is on: the runtime always checks the server's name.",
    ),
    KVSTORE_HEALTH_CHECK_ACTIVE_CONNECTION: envBoolean(false).describe(oneLine`
      /healthcheck fails while no pooled connection of a store answers a PING within KVSTORE_TIMEOUT.`),
    EXPIRATION_JITTER_MAX_SECONDS: envInteger(300).describe(oneLine`
      A random 0 to N-1 seconds added to each counter's expiry (key-value store and object cache), so that windows do
      not all expire at once; with Durable Objects, a fixed 0 to N-1 seconds per object added to its clean-up alarm.`),
    OBJCACHE_HOST_PORT: envString("").describe(
      "The object cache's nodes, a comma-separated `host:port` list; exclusive with OBJCACHE_SRV.",
    ),
    OBJCACHE_SRV: envString("").describe(
      "DNS SRV record naming the nodes, looked up through DNS over HTTPS at OBJCACHE_SRV_DOH_URL.",
    ),
    OBJCACHE_SRV_REFRESH: envDurationMs("0").describe(
      "Look the SRV record up again after this long; `0` looks it up once per isolate.",
    ),
    OBJCACHE_SRV_DOH_URL: envString("https://cloudflare-dns.com/dns-query")
      .meta({ kind: "url" })
      .describe("Not in the spec: the DNS-over-HTTPS endpoint (its JSON API) for OBJCACHE_SRV."),
    OBJCACHE_MAX_IDLE_CONNS: envInteger(2).describe(
      "Accepted, no effect: a Worker cannot keep idle sockets between requests.",
    ),
    OBJCACHE_TIMEOUT: envDurationMs("500ms").describe(
      "Not in the spec: connect and reply time-out (the one of the reference's memcache client).",
    ),
    OBJCACHE_TLS: envBoolean(false).describe("TLS to the object cache, with the key-value store's limits."),
    OBJCACHE_TLS_CLIENT_CERT: envOptionalString().describe("As KVSTORE_TLS_CLIENT_CERT, for the object cache."),
    OBJCACHE_TLS_CLIENT_KEY: envOptionalString().describe("As KVSTORE_TLS_CLIENT_KEY, for the object cache."),
    OBJCACHE_TLS_CACERT: envOptionalString().describe("As KVSTORE_TLS_CACERT, for the object cache."),
    OBJCACHE_TLS_SKIP_HOSTNAME_VERIFICATION: envBoolean(false).describe(
      "As KVSTORE_TLS_SKIP_HOSTNAME_VERIFICATION, for the object cache.",
    ),
  }),
);
export type CounterStoreSettings = z.output<typeof CounterStoreSettings>;

export const counterStoreSettings: (env: object) => CounterStoreSettings = settingsReader(
  CounterStoreSettings,
  "ratelimit",
);

/** What loading a configuration reads: the service's settings, and the counter store's limits on the algorithms. */
export interface ConfigLoadSettings {
  /** The service's settings (the object per-isolate state, such as the statistics, is keyed by). */
  service: RateLimitSettings;
  /** Set when the counter store counts fixed windows only (the object cache): names the setting that chose it. */
  fixedWindowOnly?: string;
}

/**
 * The configuration-load view of the env, one object per isolate (the config view is cached per settings object).
 * A store setting that fails to parse fails every decision already; the loader then assumes no limit on algorithms,
 * so that /rlconfig and the health check keep working.
 */
export const configLoadSettings = perIsolate("ratelimit config-load settings", (env: object): ConfigLoadSettings => {
  let backend: string | undefined;
  try {
    backend = counterStoreSettings(env).BACKEND_TYPE;
  } catch {
    backend = undefined;
  }
  return {
    service: rateLimitSettings(env),
    fixedWindowOnly: backend === "memcache" ? "BACKEND_TYPE=memcache" : undefined,
  };
});
