// Settings of the rate limit service, with the spec's names and defaults (the reference's envconfig names).
// Parsed once per isolate; each field says what it does here, including where Workers change the meaning.
import { z } from "../shared/zod";
import {
  envBoolean,
  envEnum,
  envInteger,
  envNumber,
  envSecret,
  envString,
  oneLine,
  settingsReader,
} from "../shared/settings";
import { perIsolate } from "../shared/isolate";
import { DEFAULT_LIMITS, type ConfigLimits, type RequestLimits } from "./core/limits";
import { counterStoreSettings } from "./counter-store-settings";
import { aliasOf, observabilityFields } from "./observability-settings";

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
    Largest body, in bytes, of PUT /rlconfig/files and PUT /rlconfig/files/{name}; a larger one answers 413 before
    it is read whole. The xDS client stores its snapshots through it: keep it above the JSON form of the largest
    snapshot.`),
  RATELIMIT_CONFIG_MAX_FILES: envInteger(DEFAULT_LIMITS.RATELIMIT_CONFIG_MAX_FILES, 1).describe(oneLine`
    Most uploaded files (or xDS resources) in the set, sent whole by PUT /rlconfig/files or one by one; each is one
    row of the set's single D1 batch.`),
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
    Load only what the current upstream release loads: this project's \`algorithm\`, \`unit_multiplier\`,
    \`burst\`, \`lease\` and \`additional_limits\` keys (and the xDS \`rateLimit.algorithm\` extension) are refused as unknown keys, with upstream's
    message.`),
  QUOTA_MODE: envBoolean(false).describe(oneLine`
    Global quota mode: every descriptor that is not unlimited is a quota descriptor. A quota descriptor over its
    limit keeps its OVER_LIMIT status, but the request is OVER_LIMIT only when a descriptor that is not a quota is, or
    every quota descriptor is. Per rule: \`quota_mode: true\`.`),
  RESPONSE_DYNAMIC_METADATA: envBoolean(false).describe(oneLine`
    Answer \`dynamicMetadata\`: the domain, each descriptor's entries (\`key=value\`), override and hits, the
    request's hits, and the merged \`metadata\` of the rules whose descriptors passed (the first value wins); an
    unlimited or replaced rule gives none.`),
  RESPONSE_DYNAMIC_METADATA_OVER_LIMIT: envBoolean(false).describe(oneLine`
    With RESPONSE_DYNAMIC_METADATA: \`dynamicMetadata\` also gains \`overLimit\`, the index and entries of each
    descriptor that was OVER_LIMIT (absent when none was), so that Envoy can log which one tripped. Off by default:
    upstream's metadata stays as it is.`),
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
  LIMIT_RESPONSE_HEADERS_FORMAT: envEnum(["draft03", "ietf"], "draft03").describe(oneLine`
    Which headers LIMIT_RESPONSE_HEADERS_ENABLED adds: \`draft03\`, the reference's three below; or \`ietf\`,
    \`RateLimit-Policy\` and \`RateLimit\` as structured fields per draft-ietf-httpapi-ratelimit-headers-10, the
    policy named after the deciding rule (its \`name\`, else its statistics key).`),
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
