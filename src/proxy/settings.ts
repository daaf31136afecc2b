// Settings of the proxy configuration API, read from the Worker's vars and secrets.
import { z } from "zod";
import { parseIpv6Network } from "./installation/addresses";
import {
  envDurationMs,
  envInteger,
  envOptionalString,
  envString,
  settingsReader,
  unsetIfEmpty,
} from "../shared/settings";
import { NEVER_EXTRA } from "./installation/params/index";

/** An http(s) URL without credentials, query or fragment, kept without its trailing slash. */
const httpUrl = () =>
  z
    .url({ protocol: /^https?$/, message: "must be an http or https URL" })
    .refine((text) => {
      const url = new URL(text);
      return !url.username && !url.password && !url.search && !url.hash;
    }, "must be an http or https URL without credentials, query or fragment")
    .transform((text) => text.replace(/\/+$/, ""));

const optionalUrl = () => z.preprocess(unsetIfEmpty, httpUrl().optional());

/** A list of URLs separated by commas or white space; empty means none. */
const urlList = () =>
  z.preprocess(
    (value) => (typeof value === "string" ? value.split(/[\s,]+/).filter(Boolean) : (value ?? [])),
    z.array(httpUrl()),
  );

/** HAProxy directive names separated by commas or white space; empty means none. */
const directiveList = () =>
  z.preprocess(
    (value) => (typeof value === "string" ? value.split(/[\s,]+/).filter(Boolean) : (value ?? [])),
    z.array(
      z
        .string()
        .regex(/^[a-z][a-z0-9_-]{0,63}$/, "must list HAProxy directive names (lowercase letters, digits, '-' and '_')")
        .refine((name) => !NEVER_EXTRA.has(name), {
          error: (issue) => `${JSON.stringify(issue.input)} cannot be allowed in params`,
        }),
    ),
  );

const port = (defaultValue: number) =>
  z
    .preprocess(unsetIfEmpty, z.coerce.number().int().min(1).max(65535).optional())
    .transform((value) => value ?? defaultValue);

export const ProxySettings = z.object({
  /** master (default) runs writes and jobs; a slave answers them with 405 and serves reads. */
  INSTANCE_ROLE: z.preprocess(unsetIfEmpty, z.enum(["master", "slave"]).default("master")),
  /** Secret: user name of the bootstrap administrator, who sees every project and may use /admin. */
  PROXY_ADMIN_USERNAME: envOptionalString(),
  /** Secret: that administrator's password. Without both, no administrator exists. */
  PROXY_ADMIN_PASSWORD: envOptionalString(),
  /**
   * How long an isolate remembers that an API user's credentials passed the PBKDF2 check (about 28 ms each), as long
   * as the stored hash is unchanged: a password change or a deleted user ends it at once. "0" checks every request.
   */
  PROXY_AUTH_CACHE_TTL: envDurationMs("60s"),
  /** Most remembered credentials per isolate (the oldest is dropped first); 0 turns the cache off. */
  PROXY_AUTH_CACHE_MAX_ENTRIES: envInteger(1000, 0),
  /**
   * Most operations one POST /domains/massupdate may carry (larger requests answer 400). The whole request is
   * one D1 batch whose rows travel as a JSON parameter, and D1 caps a value at 2 MB.
   */
  PROXY_MASS_UPDATE_MAX_OPERATIONS: envInteger(5000, 1),
  /**
   * IPv6 networks (CIDR, separated by commas or white space) whose addresses containers and hosts may use although
   * they would be refused (loopback, link-local, metadata and the like): for a test installation whose containers
   * listen on this machine, e.g. "::ffff:127.0.0.0/104". Empty (the default) makes no exception.
   */
  PROXY_ADDRESS_EXCEPTIONS: z.preprocess(
    (value) => (typeof value === "string" ? value.split(/[\s,]+/).filter(Boolean) : (value ?? [])),
    z.array(
      z.string().transform((text, ctx) => {
        const network = parseIpv6Network(text);
        if (!network) ctx.addIssue({ code: "custom", message: `${text} is not an IPv6 network in CIDR notation` });
        return network ?? z.NEVER;
      }),
    ),
  ),
  /** Largest request body, in bytes, any route of this API reads; a larger one is answered 413 before it is parsed. */
  PROXY_MAX_BODY_BYTES: envInteger(1024 * 1024, 1),

  // ---- configuration jobs ----

  /** The master load balancer's agent (haproxy-agent/); unset, a generated bundle is stored with a warning. */
  HAPROXY_AGENT_URL: optionalUrl(),
  /** Secret: bearer token of every agent (master and slaves). */
  HAPROXY_AGENT_TOKEN: envOptionalString(),
  /** Agents of the slave load balancers, each synced from the queue after the master took a version. */
  SLAVE_AGENT_URLS: urlList(),
  /** How long a push to an agent (upload, `haproxy -c`, reload) may take. */
  HAPROXY_AGENT_TIMEOUT: envDurationMs("60s"),
  /** Ports of the generated frontends http-in and https-in. */
  HAPROXY_HTTP_PORT: port(80),
  HAPROXY_HTTPS_PORT: port(443),
  /** Address the frontends bind; `::` (the default) listens on IPv6 and IPv4. */
  HAPROXY_BIND_ADDRESS: envString("::").pipe(
    z.union([z.ipv4(), z.ipv6()], { message: "must be an IPv4 or IPv6 address" }),
  ),
  /** Status of the http to https redirect of domains with a certificate. */
  HAPROXY_HTTPS_REDIRECT_CODE: z
    .preprocess(unsetIfEmpty, z.enum(["301", "302", "307", "308"]).default("301"))
    .transform(Number),
  /**
   * Origin of this control plane as the load balancers reach it: HAProxy forwards HTTP-01 challenge requests there.
   * Unset, the challenge backend has no server (and the generation warns).
   */
  HAPROXY_ACME_BACKEND_URL: optionalUrl(),
  /**
   * Directive names backend params may use besides the built-in allow-list (timeout, option, balance, http-request...),
   * separated by commas or white space; empty (the default) allows none. Their arguments are still vetted: no file,
   * path or file-like name (no `/`, no `x.pem`), no address, no environment expansion (`${NAME}`, `$NAME`), only
   * allow-listed sample fetches and converters. Section keywords, `no`, `default`, `server` and `server-template` are
   * refused: no argument check makes them safe.
   */
  HAPROXY_PARAMS_EXTRA_DIRECTIVES: directiveList(),
  /** Generated HAProxy versions kept in D1 (the active one is always kept). */
  HAPROXY_VERSIONS_KEPT: envInteger(20, 1),
  /** Generated SSH proxy versions kept in D1. */
  SSH_PROXY_VERSIONS_KEPT: envInteger(20, 1),
  /** Private key file sshpiperd uses to log in to the containers (the original's shared proxy key). */
  SSH_PROXY_UPSTREAM_KEY_FILE: envString("/etc/sshpiperd/upstream_key"),
  /** known_hosts file sshpiperd checks the containers' host keys against. */
  SSH_PROXY_KNOWN_HOSTS_FILE: envString("/etc/sshpiperd/known_hosts"),
  /** A job lock whose holder did not release it (its worker died) is free again after this long. */
  JOB_LOCK_TIMEOUT: envDurationMs("15m"),

  // ---- certificates ----

  /** ACME directory of the public CA. */
  ACME_DIRECTORY_URL: envString("https://acme-v02.api.letsencrypt.org/directory").pipe(httpUrl()),
  /** Contact address of the ACME account (optional). */
  ACME_EMAIL: z.preprocess(unsetIfEmpty, z.email({ message: "must be an e-mail address" }).optional()),
  /** A public CA certificate is renewed when it ends within this many days. */
  CERT_RENEW_DAYS: envInteger(30, 1),
  /** Certificates ending within this many days are named in the job's warnings. */
  CERT_WARN_DAYS: envInteger(14, 1),
});
export type ProxySettings = z.output<typeof ProxySettings>;

export const proxySettings: (env: object) => ProxySettings = settingsReader(ProxySettings, "proxy");
