// Chooses where the rate limit counters live (BACKEND_TYPE): Durable Objects (the default), the key-value store
// (`redis` or `kvstore`: Redis protocol over cloudflare:sockets) or the object cache (`memcache`). Every store plugs
// in here behind the core's CounterStore port, as envoy ratelimit's runner.go `createLimiter` switches on BackendType.
// runtime.ts builds the chosen store once per isolate.
import { waitUntil } from "cloudflare:workers";
import type { CounterStore } from "../core/types";
import { durableObjectStore } from "./durable-object/store";
import { redisCounterStore, type RedisCounterStore } from "./redis/store";
import { storeChoiceOf } from "./options";
import { memcacheCounterStore, memcacheReachable } from "./memcache/store";
import { CachedProbe } from "./health-probe";
import { counterStoreSettings } from "../counter-store-settings";
import type { LeaseMode } from "../core/limiter";

type Backend = "durable-object" | "redis" | "memcache";

/**
 * Most operations one coalesced call to a counter object carries: about 100 KB of RPC, a millisecond or two of the
 * object's time, so a burst on one key still moves in steps the object answers quickly.
 */
const MAX_OPERATIONS_PER_CALL = 1000;

/**
 * Longest a request waits for a call to its counter object that another request makes (its turn or its replies).
 * A call normally takes milliseconds; this only ends the wait of requests whose call is stuck, with a 500.
 */
const MAX_COALESCED_WAIT_MS = 10_000;

/**
 * How often a waiting request checks, from its own timer, that a call is in flight for it, and makes one itself if
 * none is. The request calling for a hot key normally goes on until nothing waits; this covers the one that stopped
 * (past the wait bound) or was cancelled, without any request doing I/O after another request woke it.
 */
const COALESCED_HANDOFF_MS = 500;

/** The store the settings chose, with what the health check and the error messages need to know of it. */
export interface SelectedStore {
  backend: Backend;
  store: CounterStore;
  redis?: RedisCounterStore;
  healthCheckActiveConnection: boolean;
  /** Which fixed-window counters the store answers from leased shares; absent when it does not lend. */
  leases?: LeaseMode;
  /** HEALTHCHECK_STORE with the key-value store or the object cache: whether it can be reached, cached. */
  reachable?: CachedProbe;
}

/** Builds the counter store the env's settings choose. Throws SettingsError for malformed store settings. */
export function selectCounterStore(env: Env): SelectedStore {
  let result: SelectedStore;
  const settings = counterStoreSettings(env);
  const choice = storeChoiceOf(settings);
  switch (choice.backend) {
    case "redis": {
      const { options } = choice;
      const redis = redisCounterStore(env.KVSTORE_CONNECTION, options);
      result = {
        backend: "redis",
        store: redis,
        redis,
        healthCheckActiveConnection: options.healthCheckActiveConnection,
        ...(settings.HEALTHCHECK_STORE && { reachable: new CachedProbe(() => redis.reachable()) }),
      };
      break;
    }
    case "memcache": {
      // The increments run after the answer, for as long as the request's waitUntil keeps the Worker alive.
      const { options } = choice;
      result = {
        backend: "memcache",
        store: memcacheCounterStore(options, waitUntil),
        healthCheckActiveConnection: false,
        ...(settings.HEALTHCHECK_STORE && { reachable: new CachedProbe(() => memcacheReachable(options)) }),
      };
      break;
    }
    default:
      result = {
        backend: "durable-object",
        store: durableObjectStore(
          env.RATE_LIMIT_COUNTER,
          settings.COUNTER_OBJECT_LAYOUT === "sharded"
            ? { kind: "sharded", shards: settings.COUNTER_OBJECT_SHARDS }
            : {
                kind: "per_key",
                activeLimit: settings.COUNTER_OBJECT_ACTIVE_LIMIT,
                admissionMaxWaitMs: settings.COUNTER_OBJECT_ADMISSION_MAX_WAIT,
                writeBehindMs: settings.COUNTER_WRITE_BEHIND,
              },
          {
            maxInFlight: settings.COUNTER_MAX_IN_FLIGHT,
            lingerMs: settings.COUNTER_BATCH_LINGER_MS,
            maxOperationsPerCall: MAX_OPERATIONS_PER_CALL,
            maxWaitMs: MAX_COALESCED_WAIT_MS,
            handoffMs: COALESCED_HANDOFF_MS,
          },
          { maxUnits: settings.COUNTER_LEASE_MAX_UNITS },
        ),
        healthCheckActiveConnection: false,
        leases: settings.COUNTER_LEASES ? "all" : "rules",
      };
  }
  return result;
}

/**
 * The cache-store health component: with HEALTHCHECK_STORE, healthy only while the key-value store or object cache
 * answers (cached, health-probe.ts); with KVSTORE_HEALTH_CHECK_ACTIVE_CONNECTION and the key-value store, only while
 * each pool holds (or can open at once) a connection; always healthy otherwise.
 */
export async function storeHealthy({ redis, healthCheckActiveConnection, reachable }: SelectedStore): Promise<boolean> {
  if (reachable && !(await reachable.healthy())) return false;
  if (!redis || !healthCheckActiveConnection) return true;
  return redis.healthy();
}
