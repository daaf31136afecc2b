// Chooses where the rate limit counters live for these settings (BACKEND_TYPE). The Durable Object store is
// the default; other stores plug in here behind the core's CounterStore port.
import type { CounterStore } from "./core/types";
import { durableObjectStore } from "./durable-object-store";
import type { RateLimitSettings } from "./settings";

export function counterStore(env: Env, _settings: RateLimitSettings): CounterStore {
  return durableObjectStore(env.RATE_LIMIT_COUNTER);
}
