// The Worker's bindings (wrangler.toml) on top of @cloudflare/workers-types; kept by hand instead of `wrangler types`.
declare namespace Cloudflare {
  interface GlobalProps {
    // Types `exports` of "cloudflare:workers" (the tests call exports.default.fetch).
    mainModule: typeof import("./index");
    durableNamespaces: "RateLimitCounter" | "RateLimitStats" | "JobLock" | "KvstoreConnection";
  }

  interface Env {
    DB: D1Database;
    JOBS: Queue;
    RATE_LIMIT_COUNTER: DurableObjectNamespace<import("./index").RateLimitCounter>;
    RATE_LIMIT_STATS: DurableObjectNamespace<import("./index").RateLimitStats>;
    JOB_LOCK: DurableObjectNamespace<import("./index").JobLock>;
    KVSTORE_CONNECTION: DurableObjectNamespace<import("./index").KvstoreConnection>;

    // [vars] of wrangler.toml.
    INSTANCE_ROLE: string;
    RUNTIME_APPDIRECTORY: string;
    USE_METRICSD: string;
    USE_PULLMETRICS: string;
    LOG_FORMAT: string;

    // Secrets (`wrangler secret put`; .dev.vars locally): each service works, or answers why not, without them.
    PROXY_ADMIN_USERNAME?: string;
    PROXY_ADMIN_PASSWORD?: string;
    MASTER_KEY?: string;
    JWT_SECRET?: string;
    RATELIMIT_ADMIN_TOKEN?: string;
    HAPROXY_AGENT_TOKEN?: string;
    PROXY_METRICS_TOKEN?: string;
    ACME_DIRECTORY_URL?: string;
    // The other settings (src/*/settings.ts) are read through their schemas from the env as a whole, by name.
  }
}

interface Env extends Cloudflare.Env {}
