// Settings of the proxy configuration API, read from the Worker's vars and secrets.
import { z } from "../shared/zod";
import { parseIpv6Network } from "./installation/addresses";
import {
  envBoolean,
  envDurationMs,
  envEnum,
  envInteger,
  envNumber,
  envOptionalString,
  envSecret,
  envString,
  settingsReader,
  unsetIfEmpty,
} from "../shared/settings";
import { NEVER_EXTRA } from "./haproxy-params/index";

/** An http(s) URL without credentials, query or fragment, kept without its trailing slash. */
const httpUrl = () =>
  z
    .url({ protocol: /^https?$/, message: "must be an http or https URL" })
    .refine((text) => {
      const url = new URL(text);
      return !url.username && !url.password && !url.search && !url.hash;
    }, "must be an http or https URL without credentials, query or fragment")
    .transform((text) => text.replace(/\/+$/, ""));

const optionalUrl = () => z.preprocess(unsetIfEmpty, httpUrl().optional()).meta({ kind: "url" });

/** Splits a list written with commas or white space; empty means none. */
const splitList = (value: unknown) =>
  typeof value === "string" ? value.split(/[\s,]+/).filter(Boolean) : (value ?? []);

const urlList = () => z.preprocess(splitList, z.array(httpUrl())).meta({ kind: "list", items: "URLs", default: "" });

/** HAProxy directive names separated by commas or white space; empty means none. */
const directiveList = () =>
  z
    .preprocess(
      splitList,
      z.array(
        z
          .string()
          .regex(
            /^[a-z][a-z0-9_-]{0,63}$/,
            "must list HAProxy directive names (lowercase letters, digits, '-' and '_')",
          )
          .refine((name) => !NEVER_EXTRA.has(name), {
            error: (issue) => `${JSON.stringify(issue.input)} cannot be allowed in params`,
          }),
      ),
    )
    .meta({ kind: "list", items: "directive names", default: "" });

/** A Worker invocation's subrequests (fetches, D1 queries, Durable Object calls) on Cloudflare's paid plan. */
export const WORKER_SUBREQUESTS = 1000;
/** One ACME order: 7 to 9 calls to the CA, 5 D1 writes, and the lock's renewal. */
export const SUBREQUESTS_PER_ACME_ORDER = 15;
/** The certificate run's own reads, writes, heartbeats and lock calls beside its orders and renewal questions. */
export const SUBREQUESTS_RESERVED_PER_CERTIFICATE_RUN = 60;

/** A time-out no call could meet below a second: every push and query would fail at once. */
const atLeastOneSecond = () => z.number().min(1000, "must be at least 1s");

const port = (defaultValue: number) =>
  z
    .preprocess(unsetIfEmpty, z.coerce.number().int().min(1).max(65535).optional())
    .transform((value) => value ?? defaultValue)
    .meta({ kind: "integer", default: String(defaultValue) });

export const ProxySettings = z
  .object({
    INSTANCE_ROLE: envEnum(["master", "slave"], "master"),
    PROXY_ADMIN_USERNAME: envSecret(),
    PROXY_ADMIN_PASSWORD: envSecret(),
    PROXY_METRICS_TOKEN: envSecret(),
    PROXY_AUTH_CACHE_TTL: envDurationMs("60s"),
    PROXY_AUTH_CACHE_MAX_ENTRIES: envInteger(1000, 0),
    PROXY_MASS_UPDATE_MAX_OPERATIONS: envInteger(5000, 1),
    PROXY_ADDRESS_EXCEPTIONS: z
      .preprocess(
        splitList,
        z.array(
          z.string().transform((text, ctx) => {
            const network = parseIpv6Network(text);
            // Named by its place (the path), never quoted: a settings error reaches anonymous callers.
            if (!network) ctx.addIssue({ code: "custom", message: "is not an IPv6 network in CIDR notation" });
            return network ?? z.NEVER;
          }),
        ),
      )
      .meta({ kind: "list", items: "IPv6 networks (CIDR)", default: "" }),
    PROXY_MAX_BODY_BYTES: envInteger(1024 * 1024, 1),
    PROXY_AUDIT_RETENTION_DAYS: envNumber(90, (days) => days.int().min(1).max(3650)).meta({ kind: "integer" }),

    // ---- quotas (issue 27): a write past one answers 403 naming it, and stores nothing ----

    PROXY_MAX_BACKENDS_PER_PROJECT: envInteger(400, 0),
    PROXY_MAX_CONTAINERS_PER_PROJECT: envInteger(800, 0),
    PROXY_MAX_DOMAINS_PER_PROJECT: envInteger(2500, 0),
    PROXY_MAX_PARAMS_BYTES_PER_PROJECT: envInteger(256 * 1024, 0),
    PROXY_MAX_INSTALLATION_BACKENDS: envInteger(4000, 0),
    PROXY_MAX_INSTALLATION_SERVERS: envInteger(8000, 0),
    PROXY_MAX_INSTALLATION_DOMAINS: envInteger(20_000, 0),
    PROXY_MAX_INSTALLATION_PUBLIC_CA_DOMAINS: envInteger(3000, 0),
    PROXY_MAX_INSTALLATION_PARAMS_BYTES: envInteger(2 * 1024 * 1024, 0),

    // ---- configuration jobs ----

    HAPROXY_AGENT_URL: optionalUrl(),
    HAPROXY_AGENT_TOKEN: envSecret(),
    HAPROXY_AGENT_TOKENS_PER_AGENT: envBoolean(false),
    SLAVE_AGENT_URLS: urlList(),
    HAPROXY_AGENT_TIMEOUT: envDurationMs("60s").pipe(atLeastOneSecond()),
    HAPROXY_AGENT_QUERY_TIMEOUT: envDurationMs("10s").pipe(atLeastOneSecond()),
    HAPROXY_HTTP_PORT: port(80),
    HAPROXY_HTTPS_PORT: port(443),
    HAPROXY_BIND_ADDRESS: envString("::").pipe(
      z.union([z.ipv4(), z.ipv6()], { message: "must be an IPv4 or IPv6 address" }),
    ),
    HAPROXY_HTTPS_REDIRECT_CODE: envEnum(["301", "302", "307", "308"], "301").transform(Number),
    HAPROXY_ACME_BACKEND_URL: optionalUrl(),
    HAPROXY_PARAMS_EXTRA_DIRECTIVES: directiveList(),
    HAPROXY_VERSIONS_KEPT: envInteger(20, 1),
    SSH_PROXY_VERSIONS_KEPT: envInteger(20, 1),
    SSH_PROXY_UPSTREAM_KEY_FILE: envString("/etc/sshpiperd/upstream_key"),
    SSH_PROXY_KNOWN_HOSTS_FILE: envString("/etc/sshpiperd/known_hosts"),
    // A tenant's call waits out the window inside its request: a longer one would keep calls open past the patience of
    // clients and of the proxies in front of them.
    PROXY_GENERATION_DEBOUNCE: envDurationMs("5s").pipe(z.number().max(300_000, "must be at most 5m")),
    JOB_LOCK_TIMEOUT: envDurationMs("15m").pipe(z.number().min(60_000, "must be at least 1m")),

    // ---- certificates ----

    ACME_DIRECTORY_URL: envString("https://acme-v02.api.letsencrypt.org/directory")
      .pipe(httpUrl())
      .meta({ kind: "url" }),
    ACME_EMAIL: z
      .preprocess(unsetIfEmpty, z.email({ message: "must be an e-mail address" }).optional())
      .meta({ kind: "string" }),
    ACME_RENEWAL_INFO_PER_RUN: envNumber(200, (s) => s.int().min(0).max(900)).meta({ kind: "integer" }),
    ACME_ORDERS_PER_RUN: envNumber(40, (s) => s.int().min(1).max(60)).meta({ kind: "integer" }),
    ACME_REQUEST_TIMEOUT: envDurationMs("30s").pipe(atLeastOneSecond()),
    CERT_WARN_DAYS: envInteger(14, 1),
  })
  .superRefine((settings, ctx) => {
    // Both frontends would bind the port, and the kernel would share its connections between plain http and TLS.
    if (settings.HAPROXY_HTTP_PORT === settings.HAPROXY_HTTPS_PORT) {
      ctx.addIssue({
        code: "custom",
        path: ["HAPROXY_HTTPS_PORT"],
        message: "must differ from HAPROXY_HTTP_PORT: both frontends would listen on it",
      });
    }
  });
export type ProxySettings = z.output<typeof ProxySettings>;

export const proxySettings: (env: object) => ProxySettings = settingsReader(ProxySettings, "proxy");
