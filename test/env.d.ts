// Test-only bindings added by test/vitest.workers.config.ts.
declare namespace Cloudflare {
  interface Env {
    TEST_MIGRATIONS: import("cloudflare:test").D1Migration[];
    /** Ports of the servers test/global-setup.ts started. */
    TEST_REDIS_PORT: string;
    TEST_REDIS_PERSECOND_PORT: string;
    TEST_REDIS_AUTH_PORT: string;
    TEST_REDIS_POOL_PORT: string;
    TEST_REDIS_SCRIPTS_PORT: string;
    TEST_MEMCACHED_PORT: string;
    TEST_MEMCACHED2_PORT: string;
    TEST_DOH_URL: string;
    TEST_PUBLISHER_URL: string;
    TEST_REFUSED_URL: string;
  }
}
