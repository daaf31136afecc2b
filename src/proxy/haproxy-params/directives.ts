// The backend directives a tenant may use, and those an installation may add (HAPROXY_PARAMS_EXTRA_DIRECTIVES).
import { SECTION_KEYWORDS } from "./tokenizer";
import {
  HEADER_NAME,
  METHOD,
  MIME_TYPE,
  REPLY_STATUSES,
  TOKEN,
  URI_PATH,
  integer,
  matching,
  network,
  oneOf,
  own,
  quote,
  refuse,
  time,
} from "./values";
import { ACL_KEYWORD_TABLE } from "./haproxy-keywords";
import { ALLOWED_CONVERTERS, ALLOWED_FETCHES } from "./sample-policy";
import { ACL_NAME, BackendState, PREDEFINED_ACLS, aclBody, defineAcl } from "./conditions";
import { regexRunsSpent } from "./regex-cost";
import { VALUES_FETCH_WORK, measuredWork, spendSampleWork } from "./sample-cost";
import { httpRule } from "./http-rules";
import { serverOptions, tlsBounds } from "./server-options";
import { httpCheck, tcpCheck } from "./health-checks";

const TIMEOUTS = [
  "server",
  "connect",
  "queue",
  "tunnel",
  "http-request",
  "http-keep-alive",
  "check",
  "server-fin",
  "tarpit",
];

/** `option` names allowed in a backend, and whether HAProxy accepts them after `no`. */
export const OPTIONS: Readonly<Record<string, { negatable: boolean; args?: (words: string[], what: string) => void }>> =
  {
    httpchk: {
      negatable: false,
      args: (words, what) => {
        const [first, second, third, extra] = words;
        if (extra !== undefined) refuse(`${what} takes at most a method, a URI and a version`);
        if (first === undefined) return;
        if (second === undefined) return void matching(first, `${what}: the URI`, URI_PATH, "a path starting with /");
        matching(first, `${what}: the method`, METHOD, "an HTTP method");
        matching(second, `${what}: the URI`, URI_PATH, "a path starting with /");
        if (third !== undefined) oneOf(third, `${what}: the version`, ["HTTP/1.0", "HTTP/1.1"]);
      },
    },
    forwardfor: {
      negatable: false,
      args: (words, what) => {
        const seen = new Set<string>();
        for (let i = 0; i < words.length;) {
          const option = words[i++];
          if (seen.has(option)) refuse(`${what}: ${option} is given twice`);
          seen.add(option);
          if (option === "except") network(words[i++], `${what} except`);
          else if (option === "header") matching(words[i++], `${what} header`, HEADER_NAME, "a header name");
          else if (option !== "if-none")
            refuse(`${what}: ${quote(option)} is not an allowed option (allowed: except, header, if-none)`);
        }
      },
    },
    "tcp-check": { negatable: false },
    tcpka: { negatable: false },
    redispatch: {
      negatable: true,
      args: (words, what) => {
        if (words.length > 1) refuse(`${what} takes at most an interval`);
        if (words.length === 1) integer(words[0], `${what}: the interval`, -1000, 1000);
      },
    },
    "http-server-close": { negatable: true },
    "http-keep-alive": { negatable: true },
    httpclose: { negatable: true },
    abortonclose: { negatable: true },
    allbackups: { negatable: true },
    persist: { negatable: true },
    "log-health-checks": { negatable: true },
    "prefer-last-server": { negatable: true },
    "splice-auto": { negatable: true },
    "splice-request": { negatable: true },
    "splice-response": { negatable: true },
    "http-no-delay": { negatable: true },
    checkcache: { negatable: true },
    "independent-streams": { negatable: true },
    nolinger: { negatable: true },
    srvtcpka: { negatable: true },
    "http-buffer-request": { negatable: true },
  };

export function option(words: string[], start: number, negated: boolean, state: BackendState): void {
  const name = words[start];
  const what = `option ${name ?? ""}`.trim();
  const rule = name === undefined ? undefined : own(OPTIONS, name);
  if (!rule) refuse(`${quote(name ?? "")} is not an allowed option (allowed: ${Object.keys(OPTIONS).join(", ")})`);
  if (negated && !rule.negatable) refuse(`HAProxy has no "no option ${name}"`);
  const args = words.slice(start + 1);
  if (rule.args && !negated) rule.args(args, what);
  else if (args.length > 0) refuse(`${what} takes no arguments`);
  if (name === "httpchk" || name === "tcp-check") {
    if (state.checks !== "none") refuse(`${what}: the backend already has "option ${state.checks}"`);
    state.checks = name;
  }
}

function balance(words: string[]): void {
  const [algorithm, ...rest] = words.slice(1);
  const what = "balance";
  const none = () => {
    if (rest.length > 0) refuse(`${what} ${algorithm} takes no arguments`);
  };
  if (algorithm === undefined) refuse(`${what} needs an algorithm`);
  if (["roundrobin", "static-rr", "leastconn", "first", "source", "random"].includes(algorithm)) return none();
  if (/^random\([1-9][0-9]?\)$/.test(algorithm)) return none();
  if (algorithm === "rdp-cookie" || /^rdp-cookie\([A-Za-z0-9_-]{1,64}\)$/.test(algorithm)) return none();
  if (/^hdr\([!#%&'*+.^_`|~0-9A-Za-z-]{1,100}\)$/.test(algorithm)) {
    if (rest.length > 1 || (rest.length === 1 && rest[0] !== "use_domain_only"))
      refuse(`${what} hdr() takes at most use_domain_only`);
    // A header read for each request it balances.
    const overBudget = spendSampleWork(VALUES_FETCH_WORK);
    if (overBudget) refuse(`${what}: ${overBudget}`);
    return;
  }
  if (algorithm === "url_param") {
    matching(rest[0], `${what} url_param`, TOKEN, "a parameter name");
    if (rest.length === 1) return;
    if (rest.length !== 3 || rest[1] !== "check_post")
      refuse(`${what} url_param takes a name and at most check_post <bytes>`);
    integer(rest[2], `${what} url_param check_post`, 0, 1_000_000);
    return;
  }
  if (algorithm === "uri") {
    for (let i = 0; i < rest.length;) {
      const option = rest[i++];
      if (option === "len" || option === "depth") integer(rest[i++], `${what} uri ${option}`, 1, 1_000_000);
      else if (option !== "whole" && option !== "path-only") {
        refuse(`${what} uri: ${quote(option)} is not an allowed option (allowed: whole, len, depth, path-only)`);
      }
    }
    return;
  }
  refuse(
    `${quote(algorithm)} is not an allowed balance algorithm ` +
      "(allowed: roundrobin, static-rr, leastconn, first, source, random, uri, url_param, hdr(<name>), rdp-cookie)",
  );
}

/** A cookie domain: HAProxy warns that one without a dot may not work (RFC 6265). */
const COOKIE_DOMAIN = /^(?=[A-Za-z0-9.-]*\.)\.?[A-Za-z0-9.-]{1,253}$/;

/** `cookie <name> [options]`, with the combinations HAProxy 2.6 refuses (cfgparse-listen.c) refused. */
export function cookie(words: string[]): void {
  const what = "cookie";
  matching(words[1], `${what}: the name`, TOKEN, "a cookie name");
  const modes = ["rewrite", "insert", "prefix"];
  const flags = new Set<string>();
  for (let i = 2; i < words.length;) {
    const option = words[i++];
    if (modes.includes(option)) {
      if (modes.some((mode) => flags.has(mode))) refuse(`${what}: only one of rewrite, insert and prefix`);
      flags.add(option);
    } else if (option === "domain") matching(words[i++], `${what} domain`, COOKIE_DOMAIN, "a domain with a dot");
    else if (option === "maxidle" || option === "maxlife") time(words[i++], `${what} ${option}`);
    else if (option === "attr")
      matching(words[i++], `${what} attr`, /^[A-Za-z0-9=_.-]{1,100}$/, "an attribute (SameSite=Strict)");
    else if (["indirect", "nocache", "postonly", "preserve", "httponly", "secure", "dynamic"].includes(option)) {
      flags.add(option);
    } else refuse(`${what}: ${quote(option)} is not an allowed option`);
  }
  if (flags.has("rewrite") && flags.has("indirect")) refuse(`${what}: rewrite and indirect exclude each other`);
  if (flags.has("preserve") && !flags.has("insert") && !flags.has("indirect"))
    refuse(`${what}: preserve needs insert or indirect`);
}

const RETRY_EVENTS = [
  "none",
  "conn-failure",
  "empty-response",
  "junk-response",
  "response-timeout",
  "0rtt-rejected",
  "all-retryable-errors",
  "401",
  "403",
  "404",
  "408",
  "425",
  "500",
  "501",
  "502",
  "503",
  "504",
];

type Directive = (words: string[], state: BackendState) => void;

export const exactly = (n: number, words: string[], usage: string) => {
  if (words.length !== n) refuse(`${words[0]} takes ${usage}`);
};

/** Directives allowed in a backend's params, each with the check of all its arguments. */
export const BACKEND_DIRECTIVES: Readonly<Record<string, Directive>> = {
  timeout: (words) => {
    exactly(3, words, "a kind and a time");
    oneOf(words[1], "timeout", TIMEOUTS);
    time(words[2], `timeout ${words[1]}`);
  },
  option: (words, state) => option(words, 1, false, state),
  balance,
  "hash-type": (words) => {
    oneOf(words[1], "hash-type", ["map-based", "consistent"]);
    if (words.length > 2) oneOf(words[2], "hash-type: the function", ["sdbm", "djb2", "wt6", "crc32"]);
    if (words.length > 3) oneOf(words[3], "hash-type: the modifier", ["avalanche"]);
    if (words.length > 4) refuse("hash-type takes a method, a function and a modifier");
  },
  "hash-balance-factor": (words) => {
    exactly(2, words, "one number");
    const value = integer(words[1], "hash-balance-factor", 0, 65535);
    if (value > 0 && value <= 100) refuse("hash-balance-factor must be 0 or greater than 100");
  },
  retries: (words) => {
    exactly(2, words, "one number");
    integer(words[1], "retries", 0, 100);
  },
  "retry-on": (words) => {
    if (words.length < 2) refuse("retry-on needs at least one event");
    for (const word of words.slice(1)) oneOf(word, "retry-on", RETRY_EVENTS);
    if (words.length > 2 && words.includes("none")) refuse("retry-on: none must be the only event");
  },
  cookie,
  fullconn: (words) => {
    exactly(2, words, "one number");
    integer(words[1], "fullconn", 1, 1_000_000);
  },
  "http-reuse": (words) => {
    exactly(2, words, "one mode");
    oneOf(words[1], "http-reuse", ["never", "safe", "aggressive", "always"]);
  },
  compression: (words) => {
    const kind = oneOf(words[1], "compression", ["algo", "type", "offload"]);
    const values = words.slice(2);
    if (kind === "offload") {
      if (values.length > 0) refuse("compression offload takes nothing more");
    } else if (values.length === 0) refuse(`compression ${kind} needs values`);
    else if (kind === "algo") {
      for (const value of values) oneOf(value, "compression algo", ["identity", "gzip", "deflate", "raw-deflate"]);
    } else for (const value of values) matching(value, "compression type", MIME_TYPE, "a media type such as text/html");
  },
  errorloc: (words) => errorloc(words),
  errorloc302: (words) => errorloc(words),
  errorloc303: (words) => errorloc(words),
  "http-request": (words, state) => httpRule(words, state, "request"),
  "http-response": (words, state) => httpRule(words, state, "response"),
  "http-check": httpCheck,
  "tcp-check": tcpCheck,
  "default-server": (words, state) => {
    const options = serverOptions(words, 1, "default-server");
    const checkAlpn = state.serverTls.checkAlpn || options.has("check-alpn");
    const bounds = tlsBounds(options, state.serverTls, "default-server", "of an earlier default-server line");
    state.serverTls = { ...bounds, ...(checkAlpn && { checkAlpn: true as const }) };
  },
  acl: (words, state) => {
    const name = matching(words[1], "acl: the name", ACL_NAME, "letters, digits, '.', ':', '_' or '-'");
    if (Object.hasOwn(PREDEFINED_ACLS, name) || ["or", "if", "unless"].includes(name))
      refuse(`acl: ${name} is a reserved name`);
    const before = regexRunsSpent();
    // Nothing is evaluated where an ACL is written: each use evaluates it (defineAcl, condition).
    const { value: usage, work } = measuredWork(() => aclBody(words.slice(2), `acl ${name}`));
    defineAcl(state, name, usage, { regexes: regexRunsSpent() - before, work });
  },
};

const ERROR_LOCATION = /^(https?:\/\/[A-Za-z0-9.-]+(:[0-9]{1,5})?)?\/[\x21-\x7e]{0,1000}$/;

function errorloc(words: string[]): void {
  exactly(3, words, "a status and a URL");
  oneOf(words[1], words[0], REPLY_STATUSES);
  matching(words[2], `${words[0]}: the URL`, ERROR_LOCATION, "an http(s) URL or a path");
}

// ---- directives an installation adds (HAPROXY_PARAMS_EXTRA_DIRECTIVES) ----

/** Names the setting may not allow: they open sections, modify other keywords, or add servers (any address). */
export const NEVER_EXTRA: ReadonlySet<string> = new Set([
  ...SECTION_KEYWORDS,
  "no",
  "default",
  "server",
  "server-template",
]);

/**
 * Directives whose argument is a network address by design (`log <target>`, `dispatch`, `source`): a host name there
 * is a word like any other, so no check of the words can keep a tenant from reaching an address through them.
 */
const ADDRESS_DIRECTIVES: ReadonlySet<string> = new Set(["dispatch", "source", "log"]);
/** Actions that take the address HAProxy connects to from any sample (`set-dst int(167772161)` is 10.0.0.1). */
const ADDRESS_ACTIONS: ReadonlySet<string> = new Set(["set-dst", "set-dst-port"]);
/** An address in a word: dotted numbers (1.2.3.4, 10.1), IPv6 (`::`, hex:hex), or a port after a colon (host:80). */
const ADDRESS = /[0-9]\.[0-9]|::|[0-9A-Fa-f]:[0-9A-Fa-f]|:[0-9+-]/;

/** An extra directive's arguments: no file or path-like word, no address, no sample fetch or converter off the list. */
export function extraArguments(words: string[]): void {
  if (ADDRESS_DIRECTIVES.has(words[0])) refuse(`${quote(words[0])} takes a network address and cannot be allowed`);
  for (const word of words.slice(1)) {
    if (/[/\\~@]/.test(word) || /\.[A-Za-z][A-Za-z0-9]{0,7}$/.test(word))
      refuse(`${quote(word)} looks like a file or a path`);
    if (ADDRESS.test(word)) refuse(`${quote(word)} looks like a network address (1.2.3.4, host:port or IPv6)`);
    if (ADDRESS_ACTIONS.has(word)) refuse(`${quote(word)} chooses the address HAProxy connects to`);
    // From the start of a run of name characters only: from each of them, a run without "(" costs its length again.
    for (const match of word.matchAll(/(?<![A-Za-z0-9_.+-])([A-Za-z0-9_.+-]+)\(/g)) {
      const name = match[1];
      if (name === "ipv4" || name === "ipv6") refuse(`${quote(name)} makes a network address`);
      const aclFetch = Object.hasOwn(ACL_KEYWORD_TABLE, name) ? ACL_KEYWORD_TABLE[name].fetch : undefined;
      if (!ALLOWED_FETCHES.has(name) && !ALLOWED_CONVERTERS.has(name) && !ALLOWED_FETCHES.has(aclFetch ?? "")) {
        refuse(`${quote(name)} is not an allowed sample fetch or converter`);
      }
    }
    if (/(^|[^A-Za-z0-9_])(lua|51d|wurfl|da-csv)[.-]/.test(word)) refuse(`${quote(word)} calls code or data files`);
    if (/(^|[^A-Za-z0-9_])proc\./.test(word))
      refuse("process-wide variables (proc.*) are shared between backends and not allowed");
  }
}
