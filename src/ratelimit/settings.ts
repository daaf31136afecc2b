// Settings of the rate limit service, with the spec's names and defaults (the reference's envconfig names).
// Parsed once per isolate; each field says what it does here, including where Workers change the meaning.
import { z } from "zod";
import { envBoolean, envInteger, envNumber, envOptionalString, envString, readSettings } from "../shared/settings";

export const RateLimitSettings = z.object({
  /** FILE (bundled YAML, or the runtime set in D1) or GRPC_XDS_SOTW (pushed by the xDS client beside the Worker). */
  CONFIG_TYPE: z.preprocess((v) => (v === "" ? undefined : v), z.enum(["FILE", "GRPC_XDS_SOTW"]).default("FILE")),
  /** Answer before any configuration is loaded. On Workers the bundled files are loaded with the code, so this
   * only matters when they fail to load: either way /json then answers 400 "no rate limit configuration loaded". */
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
});
export type RateLimitSettings = z.output<typeof RateLimitSettings>;

export const rateLimitSettings = (env: object): RateLimitSettings =>
  readSettings(RateLimitSettings, env, "ratelimit");

/** The effective local cache size: the spec's LocalCacheSizeInBytes, else the reference's alias. */
export const localCacheSize = (settings: RateLimitSettings, env: Record<string, unknown>): number =>
  env.LocalCacheSizeInBytes !== undefined && env.LocalCacheSizeInBytes !== ""
    ? settings.LocalCacheSizeInBytes
    : settings.LOCAL_CACHE_SIZE_IN_BYTES;
