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
  oneLine,
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

/** A per-second store setting: the same as its KVSTORE_* counterpart, for the second store. */
const perSecond = <S extends z.ZodType>(schema: S, name: string) =>
  schema.describe(`As KVSTORE_${name}, for the per-second store.`);

export const CounterStoreSettings = z.preprocess(
  withStoreAliases,
  z.object({
    BACKEND_TYPE: envChoice(["durable-object", "redis", "kvstore", "memcache"], "durable-object").describe(oneLine`
      Where counters live: \`durable-object\`; \`redis\` or \`kvstore\`, the key-value store (a server speaking the
      Redis protocol); \`memcache\`, the object cache (memcached protocol). Any case.`),
    COUNTER_OBJECT_LAYOUT: envChoice(["per_key", "sharded"], "per_key").describe(oneLine`
      Durable Object store. \`per_key\`: one object per rate-limit key. \`sharded\`: the keys hashed over
      COUNTER_OBJECT_SHARDS objects, each holding many counters in one table; far fewer objects to create, for
      workloads where most keys are seen a few times (per client IP, per user). Changing it (or the shard count) on a
      running deployment starts every counter again from 0.`),
    COUNTER_OBJECT_ACTIVE_LIMIT: envInteger(2000).describe(oneLine`
      Durable Object store, \`per_key\` layout: most distinct counter objects one isolate calls within
      COUNTER_WRITE_BEHIND + 13 s; a call to a further new key waits until the oldest ages out, at most
      COUNTER_OBJECT_ADMISSION_MAX_WAIT. Only where the objects share the Worker's process (\`wrangler dev\`,
      self-hosted workerd): workerd keeps an object's SQLite database open about 10 s after its last activity, and past
      about 2,800 open databases the process fails with SQLITE_NOMEM. On Cloudflare the objects run elsewhere, so
      wrangler.toml sets \`0\` (no limit) for \`wrangler deploy\`, and \`npm start\` and the tests set \`2000\`.`),
    COUNTER_OBJECT_ADMISSION_MAX_WAIT: envDurationMs("2s").pipe(z.number().max(30_000, "must be at most 30s"))
      .describe(oneLine`
        Durable Object store, with COUNTER_OBJECT_ACTIVE_LIMIT: longest a request waits for a new counter object to be
        admitted. As soon as no object in use can age out for it within the bound (at once, when the oldest ages out
        later), it is answered 500 \`rate limit counter store error: this isolate already uses
        COUNTER_OBJECT_ACTIVE_LIMIT ...\` (gRPC: UNAVAILABLE, HTTP 503), which Envoy's \`failure_mode_deny\` turns into a pass or a
        refusal; \`0\` never waits.`),
    COUNTER_OBJECT_SHARDS: envInteger(64, 1)
      .pipe(z.number().max(4096))
      .describe("Durable Object store, `sharded` layout: how many shard objects (1 to 4096)."),
    COUNTER_WRITE_BEHIND: envDurationMs("2s").pipe(z.number().max(5000, "must be at most 5s")).describe(oneLine`
        Durable Object store: how long a counter that must be stored may wait before it is written, gathering that
        interval's hits into one write; \`0\` writes before answering. A crash of the object loses at most this
        interval's hits (lets that many more through); an ordinary eviction loses nothing.`),
    COUNTER_MAX_IN_FLIGHT: envInteger(1, 1).pipe(z.number().max(64, "must be at most 64")).describe(oneLine`
        Durable Object store: most calls one isolate has in flight to one counter object (1 to 64). Requests for that
        object that arrive meanwhile wait and travel together in the next call, each still answered exactly as if the
        requests had been served one by one in arrival order; a hot key costs its object one call per round trip.`),
    COUNTER_BATCH_LINGER_MS: envInteger(0).pipe(z.number().max(50, "must be at most 50")).describe(oneLine`
        Durable Object store: milliseconds (0 to 50) a call to a counter object may be held back to gather more
        requests into it; \`0\` sends at once (requests still gather while a call is in flight).`),
    COUNTER_LEASES: envBoolean(false).describe(oneLine`
        Durable Object store: lend every fixed-window rule's quota to isolates in shares (as a rule's \`lease: true\`
        does for that rule), so a hot key is answered mostly without a call to its object. Never more than the limit
        is admitted; unused shares cost under-admission (docs/ratelimit.md). Rules using \`sliding_window\` or
        \`token_bucket\` are counted as without it.`),
    COUNTER_LEASE_MAX_UNITS: envInteger(1000, 1).pipe(z.number().max(1_000_000, "must be at most 1000000"))
      .describe(oneLine`
        Durable Object store, leases: most units of one key's quota an isolate holds at once (1 to 1,000,000), the
        bound on what one isolate's share can leave unused.`),
    COUNTER_OBJECT_MIN_IDLE_LIFETIME: envDurationMs("10s").pipe(z.number().max(60_000, "must be at most 60s"))
      .describe(oneLine`
        Durable Object store: how long the platform surely keeps an idle counter object in memory (workerd: 10 s;
        Cloudflare: longer). A hit whose window ends sooner is never written, so per-second windows never touch
        storage. \`0\` writes every window.`),
    KVSTORE_SOCKET_TYPE: envChoice(["tcp", "unix"], "tcp").describe(
      "`unix` is refused when the key-value store is used: a Worker cannot reach a unix socket.",
    ),
    KVSTORE_URL: envString("").describe(oneLine`
      Required with the key-value store. \`single\`: \`host:port\`; \`sentinel\`: the master's name, then the
      sentinels' \`host:port\` list; \`cluster\`: every node's \`host:port\`.`),
    KVSTORE_TYPE: envChoice(["single", "sentinel", "cluster"], "single").describe(oneLine`
      \`single\` server, \`sentinel\` (Redis Sentinel: sentinels that name the current master) or \`cluster\`
      (Redis Cluster: keys spread over nodes); any case.`),
    KVSTORE_POOL_SIZE: envInteger(10).describe(
      "Pooled connections, each held by one Durable Object; `0` opens a connection per request instead.",
    ),
    KVSTORE_TIMEOUT: envDurationMs("2s").describe(oneLine`
      Connect, reply and whole-call time-out: no request waits longer on the store. 2 s, not the reference's 10 s: a
      caller (Envoy's filter: 20 ms by default) has given up long before, and a hung store would hold every caller
      and pool member that long; 2 s still leaves a waiting caller KVSTORE_POOL_ON_EMPTY_WAIT_DURATION (1 s) and then
      a second for an extra connection.`),
    KVSTORE_POOL_ON_EMPTY_BEHAVIOR: envChoice(["CREATE", "ERROR", "WAIT"], "CREATE", true).describe(oneLine`
      What a caller does after waiting KVSTORE_POOL_ON_EMPTY_WAIT_DURATION for a busy pooled connection: \`CREATE\`
      an extra connection, fail (\`ERROR\`) or \`WAIT\` on; any case.`),
    KVSTORE_POOL_ON_EMPTY_WAIT_DURATION: envDurationMs("1s").describe("See KVSTORE_POOL_ON_EMPTY_BEHAVIOR."),
    KVSTORE_PIPELINE_WINDOW: envDurationMs("0").describe(oneLine`
      \`0\` writes each batch of commands at once; longer holds it that long to gather more callers' commands into
      one write. \`cluster\` needs more than \`0\`.`),
    KVSTORE_PIPELINE_LIMIT: envInteger(0).describe("Deprecated in the reference; no effect."),
    KVSTORE_TLS: envBoolean(false).describe(oneLine`
      TLS to the store. The server's certificate must verify against the public CAs (locally:
      \`NODE_EXTRA_CA_CERTS\`).`),
    KVSTORE_AUTH: envSecret().describe("`password` or `user:password` for the store's nodes."),
    KVSTORE_SENTINEL_AUTH: envSecret().describe("`password` or `user:password` for the sentinels."),
    KVSTORE_PERSECOND: envBoolean(false).describe(
      "Counters of per-second limits go to a second store, set by the KVSTORE_PERSECOND_* variables.",
    ),
    KVSTORE_PERSECOND_SOCKET_TYPE: perSecond(envChoice(["tcp", "unix"], "tcp"), "SOCKET_TYPE"),
    KVSTORE_PERSECOND_URL: perSecond(envString(""), "URL"),
    KVSTORE_PERSECOND_TYPE: perSecond(envChoice(["single", "sentinel", "cluster"], "single"), "TYPE"),
    KVSTORE_PERSECOND_POOL_SIZE: perSecond(envInteger(10), "POOL_SIZE"),
    KVSTORE_PERSECOND_TIMEOUT: perSecond(envDurationMs("2s"), "TIMEOUT"),
    KVSTORE_PERSECOND_POOL_ON_EMPTY_BEHAVIOR: perSecond(
      envChoice(["CREATE", "ERROR", "WAIT"], "CREATE", true),
      "POOL_ON_EMPTY_BEHAVIOR",
    ),
    KVSTORE_PERSECOND_POOL_ON_EMPTY_WAIT_DURATION: perSecond(envDurationMs("1s"), "POOL_ON_EMPTY_WAIT_DURATION"),
    KVSTORE_PERSECOND_PIPELINE_WINDOW: perSecond(envDurationMs("0"), "PIPELINE_WINDOW"),
    KVSTORE_PERSECOND_PIPELINE_LIMIT: perSecond(envInteger(0), "PIPELINE_LIMIT"),
    KVSTORE_PERSECOND_TLS: perSecond(envBoolean(false), "TLS"),
    KVSTORE_PERSECOND_AUTH: perSecond(envSecret(), "AUTH"),
    KVSTORE_PERSECOND_SENTINEL_AUTH: perSecond(envSecret(), "SENTINEL_AUTH"),
    KVSTORE_TLS_CLIENT_CERT: envOptionalString().describe(oneLine`
      A file path in the reference. A Worker has no files, and its sockets take neither a client certificate nor a
      private CA: set while TLS is on, it is refused with an error saying so. The same holds for
      KVSTORE_TLS_CLIENT_KEY and KVSTORE_TLS_CACERT.`),
    KVSTORE_TLS_CLIENT_KEY: envOptionalString().describe("See KVSTORE_TLS_CLIENT_CERT."),
    KVSTORE_TLS_CACERT: envOptionalString().describe("See KVSTORE_TLS_CLIENT_CERT."),
    KVSTORE_TLS_SKIP_HOSTNAME_VERIFICATION: envBoolean(false).describe(
      "Refused when `true` while TLS is on: the runtime always checks the server's name.",
    ),
    KVSTORE_HEALTH_CHECK_ACTIVE_CONNECTION: envBoolean(false).describe(oneLine`
      /healthcheck fails while no pooled connection of a store answers a PING within KVSTORE_TIMEOUT.`),
    HEALTHCHECK_STORE: envBoolean(false).describe(oneLine`
      /healthcheck (and the gRPC gateway's health, which mirrors it) answers unhealthy while the configured key-value
      store (a PING per pool) or object cache (a get on every node) cannot be reached. Probed at most once a second per
      isolate, each probe bounded by 2 s; no effect with the Durable Object store. Off by default, as the reference.`),
    EXPIRATION_JITTER_MAX_SECONDS: envInteger(300).describe(oneLine`
      A random 0 to N-1 seconds added to each counter's expiry (key-value store and object cache), so that windows do
      not all expire at once; with Durable Objects, a fixed 0 to N-1 seconds per object added to its clean-up alarm.`),
    OBJCACHE_HOST_PORT: envString("").describe(
      "The object cache's nodes, a comma-separated `host:port` list; exclusive with OBJCACHE_SRV.",
    ),
    OBJCACHE_SRV: envString("").describe(
      "DNS SRV record naming the nodes, looked up through DNS over HTTPS at OBJCACHE_SRV_DOH_URL.",
    ),
    OBJCACHE_SRV_REFRESH: envDurationMs("0").describe(
      "Look the SRV record up again after this long; `0` looks it up once per isolate.",
    ),
    OBJCACHE_SRV_DOH_URL: envString("https://cloudflare-dns.com/dns-query")
      .pipe(envHttpUrl())
      .meta({ kind: "url" })
      .describe("Not in the spec: the DNS-over-HTTPS endpoint (its JSON API) for OBJCACHE_SRV."),
    OBJCACHE_MAX_IDLE_CONNS: envInteger(2).describe(
      "Accepted, no effect: a Worker cannot keep idle sockets between requests.",
    ),
    OBJCACHE_TIMEOUT: envDurationMs("500ms").describe(
      "Not in the spec: connect and reply time-out (the one of the reference's memcache client).",
    ),
    OBJCACHE_TLS: envBoolean(false).describe("TLS to the object cache, with the key-value store's limits."),
    OBJCACHE_TLS_CLIENT_CERT: envOptionalString().describe("As KVSTORE_TLS_CLIENT_CERT, for the object cache."),
    OBJCACHE_TLS_CLIENT_KEY: envOptionalString().describe("As KVSTORE_TLS_CLIENT_KEY, for the object cache."),
    OBJCACHE_TLS_CACERT: envOptionalString().describe("As KVSTORE_TLS_CACERT, for the object cache."),
    OBJCACHE_TLS_SKIP_HOSTNAME_VERIFICATION: envBoolean(false).describe(
      "As KVSTORE_TLS_SKIP_HOSTNAME_VERIFICATION, for the object cache.",
    ),
  }),
);
export type CounterStoreSettings = z.output<typeof CounterStoreSettings>;

export const counterStoreSettings: (env: object) => CounterStoreSettings = settingsReader(
  CounterStoreSettings,
  "ratelimit",
);
