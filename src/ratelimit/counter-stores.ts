// Chooses where the rate limit counters live (BACKEND_TYPE): Durable Objects (the default), the key-value store
// (`redis` or `kvstore`: Redis protocol over cloudflare:sockets) or the object cache (`memcache`). Every store plugs
// in here behind the core's CounterStore port; the settings are checked once per isolate.
import { waitUntil } from "cloudflare:workers";
import type { CounterStore } from "./core/types";
import { durableObjectStore } from "./durable-object-store";
import { kvstoreOptions } from "./kvstore/options";
import { kvstoreCounterStore, type KvstoreCounterStore } from "./kvstore/store";
import { objcacheCounterStore, objcacheOptions } from "./objcache/store";
import { counterStoreSettings, type RateLimitSettings } from "./settings";

type Backend = "durable-object" | "kvstore" | "objcache";

interface Chosen {
  backend: Backend;
  store: CounterStore;
  kvstore?: KvstoreCounterStore;
  healthCheckActiveConnection: boolean;
}

/** Per env object (one per isolate): the store built from its settings. */
const chosen = new WeakMap<object, Chosen>();

function choose(env: Env): Chosen {
  let result = chosen.get(env);
  if (result) return result;
  const settings = counterStoreSettings(env);
  switch (settings.BACKEND_TYPE) {
    case "redis":
    case "kvstore": {
      const options = kvstoreOptions(settings);
      const kvstore = kvstoreCounterStore(env.KVSTORE_CONNECTION, options);
      result = {
        backend: "kvstore",
        store: kvstore,
        kvstore,
        healthCheckActiveConnection: options.healthCheckActiveConnection,
      };
      break;
    }
    case "memcache":
      // The increments run after the answer, for as long as the request's waitUntil keeps the Worker alive.
      result = {
        backend: "objcache",
        store: objcacheCounterStore(objcacheOptions(settings), waitUntil),
        healthCheckActiveConnection: false,
      };
      break;
    default:
      result = {
        backend: "durable-object",
        store: durableObjectStore(env.RATE_LIMIT_COUNTER),
        healthCheckActiveConnection: false,
      };
  }
  chosen.set(env, result);
  return result;
}

export function counterStore(env: Env, _settings: RateLimitSettings): CounterStore {
  return choose(env).store;
}

/**
 * Whether the counter store's failures may be shown to callers. The key-value store's and the object cache's
 * messages are composed by their clients from addresses, durations and the server's own error replies (never
 * credentials), as the reference shows them; the Durable Object store's are runtime internals.
 */
export function storeErrorsArePublic(env: Env): boolean {
  return choose(env).backend !== "durable-object";
}

/**
 * The cache-store health component: with KVSTORE_HEALTH_CHECK_ACTIVE_CONNECTION and the key-value store, healthy
 * only while each pool holds (or can open at once) a connection; always healthy otherwise.
 */
export async function counterStoreHealthy(env: Env): Promise<boolean> {
  const { kvstore, healthCheckActiveConnection } = choose(env);
  if (!kvstore || !healthCheckActiveConnection) return true;
  return kvstore.healthy();
}
