// Per-isolate wiring of the rate limit service, as envoy ratelimit's runner.go wires its server once: settings →
// counter store → config view → local cache → telemetry, each built once per env (one per isolate) and handed to the
// pure core. Every transport (/json, Connect, gRPC-Web) decides through `decide()`.
import { database } from "../shared/db";
import { perIsolate } from "../shared/isolate";
import { currentConfig } from "./config/provider";
import { LocalCache } from "./core/local-cache";
import { shouldRateLimit, type ServiceSettings } from "./core/service";
import type { RateLimitRequest } from "./core/types";
import { configLoadSettings, localCacheSize, rateLimitSettings, type RateLimitSettings } from "./settings";
import { observeDecision } from "./stats/telemetry";
import { selectCounterStore, storeHealthy } from "./stores/select";

/** The counter store the env's settings choose (BACKEND_TYPE), built once per env. */
const counterStoreOf = perIsolate("ratelimit counter store", selectCounterStore);

/** The core's view of the settings, built once per settings. */
const serviceSettingsOf = perIsolate("ratelimit service settings", (settings: RateLimitSettings): ServiceSettings => ({
  shadowMode: settings.SHADOW_MODE,
  quotaMode: settings.QUOTA_MODE,
  dynamicMetadata: settings.RESPONSE_DYNAMIC_METADATA,
  overLimitMetadata: settings.RESPONSE_DYNAMIC_METADATA_OVER_LIMIT,
  stopCacheKeyIncrementWhenOverlimit: settings.STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT,
  nearLimitRatio: settings.NEAR_LIMIT_RATIO,
  cacheKeyPrefix: settings.CACHE_KEY_PREFIX,
  responseHeaders: settings.LIMIT_RESPONSE_HEADERS_ENABLED
    ? {
        limit: settings.LIMIT_LIMIT_HEADER,
        remaining: settings.LIMIT_REMAINING_HEADER,
        reset: settings.LIMIT_RESET_HEADER,
        format: settings.LIMIT_RESPONSE_HEADERS_FORMAT,
      }
    : undefined,
}));

/** The core's view of the settings with what the counter store adds (which counters it lends), built once per env. */
const decisionSettingsOf = perIsolate("ratelimit decision settings", (env: Env): ServiceSettings => ({
  ...serviceSettingsOf(configLoadSettings(env).service),
  leases: counterStoreOf(env).leases,
}));

/** The isolate's over-limit cache for this env, or undefined when LocalCacheSizeInBytes is 0. */
const localCacheOf = perIsolate("ratelimit local cache", (env: Env): LocalCache | undefined => {
  const size = localCacheSize(rateLimitSettings(env), env as unknown as Record<string, unknown>);
  return size > 0 ? new LocalCache(size) : undefined;
});

/** The cache-store health component of /healthcheck (see stores/select.ts). */
export const counterStoreHealthy = (env: Env): Promise<boolean> => storeHealthy(counterStoreOf(env));

/** Decides a request with the configuration in force; `nowMs` is the request's clock; `explain` adds the reasons. */
export async function decide(env: Env, request: RateLimitRequest, nowMs: number, options: { explain?: boolean } = {}) {
  return observeDecision(env, request, () => decideUnobserved(env, request, nowMs, options));
}

/** The decision itself; `decide` records its statistics and span around it (src/ratelimit/stats). */
async function decideUnobserved(env: Env, request: RateLimitRequest, nowMs: number, options: { explain?: boolean }) {
  const settings = configLoadSettings(env);
  const loaded = await currentConfig(database(env.DB), settings, nowMs);
  return shouldRateLimit(
    {
      config: loaded.config,
      store: counterStoreOf(env).store,
      settings: decisionSettingsOf(env),
      localCache: localCacheOf(env),
    },
    request,
    nowMs / 1000,
    options,
  );
}
