// A representative params line (or a few) for every entry of the params allow-lists: directives, options, http-request
// and http-response actions, health checks, ACL keywords, sample fetches, converters, predefined ACLs, log-format
// variables and server options. The integration suite runs them all through a real `haproxy -c`.
import { PREDEFINED_ACLS, allowedAclKeywords, predefinedUsage } from "../../src/proxy/haproxy-params/conditions";
import { BACKEND_DIRECTIVES, OPTIONS } from "../../src/proxy/haproxy-params/directives";
import {
  ACL_KEYWORD_TABLE,
  SAMPLE_FETCH_KEYWORDS,
  SAMPLE_USAGE_PLACES,
  type UsagePlace,
} from "../../src/proxy/haproxy-params/haproxy-keywords";
import { HTTP_REQUEST_ACTIONS, HTTP_RESPONSE_ACTIONS } from "../../src/proxy/haproxy-params/http-rules";
import { ALLOWED_CONVERTERS, ALLOWED_FETCHES } from "../../src/proxy/haproxy-params/sample-policy";
import { LOG_VARIABLES, sampleExpression } from "../../src/proxy/haproxy-params/samples";
import { SERVER_OPTIONS } from "../../src/proxy/haproxy-params/server-options";

/** One backend's params and the params of its one container link. */
export interface Form {
  params: string;
  server?: string;
}

/** An argument for each fetch that needs one. */
export const FETCH_ARGS: Record<string, string> = {
  var: "txn.x",
  str: "a",
  int: "1",
  bool: "1",
  ipv4: "10.0.0.1",
  ipv6: "::1",
  "req.hdr": "host",
  hdr_val: "content-length",
  hdr_ip: "x-forwarded-for",
  urlp_val: "id",
  "req.fhdr": "host",
  "req.hdr_cnt": "host",
  hdr: "host",
  hdr_cnt: "host",
  "req.cook": "sid",
  "req.cook_cnt": "sid",
  cook: "sid",
  cook_cnt: "sid",
  url_param: "id",
  urlp: "id",
  "res.hdr": "server",
  "res.fhdr": "server",
  "res.hdr_cnt": "server",
  shdr: "server",
  "res.cook": "sid",
  scook: "sid",
};
/** ACL values for each way of matching (flags included where HAProxy needs them). */
const VALUES: Record<string, string> = {
  str: "x",
  beg: "/x",
  end: ".js",
  sub: "x",
  dir: "x",
  dom: "x",
  reg: "^/x",
  len: "3",
  int: "1",
  ip: "10.0.0.0/8",
  meth: "GET",
  none: "-m str x",
  bool: "",
  found: "",
};
/** A sample expression ending with each converter, on an input of the type it takes. */
export const CONVERTER_EXPRESSIONS: Record<string, string> = {
  lower: "path,lower",
  upper: "path,upper",
  field: "path,field(2,/)",
  word: "path,word(1,/)",
  regsub: "path,regsub(^/x,/y,g)",
  bytes: "path,bytes(0,4)",
  length: "path,length",
  base64: "path,base64",
  b64dec: "path,base64,b64dec",
  hex: "path,hex",
  url_dec: "query,url_dec",
  url_enc: "path,url_enc(query)",
  json: "path,json(utf8s)",
  ipmask: "src,ipmask(24,64)",
  concat: "path,concat(<,txn.x,>)",
  strcmp: "path,strcmp(txn.x)",
  add: "int(1),add(2)",
  sub: "int(3),sub(txn.n)",
  mul: "int(2),mul(3)",
  div: "int(6),div(2)",
  mod: "int(7),mod(3)",
  and: "int(7),and(3)",
  or: "int(4),or(1)",
  xor: "int(5),xor(1)",
  neg: "int(1),neg",
  cpl: "int(1),cpl",
  bool: "int(1),bool",
  not: "int(0),not",
  odd: "int(1),odd",
  even: "int(2),even",
  sdbm: "path,sdbm(1)",
  djb2: "path,djb2",
  crc32: "path,crc32",
  wt6: "path,wt6",
  xxh32: "path,xxh32(1)",
  xxh64: "path,xxh64",
  sha1: "path,sha1",
  sha2: "path,sha2(256)",
  digest: "path,digest(sha256)",
  ltime: "date,ltime(%Y%m%d)",
  utime: "date,utime(%H:%M)",
  http_date: "date,http_date(3600)",
  ltrim: "path,ltrim(/)",
  rtrim: "path,rtrim(/)",
  cut_crlf: "path,cut_crlf",
  host_only: "req.hdr(host),host_only",
  port_only: "req.hdr(host),port_only",
};

const call = (name: string, arg?: string) => (arg === undefined ? name : `${name}(${arg})`);
const column = (place: UsagePlace) => SAMPLE_USAGE_PLACES.indexOf(place);
const inRequest = (usage: string) => usage[column("backend http-request header rule")] === "Y";
const inResponse = (usage: string) => usage[column("backend http-response header rule")] === "Y";
/** How an ACL on a sample of the expression's type matches without -m ("none" where HAProxy needs -m). */
function matchOf(expression: string): string {
  const { type } = sampleExpression(expression, "form");
  return (
    ({ bool: "bool", sint: "int", ipv4: "ip", ipv6: "ip", addr: "ip", str: "str" } as Record<string, string>)[type] ??
    "none"
  );
}

/** The forms, keyed by what they exercise ("directive:balance", "server:weight", "fetch:path"...). */
export function allowListForms(): Map<string, Form> {
  const forms = new Map<string, Form>();
  const add = (key: string, params: string, server?: string) => forms.set(key, { params, server });
  add("_maintenance", "_maintenance");
  const timeouts = [
    "server 30s",
    "connect 5s",
    "queue 10s",
    "tunnel 1h",
    "http-request 10s",
    "http-keep-alive 2s",
    "check 3s",
  ];
  add(
    "directive:timeout",
    [...timeouts, "server-fin 1s", "tarpit 5s"].map((timeout) => `timeout ${timeout}`).join("\n"),
  );
  for (const [name, rule] of Object.entries(OPTIONS)) {
    add(`option:${name}`, `option ${name}`);
    if (rule.negatable) add(`no option:${name}`, `no option ${name}`);
  }
  add("option:httpchk /uri", "option httpchk /health");
  add("option:httpchk method uri version", "option httpchk HEAD /health HTTP/1.1");
  add("option:forwardfor options", "option forwardfor except 10.0.0.0/8 header X-Real-IP if-none");
  add("option:redispatch interval", "option redispatch 2");
  add("directive:option", "option abortonclose");
  const algorithms = [
    "roundrobin",
    "static-rr",
    "leastconn",
    "first",
    "source",
    "random",
    "random(3)",
    "rdp-cookie",
    "rdp-cookie(mstshash)",
    "hdr(host)",
    "hdr(host) use_domain_only",
    "url_param userid",
    "url_param userid check_post 64",
    "uri",
    "uri whole len 10 depth 2 path-only",
  ];
  for (const algorithm of algorithms) {
    add(`balance:${algorithm}`, `balance ${algorithm}`);
  }
  add("directive:balance", "balance roundrobin");
  add("directive:hash-type", "hash-type consistent sdbm avalanche\nhash-balance-factor 150");
  add("hash-type:map-based", "hash-type map-based djb2");
  add("hash-type:wt6", "hash-type consistent wt6");
  add("hash-type:crc32", "hash-type consistent crc32");
  add("directive:hash-balance-factor", "hash-type consistent\nhash-balance-factor 0");
  add("directive:retries", "retries 3");
  add(
    "directive:retry-on",
    [
      "retry-on conn-failure empty-response junk-response response-timeout 0rtt-rejected 401 403 404 408 425 500 501 502 503 504",
      "retry-on all-retryable-errors",
      "retry-on none",
    ].join("\n"),
  );
  add(
    "directive:cookie",
    "cookie SRV insert indirect nocache postonly preserve httponly secure domain .example.org maxidle 30m maxlife 8h dynamic attr SameSite=Strict",
    "cookie s1",
  );
  add("cookie:rewrite", "cookie SRV rewrite");
  add("cookie:prefix", "cookie SRV prefix");
  add("directive:fullconn", "fullconn 100");
  for (const mode of ["never", "safe", "aggressive", "always"]) add(`http-reuse:${mode}`, `http-reuse ${mode}`);
  add("directive:http-reuse", "http-reuse safe");
  add(
    "directive:compression",
    "compression algo gzip deflate raw-deflate identity\ncompression type text/html text/plain application/json\ncompression offload",
  );
  for (const name of ["errorloc", "errorloc302", "errorloc303"]) {
    add(`directive:${name}`, `${name} 503 https://status.example.org/down\n${name} 404 /not-found`);
  }
  add("directive:default-server", "default-server inter 3s fall 3 rise 2 ssl verify none check");
  add("directive:acl", "acl api path_beg /api\nacl api src 10.0.0.0/8\nhttp-request deny if api");

  // http-request and http-response actions
  const request: Record<string, string[]> = {
    "set-header": ['http-request set-header X-Client "%[src] %ci:%cp" if METH_GET'],
    "add-header": ["http-request add-header X-A v"],
    "del-header": ["http-request del-header X-A"],
    "replace-header": ["http-request replace-header X-A ^a(.*) b\\1"],
    "replace-value": ["http-request replace-value X-A ^a(.*) b\\1"],
    "set-path": ["http-request set-path /x%[path]"],
    "set-pathq": ["http-request set-pathq /x"],
    "set-query": ["http-request set-query a=1&b=%[src]"],
    "set-uri": ["http-request set-uri /x"],
    "set-method": ["http-request set-method GET"],
    "replace-path": ["http-request replace-path ^/old/(.*) /new/\\1"],
    "replace-pathq": ["http-request replace-pathq ^/old/(.*) /new/\\1"],
    "replace-uri": ["http-request replace-uri ^/old/(.*) /new/\\1"],
    allow: ["http-request allow if LOCALHOST"],
    deny: [
      "http-request deny deny_status 429 unless { src 10.0.0.0/8 }",
      'http-request deny status 403 content-type text/plain string "no" hdr X-A v if METH_DELETE',
      'http-request deny status 429 content-type text/plain lf-string "slow down %[src]" if METH_POST',
      "http-request deny",
    ],
    return: [
      "http-request return if { path /a }",
      "http-request return status 204 if { path /b }",
      'http-request return status 200 content-type "text/plain; charset=utf-8" string "ok" if { path /ok }',
      'http-request return status 200 content-type text/plain lf-string "ok %[path]" hdr X-B "%[src]"',
    ],
    redirect: [
      "http-request redirect location /x code 301 if { path /y }",
      "http-request redirect prefix /x code 302 drop-query if METH_GET",
      "http-request redirect scheme https code 308 append-slash if METH_PUT",
      "http-request redirect location https://%[req.hdr(host)]%[pathq] code 307 set-cookie A=1 clear-cookie B if METH_POST",
      "http-request redirect location /z code 303",
    ],
  };
  // An action without a sample gets no form, so that the coverage check names it.
  for (const name of Object.keys(HTTP_REQUEST_ACTIONS))
    if (request[name]) add(`http-request:${name}`, request[name].join("\n"));
  const response: Record<string, string[]> = {
    "set-header": ["http-response set-header X-A %[status]"],
    "add-header": ["http-response add-header X-A v if { status 200 }"],
    "del-header": ["http-response del-header Server"],
    "replace-header": ["http-response replace-header X-A a b"],
    "replace-value": ["http-response replace-value X-A a b"],
    "set-status": ["http-response set-status 404", 'http-response set-status 503 reason "Go away" if { status 502 }'],
    allow: ["http-response allow"],
    deny: [
      "http-response deny deny_status 502 if { status 500 }",
      "http-response deny status 502 content-type text/plain string x if { status 501 }",
      "http-response deny",
    ],
    return: ["http-response return status 200 content-type text/plain string x"],
    redirect: ["http-response redirect location /x code 302 if { status 404 }"],
  };
  for (const name of Object.keys(HTTP_RESPONSE_ACTIONS))
    if (response[name]) add(`http-response:${name}`, response[name].join("\n"));
  add("directive:http-request", request["set-header"][0]);
  add("directive:http-response", response["set-header"][0]);

  // health checks
  add(
    "directive:http-check",
    [
      "option httpchk",
      "http-check disable-on-404",
      "http-check send-state",
      "http-check comment start",
      "http-check set-var(check.x) str(a)",
      "http-check unset-var(check.x)",
      "http-check connect default port 8080 linger send-proxy comment c1",
      "http-check send meth GET uri /health ver HTTP/1.1 hdr Host www.example.org hdr X-Check %[str(x)] body ok",
      "http-check expect comment ok status 200-399",
      "http-check connect proto h2",
      "http-check send meth HEAD uri /",
      "http-check expect ! status 500",
      "http-check expect rstatus ^2",
      "http-check connect",
      "http-check send uri /text",
      "http-check expect string ok",
      "http-check expect rstring ^ok",
    ].join("\n"),
  );
  add(
    "directive:tcp-check",
    [
      "option tcp-check",
      "tcp-check comment start",
      "tcp-check set-var(check.x) str(a)",
      "tcp-check unset-var(check.x)",
      "tcp-check connect port 6379 linger send-proxy comment redis",
      "tcp-check send PING comment ping",
      "tcp-check expect string +PONG",
      "tcp-check send-binary 50494e470d0a",
      "tcp-check expect binary 2b504f4e470d0a",
      "tcp-check send-binary 50494e470d0a",
      "tcp-check expect rstring ^\\+PONG comment pong",
      "tcp-check expect ! binary 2d",
      "tcp-check expect rbinary ^2b",
      "tcp-check connect default",
    ].join("\n"),
  );

  // ACLs: every allowed ACL keyword and every fetch as a criterion, every predefined ACL in a condition; each in the
  // rules of the direction its fetch is available in.
  for (const name of allowedAclKeywords()) {
    const { fetch, match } = ACL_KEYWORD_TABLE[name];
    const kind = inRequest(SAMPLE_FETCH_KEYWORDS[fetch].usage) ? "http-request" : "http-response";
    add(`acl:${name}`, `acl a ${call(name, FETCH_ARGS[fetch])} ${VALUES[match]}`.trim() + `\n${kind} deny if a`);
  }
  for (const name of ALLOWED_FETCHES) {
    const sample = call(name, FETCH_ARGS[name]);
    const kind = inRequest(SAMPLE_FETCH_KEYWORDS[name].usage) ? "http-request" : "http-response";
    const lines = [
      `${kind} set-header X-F "%[${sample}]"`,
      `acl a ${sample} ${VALUES[matchOf(sample)]}`.trim(),
      `${kind} deny if a`,
    ];
    add(`fetch:${name}`, lines.join("\n"));
  }
  for (const name of ALLOWED_CONVERTERS) {
    const expression = CONVERTER_EXPRESSIONS[name];
    const lines = [
      `http-request set-header X-C "%[${expression}]"`,
      `acl a ${expression} ${VALUES[matchOf(expression)]}`.trim(),
      "http-request deny if a",
    ];
    add(`converter:${name}`, lines.join("\n"));
  }
  for (const name of Object.keys(PREDEFINED_ACLS)) {
    const usage = predefinedUsage(name)!;
    const lines = [
      ...(inRequest(usage) ? [`http-request deny if ${name}`] : []),
      ...(inResponse(usage) ? [`http-response deny if !${name}`] : []),
    ];
    add(`predefined:${name}`, lines.join("\n"));
  }
  add(
    "log-variables",
    `http-request set-header X-L "${[...LOG_VARIABLES].map((name) => `%${name}`).join(" ")} %{+Q}r %%"`,
  );
  add(
    "condition:operators",
    "acl a path_beg /a\nacl b src 10.0.0.0/8\nhttp-request deny if a !b || ! { path /x } or METH_POST b",
  );

  // server options, on a container link and after default-server
  const server: Record<string, string> = {
    check: "check",
    "no-check": "no-check",
    backup: "backup",
    "no-backup": "no-backup",
    disabled: "disabled",
    enabled: "enabled",
    "send-proxy": "send-proxy",
    "send-proxy-v2": "send-proxy-v2",
    "check-send-proxy": "check check-send-proxy",
    "agent-check": "agent-check agent-port 9999",
    ssl: "ssl verify none",
    "check-ssl": "check check-ssl verify none",
    weight: "weight 256",
    inter: "check inter 2s",
    fastinter: "check fastinter 1s",
    downinter: "check downinter 5s",
    slowstart: "slowstart 30s",
    "agent-inter": "agent-check agent-port 9999 agent-inter 5s",
    "pool-purge-delay": "pool-purge-delay 5s",
    rise: "check rise 2",
    fall: "check fall 3",
    maxconn: "maxconn 100",
    maxqueue: "maxqueue 10",
    minconn: "minconn 2 maxconn 10",
    "error-limit": "check observe layer7 error-limit 5",
    "pool-max-conn": "pool-max-conn -1",
    "pool-low-conn": "pool-low-conn 2",
    "max-reuse": "max-reuse -1",
    port: "check port 9000",
    "agent-port": "agent-check agent-port 9999",
    "on-error": "check on-error mark-down",
    "on-marked-down": "check on-marked-down shutdown-sessions",
    "on-marked-up": "check on-marked-up shutdown-backup-sessions",
    observe: "check observe layer4",
    "resolve-prefer": "resolve-prefer ipv6",
    proto: "proto h2",
    verify: "ssl verify required ca-file @system-ca verifyhost api.example.org",
    "ssl-min-ver": "ssl verify none ssl-min-ver TLSv1.2",
    "ssl-max-ver": "ssl verify none ssl-max-ver TLSv1.3",
    "ca-file": "ssl verify required ca-file @system-ca",
    cookie: "cookie s1",
    "agent-send": 'agent-check agent-port 9999 agent-send "up ready"',
    verifyhost: "ssl verify required ca-file @system-ca verifyhost api.example.org",
    "check-sni": "check check-ssl verify none check-sni api.example.org",
    sni: "ssl verify none sni req.hdr(host)",
    alpn: "ssl verify none alpn h2,http/1.1",
    "check-alpn": "check check-ssl verify none check-alpn h2",
  };
  for (const name of Object.keys(SERVER_OPTIONS)) {
    add(`server:${name}`, `default-server ${server[name]}`, server[name]);
  }
  // Set in one place only: HAProxy 2.6 crashes on check-alpn on both a default-server and servers (the vetter refuses).
  add("server:check-alpn", `default-server ${server["check-alpn"]}`, "check");
  add("server:check-alpn on the server", "default-server check", server["check-alpn"]);
  return forms;
}

/** Every allow-list entry, keyed as allowListForms() keys its forms: each must have one. */
export const allowListNames = () => [
  ...Object.keys(BACKEND_DIRECTIVES).map((n) => `directive:${n}`),
  ...Object.keys(OPTIONS).map((n) => `option:${n}`),
  ...Object.entries(OPTIONS)
    .filter(([, r]) => r.negatable)
    .map(([n]) => `no option:${n}`),
  ...Object.keys(HTTP_REQUEST_ACTIONS).map((n) => `http-request:${n}`),
  ...Object.keys(HTTP_RESPONSE_ACTIONS).map((n) => `http-response:${n}`),
  ...Object.keys(SERVER_OPTIONS).map((n) => `server:${n}`),
  ...[...ALLOWED_FETCHES].map((n) => `fetch:${n}`),
  ...[...ALLOWED_CONVERTERS].map((n) => `converter:${n}`),
  ...allowedAclKeywords().map((n) => `acl:${n}`),
  ...Object.keys(PREDEFINED_ACLS).map((n) => `predefined:${n}`),
];
