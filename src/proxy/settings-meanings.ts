// The meanings of the proxy configuration API's settings (src/proxy/settings.ts), for docs/settings.md only: the Worker
// never imports this module (.dependency-cruiser.cjs), so the texts stay out of its bundle.
import { type SettingMeanings, oneLine } from "../shared/settings";
import { type ProxySettings, SUBREQUESTS_PER_ACME_ORDER, SUBREQUESTS_RESERVED_PER_CERTIFICATE_RUN } from "./settings";

export const proxySettingMeanings: SettingMeanings<keyof typeof ProxySettings.shape> = {
  INSTANCE_ROLE:
    "`master` accepts writes and runs the jobs; a `slave` serves reads, answers writes and jobs with 405, and " +
    "receives the configuration the master generates.",
  PROXY_ADMIN_USERNAME:
    "User name of the bootstrap administrator, who sees every project and may use /admin. Without both it and " +
    "PROXY_ADMIN_PASSWORD, no administrator exists.",
  PROXY_ADMIN_PASSWORD: "The bootstrap administrator's password.",
  PROXY_METRICS_TOKEN: oneLine`
    Bearer token (\`Authorization: Bearer <token>\`) with which a Prometheus server may read GET /admin/metrics, and
    nothing else; the administrator's Basic credentials read it too. Unset, only the administrator can.`,
  PROXY_AUTH_CACHE_TTL: oneLine`
    How long an isolate (one instance of the Worker, serving many requests) remembers that an API user's password
    passed the PBKDF2 check, which costs about 28 ms. A password change or a deleted user ends it at once. \`0\` checks
    every request.`,
  PROXY_AUTH_CACHE_MAX_ENTRIES:
    "Most credentials an isolate remembers (the oldest is dropped first); `0` turns the cache off.",
  PROXY_MASS_UPDATE_MAX_OPERATIONS: oneLine`
    Most operations one POST /domains/massupdate may carry; a larger request answers 400. The request is one D1 batch
    whose rows travel as one JSON parameter, and D1 caps a value at 2 MB.`,
  PROXY_ADDRESS_EXCEPTIONS: oneLine`
    Networks, separated by commas or white space, whose addresses containers and hosts may use although they would be
    refused (loopback, link-local, cloud metadata and the like): for a test installation whose containers listen on
    this machine, e.g. \`::ffff:127.0.0.0/104\`. Empty makes no exception.`,
  PROXY_MAX_BODY_BYTES:
    "Largest request body, in bytes, any route of this API reads; a larger one answers 413 before it is parsed.",
  PROXY_AUDIT_RETENTION_DAYS: oneLine`
      Days an entry of the audit log (GET /admin/audit) is kept: the daily \`audit-prune\` job removes older ones, at
      most 50,000 per run.`,
  PROXY_MAX_BACKENDS_PER_PROJECT:
    "Most backends one project may hold. Every write is checked in its own transaction, so concurrent ones cannot " +
    "pass it together; a project already past a lowered quota may still shrink.",
  PROXY_MAX_CONTAINERS_PER_PROJECT: "Most containers one project may hold.",
  PROXY_MAX_DOMAINS_PER_PROJECT:
    "Most domains one project may hold (created through a backend or the mass update, or moved in).",
  PROXY_MAX_PARAMS_BYTES_PER_PROJECT: oneLine`
    Most bytes (UTF-8) of params one project may hold: its backends' params and the server params of their container
    links together. A write that does not add bytes always passes.`,
  PROXY_MAX_INSTALLATION_BACKENDS: oneLine`
    Most backends the whole installation may hold. With the four bounds below it keeps one HAProxy generation, which
    holds every row, certificate and generated file at once, within the Worker's 128 MiB: the defaults all reached
    together need 55 MiB (npm run bench:proxy-generation-memory; docs/benchmarks.md).`,
  PROXY_MAX_INSTALLATION_SERVERS:
    "Most container links (servers of the generated backends) the whole installation may hold.",
  PROXY_MAX_INSTALLATION_DOMAINS: "Most domains the whole installation may hold.",
  PROXY_MAX_INSTALLATION_PUBLIC_CA_DOMAINS: oneLine`
    Most domains of the whole installation that ask for a public CA certificate (enableSSL without a provided one):
    each brings its own certificate, about 10 KB of the generation's memory, the largest share by far.`,
  PROXY_MAX_INSTALLATION_PARAMS_BYTES:
    "Most bytes of params (backend and server params) the whole installation may hold.",
  HAPROXY_AGENT_URL: oneLine`
    The agent (haproxy-agent/, the program that installs a configuration on a load balancer) of the master load
    balancer. Unset, each generated configuration is stored with a warning that no load balancer was updated.`,
  HAPROXY_AGENT_TOKEN: oneLine`
    Bearer token every agent (master and slaves) expects; with HAPROXY_AGENT_TOKENS_PER_AGENT, the secret each
    agent's own token is derived from (then configured on no load balancer).`,
  HAPROXY_AGENT_TOKENS_PER_AGENT: oneLine`
    When true, each agent (HAPROXY_AGENT_URL and each of SLAVE_AGENT_URLS) is sent its own token, HMAC-SHA256 of its
    URL keyed with HAPROXY_AGENT_TOKEN (print it with \`node haproxy-agent/derive-token.mjs <agent-url>\` and give it
    to that agent as its HAPROXY_AGENT_TOKEN), so that a compromised load balancer's token opens no other. False
    (the default): every agent expects HAPROXY_AGENT_TOKEN itself.`,
  SLAVE_AGENT_URLS:
    "Agents of the slave load balancers, separated by commas or white space; each gets the version the master " +
    "took, through the job queue.",
  HAPROXY_AGENT_TIMEOUT: oneLine`
    How long a push to an agent (upload, \`haproxy -c\`, reload) may take. Keep it above twice the agent's
    \`--timeout\` (25 s by default, the limit of its check and of its reload each) plus the upload: the agent starts
    no reload that could not end within it. A push that gets no answer in time is not taken for a refusal: the agent
    is asked what became of it (see HAPROXY_AGENT_QUERY_TIMEOUT). At least 1s.`,
  HAPROXY_AGENT_QUERY_TIMEOUT: oneLine`
    How long the control plane waits for an agent's short answers: what became of a push whose answer was lost (the
    agent then drops it unless its reload has started; no answer records the version as \`unknown\`, settled by GET
    /admin/haproxy/status), and each agent's status on that page. At least 1s.`,
  HAPROXY_HTTP_PORT: "Port of the generated frontend `http-in`.",
  HAPROXY_HTTPS_PORT: "Port of the generated frontend `https-in`; not HAPROXY_HTTP_PORT's.",
  HAPROXY_BIND_ADDRESS: "IPv4 or IPv6 address the frontends bind; `::` listens on IPv6 and IPv4.",
  HAPROXY_HTTPS_REDIRECT_CODE: "HTTP status of the redirect from http to https, for domains with a certificate.",
  HAPROXY_ACME_BACKEND_URL: oneLine`
    Origin of this control plane as the load balancers reach it: HAProxy forwards the ACME HTTP-01 challenge requests
    (/.well-known/acme-challenge/, by which the CA checks that we control a domain) there. Unset, that path has no
    server, and the generation warns.`,
  HAPROXY_PARAMS_EXTRA_DIRECTIVES: oneLine`
    HAProxy directives, separated by commas or white space, that backend params (directives tenants attach to their
    backends) may use besides the built-in allow-list (timeout, option, balance, http-request...). Their arguments are still vetted: no file, path or
    file-like name (no \`/\`, no \`x.pem\`), no network address (no dotted numbers such as \`1.2.3.4\`, no
    \`host:port\` or IPv6, no \`ipv4()\`/\`ipv6()\`, no \`set-dst\`), no environment expansion (\`\${NAME}\`,
    \`$NAME\`), only allow-listed sample fetches and converters. Section keywords, \`no\`, \`default\`, \`server\`
    and \`server-template\` are refused: no argument check makes them safe; \`log\`, \`dispatch\` and \`source\`,
    whose argument is an address (a host name too), are refused in params whatever this setting lists.`,
  HAPROXY_VERSIONS_KEPT:
    "Generated HAProxy configurations kept in D1; the active one, and any whose outcome is still pending or " +
    "unknown, are always kept.",
  SSH_PROXY_VERSIONS_KEPT: "Generated SSH proxy (sshpiperd) configurations kept in D1.",
  SSH_PROXY_UPSTREAM_KEY_FILE: "Private key file sshpiperd logs in to the containers with (the YAML's `private_key`).",
  SSH_PROXY_KNOWN_HOSTS_FILE:
    "known_hosts file sshpiperd checks the containers' host keys against (the YAML's `known_hosts`).",
  PROXY_GENERATION_DEBOUNCE: oneLine`
    A tenant's GET /admin/gensynchaprx within this long of the start of the last run waits for the window to end and
    joins the first run that starts after it called (its own or another caller's), so that tenants together cause at
    most one generation, and one load balancer reload, per window; every change made before the call is in the run it
    joins. The administrator's calls run at once. \`0\` turns debouncing off: a tenant's call then runs at once, or
    answers 423 while another run holds the lock. A call waits inside its request, hence the bound.`,
  JOB_LOCK_TIMEOUT:
    "A job lock taken by GET /admin/writesshprx or /maintenance/start for the run it queues waits this long for that run to take it over; a running job's lock lives by its heartbeats instead, and is free within JOB_HEARTBEAT_TIMEOUT of its worker's death. At least 1m: the queue delivers in batches, and a shorter lock could expire before its run takes it.",
  ACME_DIRECTORY_URL: oneLine`
    ACME directory (the entry point of the certificate-ordering protocol) of the public CA; the default is Let's
    Encrypt. .dev.vars.example uses Let's Encrypt's staging directory.`,
  ACME_EMAIL: "Contact e-mail address of the ACME account.",
  ACME_RENEWAL_INFO_PER_RUN: oneLine`
      Most certificates whose renewal information (ACME ARI) the certificate job asks the CA for in one run, so that a
      run's requests stay within a Worker's subrequest limit: never-asked ones first, then those whose Retry-After
      passed longest ago; the others keep the window the CA gave before, or the one-third rule, until a later run.
      \`0\`: never ask (every certificate follows the one-third rule).`,
  ACME_ORDERS_PER_RUN: oneLine`
      Most certificates the certificate job orders in one run (each order costs about ${SUBREQUESTS_PER_ACME_ORDER}
      subrequests: the CA's, D1's and the lock's), so that the run stays within a Worker's 1,000 subrequests; the
      domains still due wait for a further run, queued as soon as this one ends. A run orders fewer when its renewal
      questions (ACME_RENEWAL_INFO_PER_RUN) and orders would together leave it under
      ${SUBREQUESTS_RESERVED_PER_CERTIFICATE_RUN} subrequests for its own reads and writes.`,
  ACME_REQUEST_TIMEOUT: oneLine`
    How long one request to the CA, its answer included, may take. A CA that gives no answer in time (or cannot be
    reached) fails that request; the run asks it nothing more, and orders nothing more, until the next run. At
    least 1s.`,
  CERT_WARN_DAYS: oneLine`
      Certificates in use that end within this many days are named in the certificate job's warnings; a certificate
      from the public CA only once a sixth of its lifetime remains, if that comes later (its renewal is due at a
      third, so it names one whose renewal keeps failing).`,
};
