// The meanings of the counter stores' settings (src/ratelimit/counter-store-settings.ts), for docs/settings.md only:
// the Worker never imports this module (.dependency-cruiser.cjs), so the texts stay out of its bundle.
import { type SettingMeanings, oneLine } from "../shared/settings";
import type { CounterStoreSettings } from "./counter-store-settings";

/** A per-second store setting: the same as its KVSTORE_* counterpart, for the second store. */
const perSecond = (name: string) => `As KVSTORE_${name}, for the per-second store.`;

export const counterStoreSettingMeanings: SettingMeanings<keyof typeof CounterStoreSettings.out.shape> = {
  BACKEND_TYPE: oneLine`
      Where counters live: \`durable-object\`; \`redis\` or \`kvstore\`, the key-value store (a server speaking the
      Redis protocol); \`memcache\`, the object cache (memcached protocol). Any case.`,
  COUNTER_OBJECT_LAYOUT: oneLine`
      Durable Object store. \`per_key\`: one object per rate-limit key. \`sharded\`: the keys hashed over
      COUNTER_OBJECT_SHARDS objects, each holding many counters in one table; far fewer objects to create, for
      workloads where most keys are seen a few times (per client IP, per user). Changing it (or the shard count) on a
      running deployment starts every counter again from 0.`,
  COUNTER_OBJECT_ACTIVE_LIMIT: oneLine`
      Durable Object store, \`per_key\` layout: most distinct counter objects one isolate calls within
      COUNTER_WRITE_BEHIND + 13 s; a call to a further new key waits until the oldest ages out, at most
      COUNTER_OBJECT_ADMISSION_MAX_WAIT. Only where the objects share the Worker's process (\`wrangler dev\`,
      self-hosted workerd): workerd keeps an object's SQLite database open about 10 s after its last activity, and past
      about 2,800 open databases the process fails with SQLITE_NOMEM. On Cloudflare the objects run elsewhere, so
      wrangler.toml sets \`0\` (no limit) for \`wrangler deploy\`, and \`npm start\` and the tests set \`2000\`.`,
  COUNTER_OBJECT_ADMISSION_MAX_WAIT: oneLine`
        Durable Object store, with COUNTER_OBJECT_ACTIVE_LIMIT: longest a request waits for a new counter object to be
        admitted. As soon as no object in use can age out for it within the bound (at once, when the oldest ages out
        later), it is answered 500 \`rate limit counter store error: this isolate already uses
        COUNTER_OBJECT_ACTIVE_LIMIT ...\` (gRPC: UNAVAILABLE, HTTP 503), which Envoy's \`failure_mode_deny\` turns into a pass or a
        refusal; \`0\` never waits.`,
  COUNTER_OBJECT_SHARDS: "Durable Object store, `sharded` layout: how many shard objects (1 to 4096).",
  COUNTER_WRITE_BEHIND: oneLine`
        Durable Object store: how long a counter that must be stored may wait before it is written, gathering that
        interval's hits into one write; \`0\` writes before answering. A crash of the object loses at most this
        interval's hits (lets that many more through); an ordinary eviction loses nothing.`,
  COUNTER_MAX_IN_FLIGHT: oneLine`
        Durable Object store: most calls one isolate has in flight to one counter object (1 to 64). Requests for that
        object that arrive meanwhile wait and travel together in the next call, each still answered exactly as if the
        requests had been served one by one in arrival order; a hot key costs its object one call per round trip.`,
  COUNTER_BATCH_LINGER_MS: oneLine`
        Durable Object store: milliseconds (0 to 50) a call to a counter object may be held back to gather more
        requests into it; \`0\` sends at once (requests still gather while a call is in flight).`,
  COUNTER_LEASES: oneLine`
        Durable Object store: lend every fixed-window rule's quota to isolates in shares (as a rule's \`lease: true\`
        does for that rule), so a hot key is answered mostly without a call to its object. Never more than the limit
        is admitted; unused shares cost under-admission (docs/ratelimit.md). Rules using \`sliding_window\` or
        \`token_bucket\` are counted as without it.`,
  COUNTER_LEASE_MAX_UNITS: oneLine`
        Durable Object store, leases: most units of one key's quota an isolate holds at once (1 to 1,000,000), the
        bound on what one isolate's share can leave unused.`,
  COUNTER_OBJECT_MIN_IDLE_LIFETIME: oneLine`
        Durable Object store: how long the platform surely keeps an idle counter object in memory (workerd: 10 s;
        Cloudflare: longer). A hit whose window ends sooner is never written, so per-second windows never touch
        storage. \`0\` writes every window.`,
  KVSTORE_SOCKET_TYPE: "`unix` is refused when the key-value store is used: a Worker cannot reach a unix socket.",
  KVSTORE_URL: oneLine`
      Required with the key-value store. \`single\`: \`host:port\`; \`sentinel\`: the master's name, then the
      sentinels' \`host:port\` list; \`cluster\`: every node's \`host:port\`.`,
  KVSTORE_TYPE: oneLine`
      \`single\` server, \`sentinel\` (Redis Sentinel: sentinels that name the current master) or \`cluster\`
      (Redis Cluster: keys spread over nodes); any case.`,
  KVSTORE_POOL_SIZE: "Pooled connections, each held by one Durable Object; `0` opens a connection per request instead.",
  KVSTORE_TIMEOUT: oneLine`
      Connect, reply and whole-call time-out: no request waits longer on the store. 2 s, not the reference's 10 s: a
      caller (Envoy's filter: 20 ms by default) has given up long before, and a hung store would hold every caller
      and pool member that long; 2 s still leaves a waiting caller KVSTORE_POOL_ON_EMPTY_WAIT_DURATION (1 s) and then
      a second for an extra connection.`,
  KVSTORE_POOL_ON_EMPTY_BEHAVIOR: oneLine`
      What a caller does after waiting KVSTORE_POOL_ON_EMPTY_WAIT_DURATION for a busy pooled connection: \`CREATE\`
      an extra connection, fail (\`ERROR\`) or \`WAIT\` on; any case.`,
  KVSTORE_POOL_ON_EMPTY_WAIT_DURATION: "See KVSTORE_POOL_ON_EMPTY_BEHAVIOR.",
  KVSTORE_PIPELINE_WINDOW: oneLine`
      \`0\` writes each batch of commands at once; longer holds it that long to gather more callers' commands into
      one write. \`cluster\` needs more than \`0\`.`,
  KVSTORE_PIPELINE_LIMIT: "Deprecated in the reference; no effect.",
  KVSTORE_TLS: oneLine`
      TLS to the store. The server's certificate must verify against the public CAs (locally:
      \`NODE_EXTRA_CA_CERTS\`).`,
  KVSTORE_AUTH: "`password` or `user:password` for the store's nodes.",
  KVSTORE_SENTINEL_AUTH: "`password` or `user:password` for the sentinels.",
  KVSTORE_PERSECOND: "Counters of per-second limits go to a second store, set by the KVSTORE_PERSECOND_* variables.",
  KVSTORE_PERSECOND_SOCKET_TYPE: perSecond("SOCKET_TYPE"),
  KVSTORE_PERSECOND_URL: perSecond("URL"),
  KVSTORE_PERSECOND_TYPE: perSecond("TYPE"),
  KVSTORE_PERSECOND_POOL_SIZE: perSecond("POOL_SIZE"),
  KVSTORE_PERSECOND_TIMEOUT: perSecond("TIMEOUT"),
  KVSTORE_PERSECOND_POOL_ON_EMPTY_BEHAVIOR: perSecond("POOL_ON_EMPTY_BEHAVIOR"),
  KVSTORE_PERSECOND_POOL_ON_EMPTY_WAIT_DURATION: perSecond("POOL_ON_EMPTY_WAIT_DURATION"),
  KVSTORE_PERSECOND_PIPELINE_WINDOW: perSecond("PIPELINE_WINDOW"),
  KVSTORE_PERSECOND_PIPELINE_LIMIT: perSecond("PIPELINE_LIMIT"),
  KVSTORE_PERSECOND_TLS: perSecond("TLS"),
  KVSTORE_PERSECOND_AUTH: perSecond("AUTH"),
  KVSTORE_PERSECOND_SENTINEL_AUTH: perSecond("SENTINEL_AUTH"),
  KVSTORE_TLS_CLIENT_CERT: oneLine`
      A file path in the reference. A Worker has no files, and its sockets take neither a client certificate nor a
      private CA: set while TLS is on, it is refused with an error saying so. The same holds for
      KVSTORE_TLS_CLIENT_KEY and KVSTORE_TLS_CACERT.`,
  KVSTORE_TLS_CLIENT_KEY: "See KVSTORE_TLS_CLIENT_CERT.",
  KVSTORE_TLS_CACERT: "See KVSTORE_TLS_CLIENT_CERT.",
  KVSTORE_TLS_SKIP_HOSTNAME_VERIFICATION:
    "Refused when `true` while TLS is on: the runtime always checks the server's name.",
  KVSTORE_HEALTH_CHECK_ACTIVE_CONNECTION: oneLine`
      /healthcheck fails while no pooled connection of a store answers a PING within KVSTORE_TIMEOUT.`,
  HEALTHCHECK_STORE: oneLine`
      /healthcheck (and the gRPC gateway's health, which mirrors it) answers unhealthy while the configured key-value
      store (a PING per pool) or object cache (a get on every node) cannot be reached. Probed at most once a second per
      isolate, each probe bounded by 2 s; no effect with the Durable Object store. Off by default, as the reference.`,
  EXPIRATION_JITTER_MAX_SECONDS: oneLine`
      A random 0 to N-1 seconds added to each counter's expiry (key-value store and object cache), so that windows do
      not all expire at once; with Durable Objects, a fixed 0 to N-1 seconds per object added to its clean-up alarm.`,
  OBJCACHE_HOST_PORT: "The object cache's nodes, a comma-separated `host:port` list; exclusive with OBJCACHE_SRV.",
  OBJCACHE_SRV: "DNS SRV record naming the nodes, looked up through DNS over HTTPS at OBJCACHE_SRV_DOH_URL.",
  OBJCACHE_SRV_REFRESH: "Look the SRV record up again after this long; `0` looks it up once per isolate.",
  OBJCACHE_SRV_DOH_URL: "Not in the spec: the DNS-over-HTTPS endpoint (its JSON API) for OBJCACHE_SRV.",
  OBJCACHE_MAX_IDLE_CONNS: "Accepted, no effect: a Worker cannot keep idle sockets between requests.",
  OBJCACHE_TIMEOUT: "Not in the spec: connect and reply time-out (the one of the reference's memcache client).",
  OBJCACHE_TLS: "TLS to the object cache, with the key-value store's limits.",
  OBJCACHE_TLS_CLIENT_CERT: "As KVSTORE_TLS_CLIENT_CERT, for the object cache.",
  OBJCACHE_TLS_CLIENT_KEY: "As KVSTORE_TLS_CLIENT_KEY, for the object cache.",
  OBJCACHE_TLS_CACERT: "As KVSTORE_TLS_CACERT, for the object cache.",
  OBJCACHE_TLS_SKIP_HOSTNAME_VERIFICATION: "As KVSTORE_TLS_SKIP_HOSTNAME_VERIFICATION, for the object cache.",
};
