// Settings of the rate limit service, with the spec's names and defaults (the reference's envconfig names).
// Parsed once per isolate; each field's meaning (settings-meanings.ts) says what it does here, including where Workers
// change it.
import { z } from "../shared/zod";
import { envBoolean, envEnum, envInteger, envNumber, envSecret, envString, settingsReader } from "../shared/settings";
import { perIsolate } from "../shared/isolate";
import { DEFAULT_LIMITS, type ConfigLimits, type RequestLimits } from "./core/limits";
import { counterStoreSettings } from "./counter-store-settings";
import { aliasOf, observabilityFields } from "./observability-settings";

/**
 * Limits on what the service reads, not in the spec (the reference has none): each bounds the work and memory one
 * request can cost, and every refusal names its setting. Defaults live in core/limits.ts.
 */
export const limitFields = {
  RATELIMIT_MAX_REQUEST_BYTES: envInteger(DEFAULT_LIMITS.RATELIMIT_MAX_REQUEST_BYTES, 1),
  RATELIMIT_MAX_DESCRIPTORS: envInteger(DEFAULT_LIMITS.RATELIMIT_MAX_DESCRIPTORS, 1),
  RATELIMIT_MAX_DESCRIPTOR_ENTRIES: envInteger(DEFAULT_LIMITS.RATELIMIT_MAX_DESCRIPTOR_ENTRIES, 1),
  RATELIMIT_MAX_VALUE_BYTES: envNumber(DEFAULT_LIMITS.RATELIMIT_MAX_VALUE_BYTES, (s) =>
    s
      .int()
      .min(1)
      .max(1024 * 1024),
  ).meta({ kind: "integer" }),
  RATELIMIT_MAX_NESTING_DEPTH: envInteger(DEFAULT_LIMITS.RATELIMIT_MAX_NESTING_DEPTH, 1),
  RATELIMIT_CONFIG_MAX_BODY_BYTES: envInteger(DEFAULT_LIMITS.RATELIMIT_CONFIG_MAX_BODY_BYTES, 1),
  RATELIMIT_CONFIG_MAX_FILES: envInteger(DEFAULT_LIMITS.RATELIMIT_CONFIG_MAX_FILES, 1),
  RATELIMIT_CONFIG_MAX_FILE_BYTES: envNumber(DEFAULT_LIMITS.RATELIMIT_CONFIG_MAX_FILE_BYTES, (s) =>
    s.int().min(1).max(1_900_000),
  ).meta({ kind: "integer" }),
  RATELIMIT_CONFIG_MAX_ALIAS_NODES: envInteger(DEFAULT_LIMITS.RATELIMIT_CONFIG_MAX_ALIAS_NODES, 0),
};

export const RateLimitSettings = z.object({
  CONFIG_TYPE: envEnum(["FILE", "GRPC_XDS_SOTW"], "FILE"),
  FORCE_START_WITHOUT_INITIAL_CONFIG: envBoolean(false),
  RUNTIME_ROOT: envString("/srv/runtime_data/current"),
  RUNTIME_SUBDIRECTORY: envString(""),
  RUNTIME_APPDIRECTORY: envString("config"),
  RUNTIME_IGNOREDOTFILES: envBoolean(false),
  RUNTIME_WATCH_ROOT: envBoolean(true),
  MERGE_DOMAIN_CONFIG: envBoolean(false),
  SHADOW_MODE: envBoolean(false),
  RATELIMIT_STRICT_UPSTREAM_CONFIG: envBoolean(false),
  QUOTA_MODE: envBoolean(false),
  RESPONSE_DYNAMIC_METADATA: envBoolean(false),
  RESPONSE_DYNAMIC_METADATA_OVER_LIMIT: envBoolean(false),
  STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT: envBoolean(false),
  NEAR_LIMIT_RATIO: envNumber(0.8, (s) => s.min(0).max(1)),
  CACHE_KEY_PREFIX: envString(""),
  LocalCacheSizeInBytes: envInteger(0),
  LOCAL_CACHE_SIZE_IN_BYTES: aliasOf(envInteger(0), "LocalCacheSizeInBytes"),
  LIMIT_RESPONSE_HEADERS_ENABLED: envBoolean(false),
  LIMIT_RESPONSE_HEADERS_FORMAT: envEnum(["draft03", "ietf"], "draft03"),
  LIMIT_LIMIT_HEADER: envString("RateLimit-Limit"),
  LIMIT_REMAINING_HEADER: envString("RateLimit-Remaining"),
  LIMIT_RESET_HEADER: envString("RateLimit-Reset"),
  HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED: envBoolean(false),
  RATELIMIT_ADMIN_TOKEN: envSecret(),
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
