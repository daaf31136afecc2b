// Settings of the proxy configuration API, read from the Worker's vars and secrets.
import { z } from "../shared/zod";
import { parseIpv6Network } from "./installation/addresses";
import {
  envDurationMs,
  envEnum,
  envInteger,
  envNumber,
  envOptionalString,
  envSecret,
  envString,
  oneLine,
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
    INSTANCE_ROLE: envEnum(["master", "slave"], "master").describe(
      "`master` accepts writes and runs the jobs; a `slave` serves reads, answers writes and jobs with 405, and " +
        "receives the configuration the master generates.",
    ),
    PROXY_ADMIN_USERNAME: envSecret().describe(
      "User name of the bootstrap administrator, who sees every project and may use /admin. Without both it and " +
        "PROXY_ADMIN_PASSWORD, no administrator exists.",
    ),
    PROXY_ADMIN_PASSWORD: envSecret().describe("The bootstrap administrator's password."),
    PROXY_METRICS_TOKEN: envSecret().describe(oneLine`
    Bearer token (\`Authorization: Bearer <token>\`) with which a Prometheus server may read GET /admin/metrics, and
    nothing else; the administrator's Basic credentials read it too. Unset, only the administrator can.`),
    PROXY_AUTH_CACHE_TTL: envDurationMs("60s").describe(oneLine`
    How long an isolate (one instance of the Worker, serving many requests) remembers that an API user's password
    passed the PBKDF2 check, which costs about 28 ms. A password change or a deleted user ends it at once. \`0\` checks
    every request.`),
    PROXY_AUTH_CACHE_MAX_ENTRIES: envInteger(1000, 0).describe(
      "Most credentials an isolate remembers (the oldest is dropped first); `0` turns the cache off.",
    ),
    PROXY_MASS_UPDATE_MAX_OPERATIONS: envInteger(5000, 1).describe(oneLine`
    Most operations one POST /domains/massupdate may carry; a larger request answers 400. The request is one D1 batch
    whose rows travel as one JSON parameter, and D1 caps a value at 2 MB.`),
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
      .meta({
        kind: "list",
        items: "IPv6 networks (CIDR)",
        default: "",
        description: oneLine`
        Networks, separated by commas or white space, whose addresses containers and hosts may use although they
        would be refused (loopback, link-local, cloud metadata and the like): for a test installation whose containers
        listen on this machine, e.g. \`::ffff:127.0.0.0/104\`. Empty makes no exception.`,
      }),
    PROXY_MAX_BODY_BYTES: envInteger(1024 * 1024, 1).describe(
      "Largest request body, in bytes, any route of this API reads; a larger one answers 413 before it is parsed.",
    ),
    PROXY_AUDIT_RETENTION_DAYS: envNumber(90, (days) => days.int().min(1).max(3650)).meta({ kind: "integer" })
      .describe(oneLine`
      Days an entry of the audit log (GET /admin/audit) is kept: the daily \`audit-prune\` job removes older ones, at
      most 50,000 per run.`),

    // ---- quotas (issue 27): a write past one answers 403 naming it, and stores nothing ----

    PROXY_MAX_BACKENDS_PER_PROJECT: envInteger(400, 0).describe(
      "Most backends one project may hold. Every write is checked in its own transaction, so concurrent ones cannot " +
        "pass it together; a project already past a lowered quota may still shrink.",
    ),
    PROXY_MAX_CONTAINERS_PER_PROJECT: envInteger(800, 0).describe("Most containers one project may hold."),
    PROXY_MAX_DOMAINS_PER_PROJECT: envInteger(2500, 0).describe(
      "Most domains one project may hold (created through a backend or the mass update, or moved in).",
    ),
    PROXY_MAX_PARAMS_BYTES_PER_PROJECT: envInteger(256 * 1024, 0).describe(oneLine`
    Most bytes (UTF-8) of params one project may hold: its backends' params and the server params of their container
    links together. A write that does not add bytes always passes.`),
    PROXY_MAX_INSTALLATION_BACKENDS: envInteger(4000, 0).describe(oneLine`
    Most backends the whole installation may hold. With the four bounds below it keeps one HAProxy generation, which
    holds every row, certificate and generated file at once, within the Worker's 128 MiB: the defaults all reached
    together need 55 MiB (npm run bench:proxy-generation-memory; docs/benchmarks.md).`),
    PROXY_MAX_INSTALLATION_SERVERS: envInteger(8000, 0).describe(
      "Most container links (servers of the generated backends) the whole installation may hold.",
    ),
    PROXY_MAX_INSTALLATION_DOMAINS: envInteger(20_000, 0).describe("Most domains the whole installation may hold."),
    PROXY_MAX_INSTALLATION_PUBLIC_CA_DOMAINS: envInteger(3000, 0).describe(oneLine`
    Most domains of the whole installation that ask for a public CA certificate (enableSSL without a provided one):
    each brings its own certificate, about 10 KB of the generation's memory, the largest share by far.`),
    PROXY_MAX_INSTALLATION_PARAMS_BYTES: envInteger(2 * 1024 * 1024, 0).describe(
      "Most bytes of params (backend and server params) the whole installation may hold.",
    ),

    // ---- configuration jobs ----

    HAPROXY_AGENT_URL: optionalUrl().describe(oneLine`
    The agent (haproxy-agent/, the program that installs a configuration on a load balancer) of the master load
    balancer. Unset, each generated configuration is stored with a warning that no load balancer was updated.`),
    HAPROXY_AGENT_TOKEN: envSecret().describe("Bearer token every agent (master and slaves) expects."),
    SLAVE_AGENT_URLS: urlList().describe(
      "Agents of the slave load balancers, separated by commas or white space; each gets the version the master " +
        "took, through the job queue.",
    ),
    HAPROXY_AGENT_TIMEOUT: envDurationMs("60s").pipe(atLeastOneSecond()).describe(oneLine`
    How long a push to an agent (upload, \`haproxy -c\`, reload) may take. Keep it above twice the agent's
    \`--timeout\` (25 s by default, the limit of its check and of its reload each) plus the upload: the agent starts
    no reload that could not end within it. A push that gets no answer in time is not taken for a refusal: the agent
    is asked what became of it (see HAPROXY_AGENT_QUERY_TIMEOUT). At least 1s.`),
    HAPROXY_AGENT_QUERY_TIMEOUT: envDurationMs("10s").pipe(atLeastOneSecond()).describe(oneLine`
    How long the control plane waits for an agent's short answers: what became of a push whose answer was lost (the
    agent then drops it unless its reload has started; no answer records the version as \`unknown\`, settled by GET
    /admin/haproxy/status), and each agent's status on that page. At least 1s.`),
    HAPROXY_HTTP_PORT: port(80).describe("Port of the generated frontend `http-in`."),
    HAPROXY_HTTPS_PORT: port(443).describe("Port of the generated frontend `https-in`; not HAPROXY_HTTP_PORT's."),
    HAPROXY_BIND_ADDRESS: envString("::")
      .pipe(z.union([z.ipv4(), z.ipv6()], { message: "must be an IPv4 or IPv6 address" }))
      .describe("IPv4 or IPv6 address the frontends bind; `::` listens on IPv6 and IPv4."),
    HAPROXY_HTTPS_REDIRECT_CODE: envEnum(["301", "302", "307", "308"], "301")
      .transform(Number)
      .describe("HTTP status of the redirect from http to https, for domains with a certificate."),
    HAPROXY_ACME_BACKEND_URL: optionalUrl().describe(oneLine`
    Origin of this control plane as the load balancers reach it: HAProxy forwards the ACME HTTP-01 challenge requests
    (/.well-known/acme-challenge/, by which the CA checks that we control a domain) there. Unset, that path has no
    server, and the generation warns.`),
    HAPROXY_PARAMS_EXTRA_DIRECTIVES: directiveList().describe(oneLine`
    HAProxy directives, separated by commas or white space, that backend params (directives tenants attach to their
    backends) may use besides the built-in allow-list (timeout, option, balance, http-request...). Their arguments are still vetted: no file, path or
    file-like name (no \`/\`, no \`x.pem\`), no network address (no dotted numbers such as \`1.2.3.4\`, no
    \`host:port\` or IPv6, no \`ipv4()\`/\`ipv6()\`, no \`set-dst\`), no environment expansion (\`\${NAME}\`,
    \`$NAME\`), only allow-listed sample fetches and converters. Section keywords, \`no\`, \`default\`, \`server\`
    and \`server-template\` are refused: no argument check makes them safe; \`log\`, \`dispatch\` and \`source\`,
    whose argument is an address (a host name too), are refused in params whatever this setting lists.`),
    HAPROXY_VERSIONS_KEPT: envInteger(20, 1).describe(
      "Generated HAProxy configurations kept in D1; the active one, and any whose outcome is still pending or " +
        "unknown, are always kept.",
    ),
    SSH_PROXY_VERSIONS_KEPT: envInteger(20, 1).describe("Generated SSH proxy (sshpiperd) configurations kept in D1."),
    SSH_PROXY_UPSTREAM_KEY_FILE: envString("/etc/sshpiperd/upstream_key").describe(
      "Private key file sshpiperd logs in to the containers with (the YAML's `private_key`).",
    ),
    SSH_PROXY_KNOWN_HOSTS_FILE: envString("/etc/sshpiperd/known_hosts").describe(
      "known_hosts file sshpiperd checks the containers' host keys against (the YAML's `known_hosts`).",
    ),
    PROXY_GENERATION_DEBOUNCE: envDurationMs("5s").describe(oneLine`
    A tenant's GET /admin/gensynchaprx within this long of the start of the last run waits for the window to end and
    joins the first run that starts after it called (its own or another caller's), so that tenants together cause at
    most one generation, and one load balancer reload, per window; every change made before the call is in the run it
    joins. The administrator's calls run at once. \`0\` turns debouncing off: a tenant's call then runs at once, or
    answers 423 while another run holds the lock.`),
    JOB_LOCK_TIMEOUT: envDurationMs("15m")
      .pipe(z.number().min(60_000, "must be at least 1m"))
      .describe(
        "A job lock taken by GET /admin/writesshprx or /maintenance/start for the run it queues waits this long for that run to take it over; a running job's lock lives by its heartbeats instead, and is free within JOB_HEARTBEAT_TIMEOUT of its worker's death. At least 1m: the queue delivers in batches, and a shorter lock could expire before its run takes it.",
      ),

    // ---- certificates ----

    ACME_DIRECTORY_URL: envString("https://acme-v02.api.letsencrypt.org/directory")
      .pipe(httpUrl())
      .meta({
        kind: "url",
        description: oneLine`
        ACME directory (the entry point of the certificate-ordering protocol) of the public CA; the default is Let's
        Encrypt. .dev.vars.example uses Let's Encrypt's staging directory.`,
      }),
    ACME_EMAIL: z
      .preprocess(unsetIfEmpty, z.email({ message: "must be an e-mail address" }).optional())
      .meta({ kind: "string", description: "Contact e-mail address of the ACME account." }),
    ACME_RENEWAL_INFO_PER_RUN: envNumber(200, (s) => s.int().min(0).max(900))
      .meta({ kind: "integer" })
      .describe(
        oneLine`
      Most certificates whose renewal information (ACME ARI) the certificate job asks the CA for in one run, so that a
      run's requests stay within a Worker's subrequest limit: never-asked ones first, then those whose Retry-After
      passed longest ago; the others keep the window the CA gave before, or the one-third rule, until a later run.
      \`0\`: never ask (every certificate follows the one-third rule).`,
      ),
    ACME_ORDERS_PER_RUN: envNumber(40, (s) => s.int().min(1).max(60))
      .meta({ kind: "integer" })
      .describe(
        oneLine`
      Most certificates the certificate job orders in one run (each order costs about ${SUBREQUESTS_PER_ACME_ORDER}
      subrequests: the CA's, D1's and the lock's), so that the run stays within a Worker's 1,000 subrequests; the
      domains still due wait for a further run, queued as soon as this one ends. A run orders fewer when its renewal
      questions (ACME_RENEWAL_INFO_PER_RUN) and orders would together leave it under
      ${SUBREQUESTS_RESERVED_PER_CERTIFICATE_RUN} subrequests for its own reads and writes.`,
      ),
    ACME_REQUEST_TIMEOUT: envDurationMs("30s").pipe(atLeastOneSecond()).describe(oneLine`
    How long one request to the CA, its answer included, may take. A CA that gives no answer in time (or cannot be
    reached) fails that request; the run asks it nothing more, and orders nothing more, until the next run. At
    least 1s.`),
    CERT_WARN_DAYS: envInteger(14, 1).describe(
      oneLine`
      Certificates in use that end within this many days are named in the certificate job's warnings; a certificate
      from the public CA only once a sixth of its lifetime remains, if that comes later (its renewal is due at a
      third, so it names one whose renewal keeps failing).`,
    ),
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
