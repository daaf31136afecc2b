// Settings of the rate limit service, with the spec's names and defaults (the reference's envconfig names).
// Parsed once per isolate; each field says what it does here, including where Workers change the meaning.
import { z } from "zod";
import {
  envBoolean,
  envDurationMs,
  envInteger,
  envNumber,
  envOptionalString,
  envString,
  settingsReader,
  unsetIfEmpty,
} from "../shared/settings";
import { DEFAULT_LIMITS, type ConfigLimits, type RequestLimits } from "./core/limits";

/** A boolean that stays undefined when unset, so a spec name can win over the reference's alias. */
const envOptionalBoolean = () =>
  z.preprocess(
    unsetIfEmpty,
    z.stringbool({ truthy: ["true", "1"], falsy: ["false", "0"], case: "insensitive" }).optional(),
  );
const envOptionalPort = () => z.preprocess(unsetIfEmpty, z.coerce.number().int().min(1).max(65535).optional());
const envOptionalPath = () => z.preprocess(unsetIfEmpty, z.string().startsWith("/").optional());

/**
 * Statistics, push and pull metrics, and traces (src/ratelimit/stats/). Where the reference's own name is an alias,
 * both are read and stats/config.ts resolves them: the spec's name wins when both are set. LOG_LEVEL and LOG_FORMAT
 * apply to every service and are read by src/shared/log.ts.
 */
const observabilityFields = {
  /** Turns every statistic off: nothing is buffered, flushed, pushed or served (/stats and /metrics answer empty). */
  DISABLE_STATS: envBoolean(false),
  /** How often an isolate flushes its buffered statistics (Go duration); 0 flushes at the end of every request.
   * A flush waits inside the request's waitUntil, which lives at most 30 s, so values above 25s act as 25s. */
  STATS_FLUSH_INTERVAL: envDurationMs("10s"),
  /** `k1:v1,k2:v2`: tags on every statistic (statsd name suffix `.__k=v`, tagged statsd tags, Prometheus labels). */
  EXTRA_TAGS: envString(""),
  /** Push statsd lines over TCP at each flush (default true, as the spec); alias USE_STATSD. */
  USE_METRICSD: envOptionalBoolean(),
  USE_STATSD: envOptionalBoolean(),
  /** statsd host (default localhost); alias STATSD_HOST. */
  METRICSD_HOST: envOptionalString(),
  STATSD_HOST: envOptionalString(),
  /** statsd TCP port (default 8125); alias STATSD_PORT. */
  METRICSD_PORT: envOptionalPort(),
  STATSD_PORT: envOptionalPort(),
  /** Push tagged (DogStatsD) lines instead of plain statsd, with the mogrifiers below; alias USE_DOG_STATSD. */
  USE_TAGGED_METRICSD: envOptionalBoolean(),
  USE_DOG_STATSD: envOptionalBoolean(),
  /** Comma-separated mogrifier names N, each defined by TAGGED_METRICSD_MOGRIFIER_<N>_PATTERN, _NAME and _TAGS;
   * aliases DOG_STATSD_MOGRIFIERS and USE_DOG_STATSD_MOGRIFIERS (with DOG_STATSD_MOGRIFIER_<N>_*). */
  TAGGED_METRICSD_MOGRIFIERS: envOptionalString(),
  DOG_STATSD_MOGRIFIERS: envOptionalString(),
  USE_DOG_STATSD_MOGRIFIERS: envOptionalString(),
  /** Serve Prometheus text at PULLMETRICS_PATH (default false); alias USE_PROMETHEUS. */
  USE_PULLMETRICS: envOptionalBoolean(),
  USE_PROMETHEUS: envOptionalBoolean(),
  /** Accepted, not used: the Worker serves /metrics on its own origin. Alias PROMETHEUS_ADDR. */
  PULLMETRICS_ADDR: envOptionalString(),
  PROMETHEUS_ADDR: envOptionalString(),
  /** Path of the Prometheus endpoint (default /metrics); alias PROMETHEUS_PATH. */
  PULLMETRICS_PATH: envOptionalPath(),
  PROMETHEUS_PATH: envOptionalPath(),
  /** statsd_exporter mapping that replaces the default one: the YAML itself, or the path of a file under config/
   * (bundled with the Worker, e.g. `metrics/mapper.yaml`). Alias PROMETHEUS_MAPPER_YAML. */
  PULLMETRICS_MAPPER_YAML: envOptionalString(),
  PROMETHEUS_MAPPER_YAML: envOptionalString(),
  /** Export one span per decision over OTLP/HTTP (JSON). */
  TRACING_ENABLED: envBoolean(false),
  /** `http` or `grpc`; a Worker cannot speak OTLP/gRPC, so `grpc` also exports over OTLP/HTTP (with a warning). */
  TRACING_EXPORTER_PROTOCOL: z.preprocess(unsetIfEmpty, z.enum(["http", "grpc"]).default("http")),
  TRACING_SERVICE_NAME: envString("RateLimit"),
  TRACING_SERVICE_NAMESPACE: envString(""),
  /** Empty: a random version 4 UUID per isolate. */
  TRACING_SERVICE_INSTANCE_ID: envString(""),
  /** Fraction of new traces sampled (0 to 1); a caller's traceparent decides for its own trace. */
  TRACING_SAMPLING_RATE: envNumber(1, (s) => s.min(0).max(1)),
  /** OTLP/HTTP base URL; spans go to `<endpoint>/v1/traces`. */
  OTEL_EXPORTER_OTLP_ENDPOINT: envString("http://localhost:4318"),
  /** Full URL for spans; wins over OTEL_EXPORTER_OTLP_ENDPOINT. */
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: envOptionalString(),
  /** `k=v,k2=v2` (values URL-encoded) sent with every export, e.g. an authorization header. */
  OTEL_EXPORTER_OTLP_HEADERS: envString(""),
  OTEL_EXPORTER_OTLP_TRACES_HEADERS: envOptionalString(),
};

/**
 * Limits on what the service reads, not in the spec (the reference has none): each bounds the work and memory one
 * request can cost, and every refusal names its setting. Defaults live in core/limits.ts.
 */
const limitFields = {
  /** Largest body, in bytes, of POST /json and of ShouldRateLimit over Connect, gRPC-Web and the reverse bridge; a
   * larger one is refused before it is read whole (413 on /json, RESOURCE_EXHAUSTED on the gRPC routes, as grpc-go
   * answers an oversized message). A request is a few hundred bytes; 1 MiB leaves room for any legitimate one.
   * Give the gRPC gateway the same value (grpc-gateway/settings.mjs). */
  RATELIMIT_MAX_REQUEST_BYTES: envInteger(DEFAULT_LIMITS.RATELIMIT_MAX_REQUEST_BYTES, 1),
  /** Most descriptors in one ShouldRateLimit request (/json: 400; gRPC: INVALID_ARGUMENT), checked before any
   * counter is touched. Each descriptor costs a counter increment in the store; Envoy sends one per rate limit action
   * set of a route, rarely more than a handful, so 64 is generous yet bounds a request's store work. */
  RATELIMIT_MAX_DESCRIPTORS: envInteger(DEFAULT_LIMITS.RATELIMIT_MAX_DESCRIPTORS, 1),
  /** Most entries in one request descriptor, refused like too many descriptors. An entry matches one nested level of
   * the configuration and adds to the cache key; Envoy sends one per action, and 32 levels is deeper than any
   * configuration one would write. */
  RATELIMIT_MAX_DESCRIPTOR_ENTRIES: envInteger(DEFAULT_LIMITS.RATELIMIT_MAX_DESCRIPTOR_ENTRIES, 1),
  /** Most objects and arrays (JSON) or maps and sequences (YAML) nested inside one another, in /json bodies, PUT
   * /rlconfig/files bodies (either form) and each YAML file (aliases expanded); checked before parsing where the
   * parser would recurse. A configuration as deep as RATELIMIT_MAX_DESCRIPTOR_ENTRIES needs about 70. */
  RATELIMIT_MAX_NESTING_DEPTH: envInteger(DEFAULT_LIMITS.RATELIMIT_MAX_NESTING_DEPTH, 1),
  /** Largest body, in bytes, of PUT /rlconfig/files; larger is refused with 413 before it is read whole. The xDS
   * client stores snapshots through it: keep it above the JSON form of the largest snapshot. */
  RATELIMIT_CONFIG_MAX_BODY_BYTES: envInteger(DEFAULT_LIMITS.RATELIMIT_CONFIG_MAX_BODY_BYTES, 1),
  /** Most files (or xDS resources) in one PUT /rlconfig/files; each is one row of the set's single D1 batch. */
  RATELIMIT_CONFIG_MAX_FILES: envInteger(DEFAULT_LIMITS.RATELIMIT_CONFIG_MAX_FILES, 1),
  /** Largest YAML file, in UTF-8 bytes (for the xDS form, the YAML a resource becomes), checked before it is parsed,
   * in every set (bundled, runtime, xDS). The YAML parser holds about 75 bytes of memory per byte of the densest
   * input (measured), so 512 KiB costs under 40 MB of a Worker's 128 MB. At most 1,900,000: D1 stores a file in one
   * row of at most 2,000,000 bytes. */
  RATELIMIT_CONFIG_MAX_FILE_BYTES: envNumber(DEFAULT_LIMITS.RATELIMIT_CONFIG_MAX_FILE_BYTES, (s) =>
    s.int().min(1).max(1_900_000),
  ),
  /** How many YAML nodes aliases may add when expanded, across all files of one set. Each node an alias stands for is
   * counted as it is copied, so an alias bomb (aliases of aliases, each multiplying the last) is refused after this
   * much work instead of expanding exponentially. 10,000 covers some 2,000 uses of a shared rate_limit block. */
  RATELIMIT_CONFIG_MAX_ALIAS_NODES: envInteger(DEFAULT_LIMITS.RATELIMIT_CONFIG_MAX_ALIAS_NODES, 0),
};

export const RateLimitSettings = z.object({
  /** FILE (bundled YAML, or the runtime set in D1) or GRPC_XDS_SOTW: the bundled files are never in force, only
   * the snapshots the xDS client beside the Worker (grpc-gateway) stores through PUT /rlconfig/files. */
  CONFIG_TYPE: z.preprocess(unsetIfEmpty, z.enum(["FILE", "GRPC_XDS_SOTW"]).default("FILE")),
  /** Serve before any configuration is loaded. The Worker always answers, /json with 400 "no rate limit
   * configuration loaded" while nothing is; the gRPC gateway reads this too and, when false with
   * CONFIG_TYPE=GRPC_XDS_SOTW, opens its port only once the first xDS snapshot is accepted. */
  FORCE_START_WITHOUT_INITIAL_CONFIG: envBoolean(false),
  /** Stands for the watched root; on Workers the project's config/ folder is bundled and plays that part. */
  RUNTIME_ROOT: envString("/srv/runtime_data/current"),
  /** Subdirectory under the root (within the bundled config/ folder). */
  RUNTIME_SUBDIRECTORY: envString(""),
  /** Application directory holding the *.yaml files (wrangler.toml sets "ratelimit" for config/ratelimit/). */
  RUNTIME_APPDIRECTORY: envString("config"),
  /** Skip files whose name starts with a dot. */
  RUNTIME_IGNOREDOTFILES: envBoolean(false),
  /** Accepted for compatibility; wrangler dev rebuilds on any change under config/, which covers both modes. */
  RUNTIME_WATCH_ROOT: envBoolean(true),
  /** Allow several files to declare the same domain; their top-level descriptors are merged. */
  MERGE_DOMAIN_CONFIG: envBoolean(false),
  /** Global shadow mode: an OVER_LIMIT overall code is answered as OK (per-descriptor statuses are kept). */
  SHADOW_MODE: envBoolean(false),
  /** When a request would take any descriptor over its limit, the other descriptors are not incremented. */
  STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT: envBoolean(false),
  /** Fraction of the limit above which hits count as near_limit (0 to 1). */
  NEAR_LIMIT_RATIO: envNumber(0.8, (s) => s.min(0).max(1)),
  /** Prepended verbatim to every cache key (and so to every counter's Durable Object name). */
  CACHE_KEY_PREFIX: envString(""),
  /** Bytes of in-isolate cache for keys known to be over their limit until their window ends; 0 disables. */
  LocalCacheSizeInBytes: envInteger(0),
  /** The reference's spelling of LocalCacheSizeInBytes; the spec's name wins when both are set. */
  LOCAL_CACHE_SIZE_IN_BYTES: envInteger(0),
  /** Add RateLimit-* headers to responseHeadersToAdd. */
  LIMIT_RESPONSE_HEADERS_ENABLED: envBoolean(false),
  LIMIT_LIMIT_HEADER: envString("RateLimit-Limit"),
  LIMIT_REMAINING_HEADER: envString("RateLimit-Remaining"),
  LIMIT_RESET_HEADER: envString("RateLimit-Reset"),
  /** /healthcheck also requires a loaded configuration with at least one domain. */
  HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED: envBoolean(false),
  /** Secret: bearer token for /rlconfig*, /stats and /metrics. Unset: those routes answer 404. */
  RATELIMIT_ADMIN_TOKEN: envOptionalString(),
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

/** An enum variable read case-insensitively (the reference lower-cases KVSTORE_TYPE, upper-cases the pool behaviour). */
const envChoice = <const T extends readonly [string, ...string[]]>(
  choices: T,
  defaultValue: T[number],
  upper = false,
) =>
  z.preprocess(
    (value) =>
      value === "" || value === undefined
        ? undefined
        : upper
          ? String(value).toUpperCase()
          : String(value).toLowerCase(),
    z.enum(choices).default(defaultValue as never),
  );

export const CounterStoreSettings = z.preprocess(
  withStoreAliases,
  z.object({
    /** durable-object (default), redis or kvstore (the key-value store), memcache (the object cache). */
    BACKEND_TYPE: envChoice(["durable-object", "redis", "kvstore", "memcache"], "durable-object"),
    /**
     * Durable Object store only. per_key: one object per rate-limit key (the default). sharded: the keys hashed
     * over COUNTER_OBJECT_SHARDS objects, each holding many counters in one table: far fewer objects to create,
     * for workloads where most keys are seen a few times (per client IP, per user). Changing it (or the shard
     * count) on a running deployment starts every counter again from 0: the current windows are forgotten.
     */
    COUNTER_OBJECT_LAYOUT: envChoice(["per_key", "sharded"], "per_key"),
    /**
     * Durable Object store, per_key layout: most distinct counter objects one isolate calls within
     * COUNTER_WRITE_BEHIND + 13 s; calls to further new keys wait until the oldest ages out. workerd keeps each object
     * and its SQLite database about 10 s after its last activity, and past about 2,800 open databases a process fails
     * with SQLITE_NOMEM. 0: no limit.
     */
    COUNTER_OBJECT_ACTIVE_LIMIT: envInteger(2000),
    /** Durable Object store, sharded layout: how many shard objects (1 to 4096). */
    COUNTER_OBJECT_SHARDS: envInteger(64, 1).pipe(z.number().max(4096)),
    /**
     * Durable Object store: how long a counter that must be stored may wait before it is written, gathering the
     * hits of that interval into one write (0 to 5s; 0 writes before answering). A crash of the object loses at most
     * this interval's hits, that is lets that many more through; an ordinary eviction loses nothing.
     */
    COUNTER_WRITE_BEHIND: envDurationMs("2s").pipe(z.number().max(5000, "must be at most 5s")),
    /**
     * Durable Object store: how long the platform surely keeps an idle counter object in memory (workerd: 10 s;
     * Cloudflare: longer). A hit whose window ends sooner is never written, and windows no longer than this (per
     * second limits) never touch storage. 0 writes every window. At most 60s.
     */
    COUNTER_OBJECT_MIN_IDLE_LIFETIME: envDurationMs("10s").pipe(z.number().max(60_000, "must be at most 60s")),
    /** tcp; unix sockets cannot be reached from a Worker and are refused when the key-value store is used. */
    KVSTORE_SOCKET_TYPE: envChoice(["tcp", "unix"], "tcp"),
    /** single: host:port; sentinel: master name, then sentinel host:port list; cluster: every node's host:port. */
    KVSTORE_URL: envString(""),
    KVSTORE_TYPE: envChoice(["single", "sentinel", "cluster"], "single"),
    /** Pooled connections, each held by one Durable Object; 0 opens a connection per request instead. */
    KVSTORE_POOL_SIZE: envInteger(10),
    /** Connect, read and write time-out; no request waits longer on the store. */
    KVSTORE_TIMEOUT: envDurationMs("10s"),
    KVSTORE_POOL_ON_EMPTY_BEHAVIOR: envChoice(["CREATE", "ERROR", "WAIT"], "CREATE", true),
    KVSTORE_POOL_ON_EMPTY_WAIT_DURATION: envDurationMs("1s"),
    /** 0 writes each batch at once; longer gathers the callers of that long into one write. Cluster needs > 0. */
    KVSTORE_PIPELINE_WINDOW: envDurationMs("0"),
    /** Deprecated in the reference, no effect. */
    KVSTORE_PIPELINE_LIMIT: envInteger(0),
    KVSTORE_TLS: envBoolean(false),
    /** Secret: `password` or `user:password`. */
    KVSTORE_AUTH: envOptionalString(),
    /** Secret: the same forms, for the sentinels only. */
    KVSTORE_SENTINEL_AUTH: envOptionalString(),
    /** A second store used only for per-second limits; its settings follow. */
    KVSTORE_PERSECOND: envBoolean(false),
    KVSTORE_PERSECOND_SOCKET_TYPE: envChoice(["tcp", "unix"], "tcp"),
    KVSTORE_PERSECOND_URL: envString(""),
    KVSTORE_PERSECOND_TYPE: envChoice(["single", "sentinel", "cluster"], "single"),
    KVSTORE_PERSECOND_POOL_SIZE: envInteger(10),
    KVSTORE_PERSECOND_TIMEOUT: envDurationMs("10s"),
    KVSTORE_PERSECOND_POOL_ON_EMPTY_BEHAVIOR: envChoice(["CREATE", "ERROR", "WAIT"], "CREATE", true),
    KVSTORE_PERSECOND_POOL_ON_EMPTY_WAIT_DURATION: envDurationMs("1s"),
    KVSTORE_PERSECOND_PIPELINE_WINDOW: envDurationMs("0"),
    KVSTORE_PERSECOND_PIPELINE_LIMIT: envInteger(0),
    KVSTORE_PERSECOND_TLS: envBoolean(false),
    KVSTORE_PERSECOND_AUTH: envOptionalString(),
    KVSTORE_PERSECOND_SENTINEL_AUTH: envOptionalString(),
    /** File paths in the reference. A Worker has no files, and its sockets take neither a client certificate nor a
     * CA: set, with TLS on, they are refused with an error saying so (see the README's "Counter stores"). */
    KVSTORE_TLS_CLIENT_CERT: envOptionalString(),
    KVSTORE_TLS_CLIENT_KEY: envOptionalString(),
    KVSTORE_TLS_CACERT: envOptionalString(),
    /** Refused when true with TLS on: the runtime always checks the server's name. */
    KVSTORE_TLS_SKIP_HOSTNAME_VERIFICATION: envBoolean(false),
    /** /healthcheck fails while no pooled connection can be held open. */
    KVSTORE_HEALTH_CHECK_ACTIVE_CONNECTION: envBoolean(false),
    /** A random 0..N-1 seconds added to each counter's expiry, so windows do not all expire at once. */
    EXPIRATION_JITTER_MAX_SECONDS: envInteger(300),
    /** Comma-separated host:port list; exclusive with OBJCACHE_SRV. */
    OBJCACHE_HOST_PORT: envString(""),
    /** SRV record naming the nodes, looked up through DNS over HTTPS (OBJCACHE_SRV_DOH_URL). */
    OBJCACHE_SRV: envString(""),
    /** Look the SRV record up again after this long; 0 looks it up once per isolate. */
    OBJCACHE_SRV_REFRESH: envDurationMs("0"),
    /** Not in the spec: the DNS-over-HTTPS endpoint (JSON API) for OBJCACHE_SRV. */
    OBJCACHE_SRV_DOH_URL: envString("https://cloudflare-dns.com/dns-query"),
    /** Accepted; a Worker cannot keep idle sockets between requests (connections live for one request). */
    OBJCACHE_MAX_IDLE_CONNS: envInteger(2),
    /** Not in the spec: connect and reply time-out (the reference's memcache client uses 500ms). */
    OBJCACHE_TIMEOUT: envDurationMs("500ms"),
    OBJCACHE_TLS: envBoolean(false),
    OBJCACHE_TLS_CLIENT_CERT: envOptionalString(),
    OBJCACHE_TLS_CLIENT_KEY: envOptionalString(),
    OBJCACHE_TLS_CACERT: envOptionalString(),
    OBJCACHE_TLS_SKIP_HOSTNAME_VERIFICATION: envBoolean(false),
  }),
);
export type CounterStoreSettings = z.output<typeof CounterStoreSettings>;

export const counterStoreSettings: (env: object) => CounterStoreSettings = settingsReader(
  CounterStoreSettings,
  "ratelimit",
);
