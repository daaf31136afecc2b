// npm start's settings check (src/settings-check.ts) on whole settings: what the schemas accept but the Worker would
// refuse on its first request (the counter store's addresses, the statistics, the metrics mapping, the log settings)
// is named before anything starts, under the variable the operator set.
import { describe, expect, it } from "vitest";
import { settingsProblems } from "../src/settings-check";

describe("settingsProblems beyond the schemas", () => {
  it.each([
    [{ BACKEND_TYPE: "redis" }, "KVSTORE_URL", "KVSTORE_URL is required with BACKEND_TYPE=redis"],
    [
      { BACKEND_TYPE: "kvstore", KVSTORE_URL: "localhost" },
      "KVSTORE_URL",
      "expected host:port with a port from 1 to 65535",
    ],
    [
      { BACKEND_TYPE: "redis", KVSTORE_URL: "cache:6379", KVSTORE_TYPE: "cluster" },
      "KVSTORE_PIPELINE_WINDOW",
      "KVSTORE_PIPELINE_WINDOW must be non-zero with KVSTORE_TYPE=cluster (150us to 500us is typical)",
    ],
    [
      { BACKEND_TYPE: "memcache" },
      "OBJCACHE_HOST_PORT",
      "BACKEND_TYPE=memcache needs OBJCACHE_HOST_PORT or OBJCACHE_SRV",
    ],
    [{ EXTRA_TAGS: "env:prod,vault-token-s.8f3k2" }, "EXTRA_TAGS", "entry 2 is not key:value"],
    [
      { PROXY_ADDRESS_EXCEPTIONS: "fd00:1234::/48,db-primary.internal.corp:5432" },
      "PROXY_ADDRESS_EXCEPTIONS.1",
      "is not an IPv6 network in CIDR notation",
    ],
    [
      { TRACING_ENABLED: "true", OTEL_EXPORTER_OTLP_HEADERS: "authorization: Bearer x" },
      "OTEL_EXPORTER_OTLP_HEADERS",
      "entry 1: expected key=value (the value URL-encoded)",
    ],
    [{ PULLMETRICS_MAPPER_YAML: "mappings: 7" }, "PULLMETRICS_MAPPER_YAML", "mappings must be a list"],
    [{ LOG_LEVEL: "verbose" }, "LOG_LEVEL", "expected panic, fatal, error, warn, info, debug or trace"],
    [{ LOG_FORMAT: "xml" }, "LOG_FORMAT", "expected text or json"],
  ])("names %j", (env, setting, message) => {
    expect(settingsProblems(env)).toEqual([{ setting, message }]);
  });

  it("names a malformed D1_USAGE_HEADER, the Worker's own setting of no service, without its value", () => {
    expect(settingsProblems({ D1_USAGE_HEADER: "sometimes" })).toEqual([
      { setting: "D1_USAGE_HEADER", message: 'Invalid option: expected one of "true"|"1"|"t"|"false"|"0"|"f"' },
    ]);
    expect(settingsProblems({ D1_USAGE_HEADER: "true" })).toEqual([]);
  });

  it("finds nothing in settings the Worker takes", () => {
    expect(
      settingsProblems({
        BACKEND_TYPE: "redis",
        KVSTORE_URL: "cache:6379",
        EXTRA_TAGS: "zone:eu",
        LOG_LEVEL: "debug",
        LOG_FORMAT: "json",
        PULLMETRICS_MAPPER_YAML: "mappings: []",
      }),
    ).toEqual([]);
  });

  it("runs a store's checks only for the store BACKEND_TYPE chooses", () => {
    expect(settingsProblems({ KVSTORE_URL: "localhost", OBJCACHE_HOST_PORT: "nope" })).toEqual([]);
  });

  it("names the reference's alias when that is the variable set", () => {
    expect(settingsProblems({ REDIS_POOL_SIZE: "ten" })).toEqual([
      { setting: "REDIS_POOL_SIZE", message: "Invalid input: expected number, received NaN" },
    ]);
    expect(settingsProblems({ BACKEND_TYPE: "redis", REDIS_URL: "localhost" })).toEqual([
      { setting: "REDIS_URL", message: "expected host:port with a port from 1 to 65535" },
    ]);
    // The spec's name wins when both are set, so it is the one named.
    expect(settingsProblems({ REDIS_POOL_SIZE: "4", KVSTORE_POOL_SIZE: "ten" })).toEqual([
      { setting: "KVSTORE_POOL_SIZE", message: "Invalid input: expected number, received NaN" },
    ]);
  });
});

describe("settingsProblems on values a schema once let through", () => {
  it.each([
    [{ JOB_HEARTBEAT_TIMEOUT: "0" }, "JOB_HEARTBEAT_TIMEOUT", "must be at least 200ms"],
    [{ JOB_QUEUED_TIMEOUT: "0" }, "JOB_QUEUED_TIMEOUT", "must be at least 10m"],
    [{ JOB_QUEUED_TIMEOUT: "9m" }, "JOB_QUEUED_TIMEOUT", "must be at least 10m"],
    [{ JOB_LOCK_TIMEOUT: "0" }, "JOB_LOCK_TIMEOUT", "must be at least 1m"],
    [{ HAPROXY_AGENT_TIMEOUT: "0" }, "HAPROXY_AGENT_TIMEOUT", "must be at least 1s"],
    [{ HAPROXY_AGENT_QUERY_TIMEOUT: "500ms" }, "HAPROXY_AGENT_QUERY_TIMEOUT", "must be at least 1s"],
    [{ PROXY_GENERATION_DEBOUNCE: "5m1s" }, "PROXY_GENERATION_DEBOUNCE", "must be at most 5m"],
    [
      { HAPROXY_HTTP_PORT: "8443", HAPROXY_HTTPS_PORT: "8443" },
      "HAPROXY_HTTPS_PORT",
      "must differ from HAPROXY_HTTP_PORT: both frontends would listen on it",
    ],
    [
      { HAPROXY_HTTPS_PORT: "80" },
      "HAPROXY_HTTPS_PORT",
      "must differ from HAPROXY_HTTP_PORT: both frontends would listen on it",
    ],
    [{ JWT_EXPIRES_IN: "0d" }, "JWT_EXPIRES_IN", "expected a duration such as 7d, 12h or 30m"],
    [{ JWT_EXPIRES_IN: "00s" }, "JWT_EXPIRES_IN", "expected a duration such as 7d, 12h or 30m"],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: "localhost:4318" }, "OTEL_EXPORTER_OTLP_ENDPOINT", "must be an http or https URL"],
    [
      { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://user:pw@collector/v1/traces" },
      "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
      "must be an http or https URL without credentials",
    ],
    [{ OBJCACHE_SRV_DOH_URL: "ftp://dns.example/q" }, "OBJCACHE_SRV_DOH_URL", "must be an http or https URL"],
    [{ ACME_ORDERS_PER_RUN: "0" }, "ACME_ORDERS_PER_RUN", "Too small: expected number to be >=1"],
  ])("names %j", (env, setting, message) => {
    expect(settingsProblems(env)).toEqual([{ setting, message }]);
  });

  it("takes the bounds themselves and values past them", () => {
    expect(
      settingsProblems({
        JOB_HEARTBEAT_TIMEOUT: "200ms",
        JOB_QUEUED_TIMEOUT: "10m",
        JOB_LOCK_TIMEOUT: "1m",
        HAPROXY_AGENT_TIMEOUT: "1s",
        HAPROXY_AGENT_QUERY_TIMEOUT: "1s",
        HAPROXY_HTTP_PORT: "8080",
        HAPROXY_HTTPS_PORT: "8443",
        JWT_EXPIRES_IN: "1s",
        OTEL_EXPORTER_OTLP_ENDPOINT: "https://collector.example:4318",
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://collector/v1/traces",
        OBJCACHE_SRV_DOH_URL: "https://dns.example/dns-query",
        ACME_ORDERS_PER_RUN: "60",
        ACME_RENEWAL_INFO_PER_RUN: "900",
      }),
    ).toEqual([]);
  });
});
