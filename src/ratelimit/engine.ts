// Wiring of one decision: the settings, the config in force, the Durable Object store and the isolate's
// over-limit cache, handed to the pure core. Every transport (/json, Connect, gRPC-Web) decides through here.
import { database } from "../shared/db";
import { currentConfig } from "./config-provider";
import { LocalCache } from "./core/local-cache";
import { shouldRateLimit, type ServiceSettings } from "./core/service";
import type { RateLimitRequest } from "./core/types";
import { counterStore } from "./counter-stores";
import { localCacheSize, rateLimitSettings, type RateLimitSettings } from "./settings";
import { observeDecision } from "./stats/isolate";

const localCaches = new WeakMap<RateLimitSettings, LocalCache | null>();
const serviceSettings = new WeakMap<RateLimitSettings, ServiceSettings>();

function serviceSettingsOf(settings: RateLimitSettings): ServiceSettings {
  let result = serviceSettings.get(settings);
  if (!result) {
    result = {
      shadowMode: settings.SHADOW_MODE,
      stopCacheKeyIncrementWhenOverlimit: settings.STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT,
      nearLimitRatio: settings.NEAR_LIMIT_RATIO,
      cacheKeyPrefix: settings.CACHE_KEY_PREFIX,
      responseHeaders: settings.LIMIT_RESPONSE_HEADERS_ENABLED
        ? {
            limit: settings.LIMIT_LIMIT_HEADER,
            remaining: settings.LIMIT_REMAINING_HEADER,
            reset: settings.LIMIT_RESET_HEADER,
          }
        : undefined,
    };
    serviceSettings.set(settings, result);
  }
  return result;
}

/** The isolate's over-limit cache for these settings, or undefined when LocalCacheSizeInBytes is 0. */
function localCacheOf(settings: RateLimitSettings, env: Env): LocalCache | undefined {
  let cache = localCaches.get(settings);
  if (cache === undefined) {
    const size = localCacheSize(settings, env as unknown as Record<string, unknown>);
    cache = size > 0 ? new LocalCache(size) : null;
    localCaches.set(settings, cache);
  }
  return cache ?? undefined;
}

/** Decides a request with the configuration in force; `nowMs` is the request's clock. */
export async function decide(env: Env, request: RateLimitRequest, nowMs: number) {
  return observeDecision(env, request, () => decideUnobserved(env, request, nowMs));
}

/** The decision itself; `decide` records its statistics and span around it (src/ratelimit/stats). */
async function decideUnobserved(env: Env, request: RateLimitRequest, nowMs: number) {
  const settings = rateLimitSettings(env);
  const loaded = await currentConfig(database(env.DB), settings, nowMs);
  return shouldRateLimit(
    {
      config: loaded.config,
      store: counterStore(env, settings),
      settings: serviceSettingsOf(settings),
      localCache: localCacheOf(settings, env),
    },
    request,
    Math.floor(nowMs / 1000),
  );
}
