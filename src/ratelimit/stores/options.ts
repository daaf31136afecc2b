// Which counter store BACKEND_TYPE chooses, with that store's options read and checked: no Workers import, so the
// Worker (stores/select.ts) and npm start's settings check decide and refuse alike.
import type { CounterStoreSettings } from "../counter-store-settings";
import { memcacheOptions, type MemcacheOptions } from "./memcache/options";
import { redisOptions, type RedisOptions } from "./redis/options";

export type StoreChoice =
  | { backend: "durable-object" }
  | { backend: "redis"; options: RedisOptions }
  | { backend: "memcache"; options: MemcacheOptions };

/** The store the settings choose; throws SettingsError, naming the setting, for options it cannot honour. */
export function storeChoiceOf(settings: CounterStoreSettings): StoreChoice {
  switch (settings.BACKEND_TYPE) {
    case "redis":
    case "kvstore":
      return { backend: "redis", options: redisOptions(settings) };
    case "memcache":
      return { backend: "memcache", options: memcacheOptions(settings) };
    default:
      return { backend: "durable-object" };
  }
}
