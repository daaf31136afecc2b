// fast-check arbitraries of params built from the allowed grammar: every allow-listed directive, action, health check,
// ACL keyword, sample fetch, converter and server option, with arguments that are mostly right and sometimes wrong
// (types, counts, values, the direction of a sample), and the edges of the line reader: word counts around HAProxy's
// 64, comments, quotes and escapes. The differential test writes whatever the vetter accepts into haproxy.cfg.
import fc from "fast-check";
import { PREDEFINED_ACLS, allowedAclKeywords } from "../../src/proxy/haproxy-params/conditions";
import { OPTIONS } from "../../src/proxy/haproxy-params/directives";
import { CONVERTER_KEYWORDS, SAMPLE_FETCH_KEYWORDS } from "../../src/proxy/haproxy-params/haproxy-keywords";
import { HTTP_REQUEST_ACTIONS, HTTP_RESPONSE_ACTIONS } from "../../src/proxy/haproxy-params/http-rules";
import { ALLOWED_CONVERTERS, ALLOWED_FETCHES } from "../../src/proxy/haproxy-params/sample-policy";
import { LOG_VARIABLES } from "../../src/proxy/haproxy-params/samples";
import { SERVER_OPTIONS } from "../../src/proxy/haproxy-params/server-options";
import { CONVERTER_EXPRESSIONS, FETCH_ARGS } from "./haproxy-param-forms";
import { aclLineOfWords, serverParamsOfWords } from "./haproxy-param-words";

const pick = <T>(...values: T[]) => fc.constantFrom(...values);
const words = (...parts: fc.Arbitrary<string>[]) => fc.tuple(...parts).map((all) => all.filter(Boolean).join(" "));
const maybe = (arbitrary: fc.Arbitrary<string>, freq = 2) => fc.option(arbitrary, { freq, nil: "" });

/** Argument values by HAProxy's argument type: mostly valid, some of another type or out of range. */
const VALUES: Record<string, fc.Arbitrary<string>> = {
  integer: pick("0", "1", "2", "4", "-1", "-10", "-11", "24", "256", "3600", "+2", "x", "1.5", "99999999999999999999"),
  string: pick(
    ...["a", "host", "x-forwarded-for", "id", "sid", "txn.x", "req.n", "check.c", "proc.p", "sess.s", "x", "/", ":"],
    ...["utf8s", "ascii", "query", "sha256", "md5", "whirlpool", "s", "ms", "us", "h", "g", "i", "gi", "q", "%Y"],
    ...["%H:%M", "%n", "true", "FALSE", "0", "yes", "", "a b", "é"],
  ),
  regex: pick("^/a", "a.*", "\\.", "(", "[a-z]+", "x|y"),
  "IPv4 address": pick("10.0.0.1", "127.0.0.1", "256.0.0.1", "010.0.0.1", "::1", "x"),
  "IPv6 address": pick("::1", "2001:db8::1", "::ffff:10.0.0.1", "fe80::1%eth0", "10.0.0.1", "x"),
  "IPv4 mask": pick("24", "32", "0", "33", "255.255.255.0", "x"),
  "IPv6 mask": pick("64", "128", "0", "129", "x"),
};
const anyValue = fc.oneof(...Object.values(VALUES));

/** An argument as written inside the parentheses: plain, quoted, or with a backslash. */
const argument = (type: string) =>
  fc
    .tuple(fc.oneof({ weight: 6, arbitrary: VALUES[type] ?? anyValue }, { weight: 1, arbitrary: anyValue }), fc.nat(9))
    .map(([value, style]) => (style === 0 ? `'${value}'` : style === 1 ? `${value}\\,x` : value));

/** Arguments HAProxy takes for each keyword (those of the allow-list forms), to reach the accepting paths often. */
const GOOD_ARGS: Record<string, string> = {
  ...FETCH_ARGS,
  ...Object.fromEntries(
    Object.entries(CONVERTER_EXPRESSIONS).flatMap(([name, expression]) => {
      const args = new RegExp(`(?:^|,)${name}\\((.*)\\)$`).exec(expression)?.[1];
      return args === undefined ? [] : [[name, args]];
    }),
  ),
};

/** A call: most often with arguments HAProxy takes, else typed values of the right count, one too few or too many. */
function call(name: string, args: readonly string[], required: number): fc.Arbitrary<string> {
  const good = GOOD_ARGS[name];
  return fc.oneof(
    { weight: 2, arbitrary: fc.constant(good === undefined ? name : `${name}(${good})`) },
    { weight: 3, arbitrary: typedCall(name, args, required) },
  );
}

function typedCall(name: string, args: readonly string[], required: number): fc.Arbitrary<string> {
  return fc.nat(9).chain((n) => {
    if (n === 8) return fc.constant(`${name}()`);
    const count = n < 6 ? required + (n % (args.length - required + 1)) : n === 6 ? required - 1 : args.length + 1;
    if (count <= 0) return fc.constant(name);
    const types = Array.from({ length: count }, (_, i) => args[i] ?? "string");
    return fc.tuple(...types.map(argument)).map((values) => `${name}(${values.join(",")})`);
  });
}

const fetchNames = [...ALLOWED_FETCHES];
const converterNames = [...ALLOWED_CONVERTERS];
/** A sample fetch call: allowed ones, plus a few HAProxy has that no tenant may use. */
const fetchCall = fc
  .oneof({ weight: 20, arbitrary: pick(...fetchNames) }, { weight: 1, arbitrary: pick("env", "req.payload", "nbsrv") })
  .chain((name) => {
    const keyword = SAMPLE_FETCH_KEYWORDS[name];
    return call(name, keyword.args, keyword.required);
  });
const converterCall = pick(...converterNames).chain((name) => {
  const keyword = CONVERTER_KEYWORDS[name];
  return call(name, keyword.args, keyword.required);
});
export const sample = fc
  .tuple(fetchCall, fc.array(converterCall, { maxLength: 2 }))
  .map(([fetch, converters]) => [fetch, ...converters].join(","));

/** A log-format string: text, %[sample] (any direction), log variables, %%, %{+Q}. */
const logFormat = fc
  .array(
    fc.oneof(
      { weight: 3, arbitrary: sample.map((s) => `%[${s}]`) },
      { weight: 1, arbitrary: pick(...[...LOG_VARIABLES].map((name) => `%${name}`), "%{+Q}r", "%%", "%z", "%[") },
      { weight: 2, arbitrary: pick("a", "/x", "-", "v1", "a\\ b", "a\\r\\nb", '"q"', "\\x41") },
    ),
    { minLength: 1, maxLength: 3 },
  )
  .map((parts) => parts.join(""));

const header = pick("X-A", "x-b", "Host", "content-type", "bad header");
const aclTerm = pick("a", "b", "!a", "!b", ...Object.keys(PREDEFINED_ACLS), "nosuch");
const condition = maybe(
  fc.oneof(
    words(pick("if", "unless"), aclTerm, maybe(words(pick("||", "or", ""), aclTerm))),
    words(
      pick("if", "unless"),
      sample.map((s) => `{ ${s} -m found }`),
    ),
    words(pick("if"), pick("{ path_beg /a }", "{ status 500 }", "{ src 10.0.0.0/8 }", "{ ssl_fc }")),
  ),
);

const reply = (legacy: boolean) =>
  words(
    maybe(
      pick("status 200", "status 403", "status 204", "status 503", "status 99", ...(legacy ? ["deny_status 429"] : [])),
    ),
    maybe(
      fc.oneof(
        words(pick("content-type text/plain"), pick("string ok", 'string "a b"')),
        words(
          pick("content-type text/html"),
          logFormat.map((f) => `lf-string ${f}`),
        ),
      ),
    ),
    maybe(words(pick("hdr"), header, logFormat)),
  );

const ACTION_ARGS: Record<string, fc.Arbitrary<string>> = {
  "set-header": words(header, logFormat),
  "add-header": words(header, logFormat),
  "del-header": header,
  "replace-header": words(header, VALUES.regex, logFormat),
  "replace-value": words(header, VALUES.regex, logFormat),
  "set-path": logFormat,
  "set-pathq": logFormat,
  "set-query": logFormat,
  "set-uri": logFormat,
  "set-method": logFormat,
  "replace-path": words(VALUES.regex, logFormat),
  "replace-pathq": words(VALUES.regex, logFormat),
  "replace-uri": words(VALUES.regex, logFormat),
  allow: fc.constant(""),
  deny: reply(true),
  return: reply(false),
  redirect: words(pick("location", "prefix", "scheme"), logFormat, maybe(pick("code 301", "code 302", "code 308"))),
  "set-status": words(pick("200", "404", "503"), maybe(pick('reason "Go away"', "reason Down"))),
};
const httpRule = (kind: "http-request" | "http-response", actions: object) =>
  pick(...Object.keys(actions)).chain((action) =>
    words(fc.constant(`${kind} ${action}`), ACTION_ARGS[action] ?? fc.constant(""), condition),
  );

const acl = fc.oneof(
  words(
    pick("acl a", "acl b"),
    sample,
    maybe(pick("-i", "-m found", "-m str", "-m int", "-m ip", "-m beg", "--"), 1),
    pick("x", "1", "10.0.0.0/8", "/a", ""),
  ),
  words(pick("acl a", "acl b"), pick(...allowedAclKeywords()), pick("x", "1", "gt 1", "10.0.0.0/8", "^/a", "")),
  fc.integer({ min: 60, max: 66 }).map(aclLineOfWords),
);

const httpCheck = fc.oneof(
  words(
    pick("http-check send"),
    maybe(pick("meth GET", "meth HEAD")),
    maybe(pick("uri /health", "uri /")),
    maybe(words(pick("hdr"), header, logFormat)),
  ),
  words(pick("http-check expect"), pick("status 200", "status 200-399", "rstatus ^2", "string ok", "! status 500")),
  sample.map((s) => `http-check set-var(check.x) ${s}`),
  pick("http-check connect", "http-check connect port 8080", "http-check disable-on-404", "http-check comment c"),
);
const tcpCheck = fc.oneof(
  pick(
    "tcp-check connect",
    "tcp-check send PING",
    "tcp-check send-binary 50494e470d0a",
    "tcp-check expect string +PONG",
  ),
  pick("tcp-check expect binary 2b0d0a", "tcp-check expect rstring ^\\+OK", 'tcp-check send "PING\\r\\n"'),
  sample.map((s) => `tcp-check set-var(check.x) ${s}`),
);

/** Server options with values, some repeated or wrong; sni with any sample expression. */
const serverOption = pick(...Object.keys(SERVER_OPTIONS)).chain((name) =>
  words(
    fc.constant(name),
    name === "sni"
      ? sample
      : pick(
          ...[
            "",
            "2s",
            "1",
            "100",
            "none",
            "required",
            "h2",
            "req.hdr(host)",
            "ready",
            "@system-ca",
            "api.example.org",
          ],
          ...["shutdown-sessions", "layer7", "ipv6", "TLSv1.2", "mark-down", "s1", '"a b"', '"a\\nb"'],
          ...["TLSv1.0", "TLSv1.3"],
        ),
  ),
);
export const serverParams = fc
  .oneof(
    {
      weight: 4,
      arbitrary: fc.array(serverOption, { minLength: 1, maxLength: 6 }).map((options) => options.join(" ")),
    },
    {
      weight: 2,
      arbitrary: pick(
        "check",
        "check inter 2s rise 2",
        "ssl verify none sni req.hdr(host)",
        "agent-check agent-port 9999 agent-send ready",
        "backup weight 10",
      ),
    },
    { weight: 1, arbitrary: fc.integer({ min: 58, max: 64 }).map(serverParamsOfWords) },
  )
  .chain((text) => decorate(text));

/** Cookie and retry-on lines of any options together: HAProxy refuses some combinations. */
const optionsTogether = fc.oneof(
  fc
    .subarray(["rewrite", "insert", "prefix", "indirect", "nocache", "postonly", "preserve", "httponly", "secure"], {
      minLength: 1,
    })
    .chain((options) => fc.shuffledSubarray(options, { minLength: options.length }))
    .map((options) => `cookie SRV ${options.join(" ")}`),
  fc
    .shuffledSubarray(["none", "conn-failure", "all-retryable-errors", "503", "empty-response"], { minLength: 1 })
    .map((events) => `retry-on ${events.join(" ")}`),
);

/** A backend line of any allowed directive. */
const directive = fc.oneof(
  { weight: 4, arbitrary: httpRule("http-request", HTTP_REQUEST_ACTIONS) },
  { weight: 3, arbitrary: httpRule("http-response", HTTP_RESPONSE_ACTIONS) },
  { weight: 3, arbitrary: acl },
  { weight: 2, arbitrary: pick(...Object.keys(OPTIONS)).map((name) => `option ${name}`) },
  { weight: 1, arbitrary: pick(...Object.keys(OPTIONS)).map((name) => `no option ${name}`) },
  {
    weight: 1,
    arbitrary: pick(
      "timeout server 30s",
      "timeout connect 5s",
      "timeout check 25d",
      "retries 3",
      "fullconn 10",
      "http-reuse safe",
      "hash-type consistent sdbm avalanche",
      "compression algo gzip",
      "errorloc 503 /down",
    ),
  },
  {
    weight: 1,
    arbitrary: pick(
      "balance roundrobin",
      "balance hdr(host) use_domain_only",
      "balance url_param id check_post 64",
      "balance uri whole len 10",
      "balance random(3)",
    ),
  },
  {
    weight: 1,
    arbitrary: pick(
      "cookie SRV insert indirect nocache",
      "retry-on conn-failure 503",
      "default-server inter 3s fall 3",
    ),
  },
  { weight: 1, arbitrary: serverOption.map((option) => `default-server ${option}`) },
  { weight: 1, arbitrary: optionsTogether },
);

/**
 * The line reader's edges: quotes (around a plain word, and around a word of samples, whose own quotes then reach
 * HAProxy's argument reader), a comment, leading and trailing blanks.
 */
function decorate(line: string): fc.Arbitrary<string> {
  return fc.tuple(fc.nat(11), pick(" # note", "#note", " #", "\t# x", "")).map(([style, comment]) => {
    const quoted =
      style === 0
        ? line.replace(/ ([A-Za-z][A-Za-z0-9_.-]*)$/, ' "$1"')
        : style === 1
          ? line.replace(/ ([a-z]+) /, " '$1' ")
          : style >= 8
            ? line.replace(/ ([^\s"\\$#]*[(%][^\s"\\$#]*)/, ' "$1"')
            : line;
    return `${style === 2 ? "  " : ""}${quoted}${style === 3 ? " \t" : ""}${comment}`;
  });
}

/** Backend params: a health-check option first (sometimes), then 1 to 6 lines, checks only after their option. */
export const backendParams = fc
  .tuple(
    pick("", "option httpchk", "option tcp-check"),
    fc.array(directive, { minLength: 1, maxLength: 5 }),
    fc.array(fc.oneof(httpCheck, tcpCheck), { maxLength: 2 }),
  )
  .chain(([check, lines, checks]) =>
    fc.tuple(...[check, ...lines, ...checks].filter(Boolean).map(decorate)).map((all) => all.join("\n")),
  );
