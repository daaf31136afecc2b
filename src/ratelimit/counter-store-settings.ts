// Settings of the counter stores (BACKEND_TYPE): Durable Objects, the key-value store (Redis protocol), the object
// cache (memcached protocol). A schema of their own, read by src/ratelimit/stores/select.ts. The reference's names are
// aliases: REDIS_* for KVSTORE_*, MEMCACHE_* for OBJCACHE_*; the spec's name wins when both are set.
import { z } from "../shared/zod";
import {
  envBoolean,
  envDurationMs,
  envHttpUrl,
  envInteger,
  envOptionalString,
  envSecret,
  envString,
  settingsReader,
} from "../shared/settings";

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

/** The reference's name for a counter store setting, read when the spec's is unset (see withStoreAliases). */
export function storeAliasOf(name: string): string | undefined {
  const pair = STORE_ALIASES.find(([, spec]) => name.startsWith(spec));
  return pair && pair[0] + name.slice(pair[1].length);
}

/** An enum variable read case-insensitively (the reference lower-cases KVSTORE_TYPE, upper-cases the pool behaviour). */
const envChoice = <const T extends readonly [string, ...string[]]>(
  choices: T,
  defaultValue: T[number],
  upper = false,
) =>
  z
    .preprocess(
      (value) =>
        value === "" || value === undefined
          ? undefined
          : upper
            ? String(value).toUpperCase()
            : String(value).toLowerCase(),
      z.enum(choices).default(defaultValue as never),
    )
    .meta({ kind: "choice", choices, default: defaultValue });

export const CounterStoreSettings = z.preprocess(
  withStoreAliases,
  z.object({
    BACKEND_TYPE: envChoice(["durable-object", "redis", "kvstore", "memcache"], "durable-object"),
    COUNTER_OBJECT_LAYOUT: envChoice(["per_key", "sharded"], "per_key"),
    COUNTER_OBJECT_ACTIVE_LIMIT: envInteger(2000),
    COUNTER_OBJECT_ADMISSION_MAX_WAIT: envDurationMs("2s").pipe(z.number().max(30_000, "must be at most 30s")),
    COUNTER_OBJECT_SHARDS: envInteger(64, 1).pipe(z.number().max(4096)),
    COUNTER_WRITE_BEHIND: envDurationMs("2s").pipe(z.number().max(5000, "must be at most 5s")),
    COUNTER_MAX_IN_FLIGHT: envInteger(1, 1).pipe(z.number().max(64, "must be at most 64")),
    COUNTER_BATCH_LINGER_MS: envInteger(0).pipe(z.number().max(50, "must be at most 50")),
    COUNTER_LEASES: envBoolean(false),
    COUNTER_LEASE_MAX_UNITS: envInteger(1000, 1).pipe(z.number().max(1_000_000, "must be at most 1000000")),
    COUNTER_OBJECT_MIN_IDLE_LIFETIME: envDurationMs("10s").pipe(z.number().max(60_000, "must be at most 60s")),
    KVSTORE_SOCKET_TYPE: envChoice(["tcp", "unix"], "tcp"),
    KVSTORE_URL: envString(""),
    KVSTORE_TYPE: envChoice(["single", "sentinel", "cluster"], "single"),
    KVSTORE_POOL_SIZE: envInteger(10),
    KVSTORE_TIMEOUT: envDurationMs("2s"),
    KVSTORE_POOL_ON_EMPTY_BEHAVIOR: envChoice(["CREATE", "ERROR", "WAIT"], "CREATE", true),
    KVSTORE_POOL_ON_EMPTY_WAIT_DURATION: envDurationMs("1s"),
    KVSTORE_PIPELINE_WINDOW: envDurationMs("0"),
    KVSTORE_PIPELINE_LIMIT: envInteger(0),
    KVSTORE_TLS: envBoolean(false),
    KVSTORE_AUTH: envSecret(),
    KVSTORE_SENTINEL_AUTH: envSecret(),
    KVSTORE_PERSECOND: envBoolean(false),
    KVSTORE_PERSECOND_SOCKET_TYPE: envChoice(["tcp", "unix"], "tcp"),
    KVSTORE_PERSECOND_URL: envString(""),
    KVSTORE_PERSECOND_TYPE: envChoice(["single", "sentinel", "cluster"], "single"),
    KVSTORE_PERSECOND_POOL_SIZE: envInteger(10),
    KVSTORE_PERSECOND_TIMEOUT: envDurationMs("2s"),
    KVSTORE_PERSECOND_POOL_ON_EMPTY_BEHAVIOR: envChoice(["CREATE", "ERROR", "WAIT"], "CREATE", true),
    KVSTORE_PERSECOND_POOL_ON_EMPTY_WAIT_DURATION: envDurationMs("1s"),
    KVSTORE_PERSECOND_PIPELINE_WINDOW: envDurationMs("0"),
    KVSTORE_PERSECOND_PIPELINE_LIMIT: envInteger(0),
    KVSTORE_PERSECOND_TLS: envBoolean(false),
    KVSTORE_PERSECOND_AUTH: envSecret(),
    KVSTORE_PERSECOND_SENTINEL_AUTH: envSecret(),
    KVSTORE_TLS_CLIENT_CERT: envOptionalString(),
    KVSTORE_TLS_CLIENT_KEY: envOptionalString(),
    KVSTORE_TLS_CACERT: envOptionalString(),
    KVSTORE_TLS_SKIP_HOSTNAME_VERIFICATION: envBoolean(false),
    KVSTORE_HEALTH_CHECK_ACTIVE_CONNECTION: envBoolean(false),
    HEALTHCHECK_STORE: envBoolean(false),
    EXPIRATION_JITTER_MAX_SECONDS: envInteger(300),
    OBJCACHE_HOST_PORT: envString(""),
    OBJCACHE_SRV: envString(""),
    OBJCACHE_SRV_REFRESH: envDurationMs("0"),
    OBJCACHE_SRV_DOH_URL: envString("https://cloudflare-dns.com/dns-query").pipe(envHttpUrl()).meta({ kind: "url" }),
    OBJCACHE_MAX_IDLE_CONNS: envInteger(2),
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
