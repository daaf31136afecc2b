// Vets the HAProxy `params` of backends and of container links before they reach haproxy.cfg: each line is read the
// way HAProxy 2.6's configuration parser reads it (quotes, escapes, environment expansion, comments), then held to an
// allow-list of directives whose every argument is checked, so that a tenant can neither open a section, expand the
// environment, read a file nor name a directive haproxy would refuse.
import ipaddr from "ipaddr.js";
import { RE2JS } from "re2js";

/** Most lines one backend's params may have. */
export const MAX_PARAMS_LINES = 200;
/** Longest params line, in characters. */
export const MAX_LINE_LENGTH = 2000;
/** Most words on one line: HAProxy refuses a line of more than 64. */
export const MAX_WORDS = 64;

/** Why a params text was refused: the 1-based line, its text and the reason. */
export interface ParamsProblem {
  line: number;
  text: string;
  reason: string;
}

export type ParamsResult<T> = { ok: true; value: T } | { ok: false; error: ParamsProblem };

/** Backend params that passed: the lines to write into the backend section, and whether `_maintenance` was given. */
export interface BackendParams {
  lines: string[];
  maintenance: boolean;
}

/** Words that open a section in HAProxy (any version we may run): such a line would end the tenant's backend. */
export const SECTION_KEYWORDS: ReadonlySet<string> = new Set([
  "global",
  "defaults",
  "frontend",
  "backend",
  "listen",
  "userlist",
  "peers",
  "resolvers",
  "mailers",
  "program",
  "http-errors",
  "ring",
  "cache",
  "log-forward",
  "fcgi-app",
  "crt-store",
  "traces",
  "acme",
]);

/** Arguments that make HAProxy read a file (or load code); refused wherever they appear. */
export const FILE_KEYWORDS: ReadonlySet<string> = new Set([
  "file",
  "lf-file",
  "errorfile",
  "errorfiles",
  "default-errorfiles",
  "crt",
  "crt-list",
  "ca-file",
  "ca-verify-file",
  "crl-file",
  "key",
  "issuer",
  "-f",
  "-M",
  "lua-load",
  "lua-load-per-thread",
  "lua-prepend-path",
  "load-server-state-from-file",
  "server-state-file",
  "server-state-file-name",
  "server-state-base",
  "ssl-dh-param-file",
  "external-check",
  "config",
]);

// ---- tokeniser ----

/** One line as HAProxy splits it: the decoded words and the comment that ended it, if any. */
export interface TokenizedLine {
  words: string[];
  comment: string | null;
}

export type TokenizeResult = { ok: true; value: TokenizedLine } | { ok: false; error: string };

const isBlank = (ch: string) => ch === " " || ch === "\t";
const HEX = /^[0-9a-fA-F]{2}$/;
const ENV_NAME_START = /[A-Za-z_.{]/;
/** C0 controls but tab, DEL and the C1 controls. */
const CONTROL = /[\x00-\x08\x0a-\x1f\x7f-\x9f]/;
/** Control characters an escape may produce: only tab, CR and LF (NUL would cut the word where HAProxy reads it). */
const DECODED_CONTROL = /[\x00-\x08\x0b-\x0c\x0e-\x1f\x7f]/;
const ESCAPED_BREAKS = /[\t\r\n]/;

/**
 * Splits a line as HAProxy 2.6's parse_line() does with the options the configuration parser uses: blanks separate
 * words; single quotes keep everything; double quotes keep blanks and allow escapes; `\` escapes a blank, `\`, `#`,
 * a quote, `$` (in double quotes) and `\t`, `\n`, `\r`, `\xHH`, and is kept before any other character; an unquoted
 * `#` starts a comment, even inside a word. A `$` inside double quotes would expand the environment there, so it is
 * refused, as is a trailing backslash (HAProxy has no line continuation: the backslash would become an argument).
 */
export function tokenizeLine(line: string): TokenizeResult {
  const words: string[] = [];
  let word: string | null = null;
  let squote = false;
  let dquote = false;
  let i = 0;
  const fail = (error: string): TokenizeResult => ({ ok: false, error });
  while (i < line.length) {
    const ch = line[i];
    if (!squote && !dquote && isBlank(ch)) {
      if (word !== null) words.push(word);
      word = null;
      i++;
      continue;
    }
    if (ch === "#" && !squote && !dquote) {
      if (word !== null) words.push(word);
      return { ok: true, value: { words, comment: line.slice(i) } };
    }
    word ??= "";
    if (ch === '"' && !squote) {
      dquote = !dquote;
      i++;
    } else if (ch === "'" && !dquote) {
      squote = !squote;
      i++;
    } else if (ch === "\\" && !squote) {
      const next = line[i + 1];
      if (next === undefined) return fail("a trailing backslash is not a line continuation in HAProxy");
      if (next === " " || next === "\\" || next === "#" || next === "'" || next === '"') {
        word += next;
        i += 2;
      } else if (next === "t" || next === "n" || next === "r") {
        word += next === "t" ? "\t" : next === "n" ? "\n" : "\r";
        i += 2;
      } else if (next === "$" && dquote) {
        word += "$";
        i += 2;
      } else if (next === "x") {
        const hex = line.slice(i + 2, i + 4);
        if (!HEX.test(hex)) return fail('"\\x" must be followed by two hexadecimal digits');
        const decoded = String.fromCharCode(parseInt(hex, 16));
        if (DECODED_CONTROL.test(decoded)) return fail(`"\\x${hex}" makes a control character`);
        word += decoded;
        i += 4;
      } else {
        word += "\\";
        i += 1;
      }
    } else if (ch === "$" && dquote) {
      if (ENV_NAME_START.test(line[i + 1] ?? ""))
        return fail("environment expansion (${NAME} or $NAME) is not allowed");
      return fail('a "$" inside double quotes must be written "\\$"');
    } else {
      word += ch;
      i++;
    }
  }
  if (squote || dquote) return fail("unterminated quote");
  if (word !== null) words.push(word);
  return { ok: true, value: { words, comment: null } };
}

// ---- refusals ----

/** Thrown inside the vetting of one line and turned into its reason; never leaves this module. */
class Refusal {
  constructor(readonly reason: string) {}
}

function refuse(reason: string): never {
  throw new Refusal(reason);
}

const quote = (word: string) => JSON.stringify(word);

/** A table's own entry: a tenant's "constructor" or "__proto__" must not find Object.prototype's. */
const own = <T>(table: Readonly<Record<string, T>>, key: string): T | undefined =>
  Object.hasOwn(table, key) ? table[key] : undefined;

// ---- values ----

const INTEGER = /^(0|[1-9][0-9]{0,9})$/;

function integer(word: string | undefined, what: string, min: number, max: number): number {
  if (word === undefined) refuse(`${what} needs a value`);
  const negative = word.startsWith("-");
  const digits = negative ? word.slice(1) : word;
  const value = INTEGER.test(digits) ? (negative ? -Number(digits) : Number(digits)) : NaN;
  if (!(value >= min && value <= max)) refuse(`${what} must be an integer from ${min} to ${max}, not ${quote(word)}`);
  return value;
}

const TIME = /^(0|[1-9][0-9]{0,9})(ms|s|m|h|d)?$/;
const TIME_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
/** HAProxy's timers are signed 32-bit milliseconds. */
const MAX_TIME_MS = 2_147_483_647;

function time(word: string | undefined, what: string): void {
  if (word === undefined) refuse(`${what} needs a time`);
  const match = TIME.exec(word);
  const ms = match ? Number(match[1]) * TIME_UNITS[match[2] ?? "ms"] : NaN;
  if (!(ms >= 1 && ms <= MAX_TIME_MS))
    refuse(`${what} must be a time from 1ms to 24d (such as 500ms, 5s, 2m), not ${quote(word)}`);
}

function oneOf(word: string | undefined, what: string, allowed: readonly string[]): string {
  if (word === undefined || !allowed.includes(word)) {
    refuse(`${what} must be one of ${allowed.join(", ")}${word === undefined ? "" : `, not ${quote(word)}`}`);
  }
  return word;
}

function matching(word: string | undefined, what: string, pattern: RegExp, shape: string): string {
  if (word === undefined || !pattern.test(word))
    refuse(`${what} must be ${shape}${word === undefined ? "" : `, not ${quote(word)}`}`);
  return word;
}

const HEADER_NAME = /^[!#%&'*+.^_`|~0-9A-Za-z-]{1,100}$/;
const HOST_NAME =
  /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;
const TOKEN = /^[A-Za-z0-9_.-]{1,100}$/;
const METHOD = /^[A-Z]{1,20}$/;
/** An origin-form URI (a path, not a file: HAProxy sends it to the server). */
const URI_PATH = /^\/[\x21-\x7e]{0,1000}$/;
const CONTENT_TYPE = /^[a-z0-9][a-z0-9.+-]{0,63}\/[a-z0-9][a-z0-9.+-]{0,63}(; ?[a-z-]{1,32}=[A-Za-z0-9._-]{1,64})*$/;
const MIME_TYPE = /^[a-z0-9][a-z0-9.+-]{0,63}\/[a-z0-9*][a-z0-9.+*-]{0,63}$/;
/** Statuses HAProxy has a built-in error page for (deny_status, errorloc). */
const REPLY_STATUSES = [
  "200",
  "400",
  "401",
  "403",
  "404",
  "405",
  "407",
  "408",
  "410",
  "413",
  "425",
  "429",
  "500",
  "501",
  "502",
  "503",
  "504",
];

function regex(word: string | undefined, what: string): void {
  if (word === undefined) refuse(`${what} needs a regular expression`);
  try {
    // HAProxy compiles with PCRE; what RE2 accepts PCRE accepts too, and RE2 refuses the constructs that can stall.
    RE2JS.compile(word);
  } catch {
    refuse(`${what}: ${quote(word)} is not a regular expression in RE2 syntax`);
  }
}

function network(word: string | undefined, what: string): void {
  if (word === undefined) refuse(`${what} needs an address`);
  // IPv4 in four-part decimal only: HAProxy reads "10.1" or "0x0a000001" differently from ipaddr.js, or not at all.
  const [address, prefix] = word.split("/", 2);
  const valid =
    !address.includes("%") &&
    (ipaddr.IPv6.isValid(address) || ipaddr.IPv4.isValidFourPartDecimal(address)) &&
    (prefix === undefined || (/^[0-9]{1,3}$/.test(prefix) && ipaddr.isValidCIDR(word)));
  if (!valid) refuse(`${what} must be an IP address or network, not ${quote(word)}`);
}

// ---- sample expressions ----

/** Which message a sample is read from: the request, the response or either (the connection, variables, constants). */
type Direction = "request" | "response" | "any";
type ArgRule = "none" | "optional" | "required";
/** How an ACL compares its sample with its values; "none": HAProxy wants an explicit -m. */
type Match =
  "str" | "beg" | "end" | "sub" | "dir" | "dom" | "reg" | "len" | "int" | "ip" | "bool" | "found" | "meth" | "none";

interface FetchRule {
  direction: Direction;
  args: ArgRule;
  /** How an ACL on this fetch matches when no -m is given. */
  match: Match;
}

const fetch = (direction: Direction, args: ArgRule, match: Match): FetchRule => ({ direction, args, match });

/** Sample fetches allowed in expressions and ACLs: none reads a file, the environment or another tenant's state. */
export const FETCHES: Readonly<Record<string, FetchRule>> = {
  src: fetch("any", "none", "ip"),
  src_port: fetch("any", "none", "int"),
  dst: fetch("any", "none", "ip"),
  dst_port: fetch("any", "none", "int"),
  ssl_fc: fetch("any", "none", "bool"),
  ssl_fc_sni: fetch("any", "none", "str"),
  ssl_fc_protocol: fetch("any", "none", "str"),
  method: fetch("any", "none", "meth"),
  var: fetch("any", "required", "none"),
  str: fetch("any", "required", "str"),
  int: fetch("any", "required", "int"),
  bool: fetch("any", "required", "bool"),
  ipv4: fetch("any", "required", "ip"),
  ipv6: fetch("any", "required", "ip"),
  always_true: fetch("any", "none", "bool"),
  always_false: fetch("any", "none", "bool"),
  date: fetch("any", "optional", "int"),
  rand: fetch("any", "optional", "int"),
  uuid: fetch("any", "optional", "str"),
  be_name: fetch("any", "none", "str"),
  be_id: fetch("any", "none", "int"),
  fe_name: fetch("any", "none", "str"),
  path: fetch("request", "none", "str"),
  pathq: fetch("request", "none", "str"),
  query: fetch("request", "none", "str"),
  url: fetch("request", "none", "str"),
  base: fetch("request", "none", "str"),
  "req.ver": fetch("request", "none", "str"),
  "req.hdr": fetch("request", "required", "str"),
  "req.fhdr": fetch("request", "required", "str"),
  "req.hdr_cnt": fetch("request", "required", "int"),
  hdr: fetch("request", "required", "str"),
  hdr_cnt: fetch("request", "required", "int"),
  "req.cook": fetch("request", "required", "str"),
  "req.cook_cnt": fetch("request", "required", "int"),
  cook: fetch("request", "required", "str"),
  cook_cnt: fetch("request", "required", "int"),
  url_param: fetch("request", "required", "str"),
  urlp: fetch("request", "required", "str"),
  status: fetch("response", "none", "int"),
  "res.ver": fetch("response", "none", "str"),
  "res.hdr": fetch("response", "required", "str"),
  "res.fhdr": fetch("response", "required", "str"),
  "res.hdr_cnt": fetch("response", "required", "int"),
  shdr: fetch("response", "required", "str"),
  "res.cook": fetch("response", "required", "str"),
  scook: fetch("response", "required", "str"),
};

/** ACL keywords derived from a fetch with a fixed way of matching (`path_beg` is `path -m beg`). */
export const ACL_KEYWORDS: Readonly<Record<string, { fetch: string; match: Match }>> = Object.fromEntries([
  ...["path", "url", "base"].flatMap((name) =>
    (["beg", "end", "sub", "reg", "dir", "dom", "len"] as const).map((match) => [
      `${name}_${match}`,
      { fetch: name, match },
    ]),
  ),
  ...(["beg", "end", "sub", "reg", "dir", "dom", "len"] as const).map((match) => [
    `hdr_${match}`,
    { fetch: "hdr", match },
  ]),
  ["hdr_val", { fetch: "hdr", match: "int" }],
  ["hdr_ip", { fetch: "hdr", match: "ip" }],
  ...(["beg", "end", "sub", "reg", "len"] as const).map((match) => [`cook_${match}`, { fetch: "cook", match }]),
  ["urlp_beg", { fetch: "urlp", match: "beg" }],
  ["urlp_reg", { fetch: "urlp", match: "reg" }],
  ["urlp_val", { fetch: "urlp", match: "int" }],
]);

interface ConverterRule {
  args: ArgRule;
  /** How an ACL ending with this converter matches when no -m is given (from the converter's output type). */
  match: Match;
  /** Arguments that may name a variable (else they are constants). */
  variables?: number[];
}

/** Converters allowed after a fetch: pure functions of their input, none reads a file, a map or a table. */
export const CONVERTERS: Readonly<Record<string, ConverterRule>> = {
  lower: { match: "str", args: "none" },
  upper: { match: "str", args: "none" },
  field: { match: "str", args: "required" },
  word: { match: "str", args: "required" },
  regsub: { match: "str", args: "required" },
  bytes: { match: "none", args: "required" },
  length: { match: "int", args: "none" },
  base64: { match: "str", args: "none" },
  b64dec: { match: "none", args: "none" },
  hex: { match: "str", args: "none" },
  url_dec: { match: "str", args: "optional" },
  url_enc: { match: "str", args: "optional" },
  json: { match: "str", args: "optional" },
  ipmask: { match: "ip", args: "required" },
  concat: { match: "str", args: "required", variables: [1] },
  strcmp: { match: "int", args: "required", variables: [0] },
  add: { match: "int", args: "required", variables: [0] },
  sub: { match: "int", args: "required", variables: [0] },
  mul: { match: "int", args: "required", variables: [0] },
  div: { match: "int", args: "required", variables: [0] },
  mod: { match: "int", args: "required", variables: [0] },
  and: { match: "int", args: "required", variables: [0] },
  or: { match: "int", args: "required", variables: [0] },
  xor: { match: "int", args: "required", variables: [0] },
  neg: { match: "int", args: "none" },
  cpl: { match: "int", args: "none" },
  bool: { match: "bool", args: "none" },
  not: { match: "bool", args: "none" },
  odd: { match: "bool", args: "none" },
  even: { match: "bool", args: "none" },
  sdbm: { match: "int", args: "optional" },
  djb2: { match: "int", args: "optional" },
  crc32: { match: "int", args: "optional" },
  wt6: { match: "int", args: "optional" },
  xxh32: { match: "int", args: "optional" },
  xxh64: { match: "int", args: "optional" },
  sha1: { match: "none", args: "none" },
  sha2: { match: "none", args: "optional" },
  digest: { match: "none", args: "required" },
  ltime: { match: "str", args: "required" },
  utime: { match: "str", args: "required" },
  http_date: { match: "str", args: "optional" },
  ltrim: { match: "str", args: "required" },
  rtrim: { match: "str", args: "required" },
  cut_crlf: { match: "str", args: "none" },
  host_only: { match: "str", args: "none" },
  port_only: { match: "int", args: "none" },
};

/** Variable scopes a tenant may use: proc.* is shared by every backend of the load balancer. */
const VARIABLE = /^(txn|req|res|sess|check)\.[A-Za-z0-9_.]{1,64}$/;

interface Call {
  name: string;
  args: string[] | null;
}

/** Splits `name(args),name(args)...` (HAProxy's sample expression) into its calls; arguments stay raw text. */
function parseCalls(text: string, what: string): Call[] {
  const calls: Call[] = [];
  let i = 0;
  for (;;) {
    const name = /^[A-Za-z0-9_.+-]+/.exec(text.slice(i))?.[0];
    if (!name) refuse(`${what}: ${quote(text)} is not a sample expression`);
    i += name.length;
    let args: string[] | null = null;
    if (text[i] === "(") {
      args = [];
      let current = "";
      let quoteChar = "";
      i++;
      for (;;) {
        const ch = text[i];
        if (ch === undefined) refuse(`${what}: ${quote(text)} has an unclosed "("`);
        if (ch === "\\" && quoteChar !== "'") {
          if (text[i + 1] === undefined) refuse(`${what}: ${quote(text)} ends with a backslash`);
          current += ch + text[i + 1];
          i += 2;
          continue;
        }
        i++;
        if (quoteChar) {
          if (ch === quoteChar) quoteChar = "";
          current += ch;
        } else if (ch === "'" || ch === '"') {
          quoteChar = ch;
          current += ch;
        } else if (ch === ",") {
          args.push(current);
          current = "";
        } else if (ch === ")") {
          args.push(current);
          break;
        } else if (ch === "(" || ch === "[" || ch === "]") {
          refuse(`${what}: ${quote(text)}: write "${ch}" inside an argument with a backslash or quotes`);
        } else {
          current += ch;
        }
      }
    }
    calls.push({ name, args });
    if (i === text.length) return calls;
    if (text[i] !== ",") refuse(`${what}: ${quote(text)} is not a sample expression`);
    i++;
  }
}

function checkArgs(call: Call, rule: ArgRule, what: string, variables: number[] = []): void {
  const { name, args } = call;
  if (rule === "none" && args !== null) refuse(`${what}: ${quote(name)} takes no arguments`);
  if (rule === "required" && (args === null || args.every((arg) => arg === "")))
    refuse(`${what}: ${quote(name)} needs arguments`);
  for (const [index, arg] of (args ?? []).entries()) {
    if (/^\s*proc\./.test(arg))
      refuse(`${what}: process-wide variables (proc.*) are shared between backends and not allowed`);
    if (variables.includes(index) && !/^-?[0-9]+$/.test(arg) && arg !== "" && !VARIABLE.test(arg)) {
      refuse(`${what}: ${quote(arg)} must be a number or a variable of the txn, req, res, sess or check scope`);
    }
  }
  if (name === "var" && !VARIABLE.test(args?.[0] ?? "")) {
    refuse(`${what}: var() needs a variable of the txn, req, res, sess or check scope`);
  }
}

const combine = (a: Direction, b: Direction, what: string): Direction => {
  if (a === "any") return b;
  if (b === "any" || a === b) return a;
  refuse(`${what}: mixes request and response samples`);
};

/** Checks `fetch[,converter...]`; returns where its samples come from. */
function sampleExpression(text: string, what: string): Direction {
  const [first, ...converters] = parseCalls(text, what);
  const rule = own(FETCHES, first.name);
  if (!rule) refuse(`${what}: ${quote(first.name)} is not an allowed sample fetch`);
  checkArgs(first, rule.args, what);
  for (const converter of converters) {
    const convert = own(CONVERTERS, converter.name);
    if (!convert) refuse(`${what}: ${quote(converter.name)} is not an allowed converter`);
    checkArgs(converter, convert.args, what, convert.variables);
  }
  return rule.direction;
}

function usableIn(direction: Direction, wanted: Direction, what: string): void {
  if (direction !== "any" && wanted !== "any" && direction !== wanted) {
    refuse(`${what}: ${direction} samples are not available in a ${wanted} rule`);
  }
}

/**
 * Log-format variables allowed after `%` (besides `%[expression]` and `%%`): the request's own addresses, names and
 * times; not %H or %pid, which describe the load balancer rather than the tenant's traffic.
 */
export const LOG_VARIABLES: ReadonlySet<string> = new Set([
  "ci",
  "cp",
  "fi",
  "fp",
  "bi",
  "bp",
  "si",
  "sp",
  "ID",
  "Ts",
  "ms",
  "t",
  "tr",
  "T",
  "HM",
  "HP",
  "HQ",
  "HU",
  "HV",
  "rt",
  "r",
  "b",
  "s",
  "f",
  "ft",
]);

/** Checks a log-format string (`%[expression]`, `%var`, `%%`) whose samples must be available in `direction`. */
function logFormat(text: string | undefined, what: string, direction: Direction): void {
  if (text === undefined) refuse(`${what} needs a value`);
  let i = 0;
  while (i < text.length) {
    if (text[i] !== "%") {
      i++;
      continue;
    }
    i++;
    if (text[i] === "%") {
      i++;
      continue;
    }
    if (text[i] === "{") {
      const end = text.indexOf("}", i);
      if (end < 0 || !/^[+-][A-Za-z]+(?:[+-][A-Za-z]+)*$/.test(text.slice(i + 1, end))) {
        refuse(`${what}: malformed "%{...}" in ${quote(text)}`);
      }
      i = end + 1;
    }
    if (text[i] === "[") {
      const end = text.indexOf("]", i);
      if (end < 0) refuse(`${what}: "%[" without "]" in ${quote(text)}`);
      usableIn(sampleExpression(text.slice(i + 1, end), what), direction, what);
      i = end + 1;
      continue;
    }
    const name = /^[A-Za-z]+/.exec(text.slice(i))?.[0];
    if (!name || !LOG_VARIABLES.has(name)) {
      refuse(
        `${what}: "%${name ?? text[i] ?? ""}" is not an allowed log-format variable (write a literal "%" as "%%")`,
      );
    }
    i += name.length;
  }
}

// ---- ACLs and conditions ----

/** HAProxy's predefined ACLs a tenant may use, with where their samples come from. */
export const PREDEFINED_ACLS: Readonly<Record<string, Direction>> = {
  TRUE: "any",
  FALSE: "any",
  HTTP: "any",
  LOCALHOST: "any",
  METH_CONNECT: "any",
  METH_DELETE: "any",
  METH_GET: "any",
  METH_HEAD: "any",
  METH_OPTIONS: "any",
  METH_POST: "any",
  METH_PUT: "any",
  METH_TRACE: "any",
  "HTTP_1.0": "request",
  "HTTP_1.1": "request",
  HTTP_CONTENT: "request",
  HTTP_URL_ABS: "request",
  HTTP_URL_SLASH: "request",
  HTTP_URL_STAR: "request",
};

const MATCH_METHODS: readonly Match[] = [
  "str",
  "sub",
  "beg",
  "end",
  "dir",
  "dom",
  "reg",
  "len",
  "int",
  "ip",
  "bool",
  "found",
];
const INT_PATTERN = /^(?:[0-9]{1,10}(?::[0-9]{0,10})?|:[0-9]{1,10})$/;
const INT_OPERATORS = ["eq", "ge", "gt", "le", "lt"];

/** Checks `criterion [flags] [values...]` (an `acl` line after its name, or an anonymous ACL); returns its direction. */
function aclBody(words: string[], what: string): Direction {
  const [criterion, ...rest] = words;
  if (criterion === undefined) refuse(`${what} needs a criterion`);
  let direction: Direction;
  let match: Match;
  let derived = false;
  const named = /^([A-Za-z0-9_.]+)(\(.*)?$/.exec(criterion);
  const keyword = named ? own(ACL_KEYWORDS, named[1]) : undefined;
  if (named && keyword) {
    derived = true;
    const calls = parseCalls(criterion, what);
    if (calls.length > 1) refuse(`${what}: ${quote(named[1])} takes no converters`);
    const rule = FETCHES[keyword.fetch];
    checkArgs(calls[0], rule.args, what);
    direction = rule.direction;
    match = keyword.match;
  } else {
    direction = sampleExpression(criterion, what);
    const calls = parseCalls(criterion, what);
    // A converter makes the sample a string (or an integer for the arithmetic ones): match it as text unless -m says.
    match = calls.length > 1 ? CONVERTERS[calls[calls.length - 1].name].match : FETCHES[calls[0].name].match;
  }
  let i = 0;
  for (; i < rest.length && rest[i].startsWith("-"); i++) {
    const flag = rest[i];
    if (flag === "--") {
      i++;
      break;
    }
    if (flag === "-i" || flag === "-n") continue;
    if (flag === "-m") {
      if (derived) refuse(`${what}: ${quote(criterion)} already sets how it matches; use -m with a plain fetch`);
      match = oneOf(rest[++i], `${what}: -m`, MATCH_METHODS) as Match;
      continue;
    }
    if (flag === "-f" || flag === "-M") refuse(`${what}: the flag ${flag} reads patterns from a file`);
    refuse(`${what}: unknown ACL flag ${quote(flag)}`);
  }
  if (match === "none")
    refuse(`${what}: ${quote(criterion)} needs -m to say how it matches (str, beg, end, sub, reg...)`);
  const values = rest.slice(i);
  if (match === "bool" || match === "found") {
    if (values.length > 0) refuse(`${what}: a ${match === "bool" ? "boolean" : "-m found"} ACL takes no values`);
    return direction;
  }
  if (values.length === 0) refuse(`${what}: an ACL without values never matches`);
  if (match === "int" || match === "len") {
    for (let v = 0; v < values.length; v++) {
      if (INT_OPERATORS.includes(values[v])) {
        if (v !== 0 || values.length !== 2) refuse(`${what}: ${values[v]} takes exactly one integer`);
        integer(values[++v], `${what}: ${values[0]}`, 0, 2_147_483_647);
      } else {
        matching(values[v], `${what}: a value`, INT_PATTERN, "an integer or a range such as 10:20");
      }
    }
  } else if (match === "ip") {
    for (const value of values) network(value, `${what}: a value`);
  } else if (match === "reg") {
    for (const value of values) regex(value, `${what}: a value`);
  } else if (match === "meth") {
    for (const value of values) matching(value, `${what}: a value`, /^[A-Za-z]{1,20}$/, "an HTTP method");
  }
  return direction;
}

/** Per backend: the ACLs defined so far (HAProxy needs them before use) and the health-check rules seen. */
interface BackendState {
  acls: Map<string, Direction>;
  checks: "none" | "httpchk" | "tcp-check";
  /** The check steps so far, for HAProxy's ordering rules (connect first, send after a connect...). */
  steps: ("connect" | "send" | "expect")[];
  /** An earlier rule that ends the http-request (or http-response) rules whatever the request: later ones never run. */
  final: { request?: string; response?: string };
}

const ACL_NAME = /^[A-Za-z0-9_.:-]{1,64}$/;

/** Checks `if|unless <condition>` from words[start]; the samples must be available in `direction`. */
function condition(words: string[], start: number, state: BackendState, direction: Direction, what: string): void {
  if (start >= words.length) return;
  if (words[start] !== "if" && words[start] !== "unless") {
    refuse(`${what}: unexpected ${quote(words[start])} (a condition starts with if or unless)`);
  }
  let i = start + 1;
  let needTerm = true;
  while (i < words.length) {
    const word = words[i];
    if (word === "||" || word === "or") {
      if (needTerm) refuse(`${what}: ${quote(word)} needs an ACL before it`);
      needTerm = true;
      i++;
      continue;
    }
    let term = word;
    if (term === "!") term = words[++i] ?? refuse(`${what}: "!" needs an ACL`);
    else if (term.startsWith("!")) term = term.slice(1);
    if (term === "{") {
      const end = words.indexOf("}", i + 1);
      if (end < 0) refuse(`${what}: "{" without "}"`);
      usableIn(aclBody(words.slice(i + 1, end), `${what}: anonymous ACL`), direction, what);
      i = end + 1;
    } else {
      if (term.includes("{") || term.includes("}")) refuse(`${what}: write "{" and "}" as separate words`);
      const known = state.acls.get(term) ?? own(PREDEFINED_ACLS, term);
      if (known === undefined) refuse(`${what}: no ACL named ${quote(term)} is defined before this line`);
      usableIn(known, direction, `${what}: ACL ${term}`);
      i++;
    }
    needTerm = false;
  }
  if (needTerm) refuse(`${what}: the condition is empty or ends with an operator`);
}

// ---- http-request and http-response ----

type Cursor = { words: string[]; i: number };

/** The part of a deny or return rule after its action: status, content type, payload and headers (never a file). */
function reply(c: Cursor, what: string, direction: Direction, legacyStatus: boolean): void {
  let status = 0;
  let contentType = false;
  let payload = false;
  const seen = new Set<string>();
  while (c.i < c.words.length && c.words[c.i] !== "if" && c.words[c.i] !== "unless") {
    const option = c.words[c.i++];
    if (seen.has(option) && option !== "hdr") refuse(`${what}: ${option} is given twice`);
    seen.add(option);
    switch (option) {
      case "deny_status":
        if (!legacyStatus || seen.has("status")) refuse(`${what}: deny_status cannot be combined with status`);
        oneOf(c.words[c.i++], `${what}: deny_status`, REPLY_STATUSES);
        break;
      case "status":
        if (seen.has("deny_status")) refuse(`${what}: deny_status cannot be combined with status`);
        status = integer(c.words[c.i++], `${what}: status`, 200, 599);
        break;
      case "content-type":
        matching(c.words[c.i++], `${what}: content-type`, CONTENT_TYPE, "a media type");
        contentType = true;
        break;
      case "string":
        if (c.words[c.i++] === undefined) refuse(`${what}: string needs a value`);
        if (seen.has("lf-string")) refuse(`${what}: string and lf-string exclude each other`);
        payload = true;
        break;
      case "lf-string":
        logFormat(c.words[c.i++], `${what}: lf-string`, direction);
        if (seen.has("string")) refuse(`${what}: string and lf-string exclude each other`);
        payload = true;
        break;
      case "hdr": {
        const name = matching(c.words[c.i++], `${what}: hdr`, HEADER_NAME, "a header name");
        if (["content-length", "content-type", "transfer-encoding"].includes(name.toLowerCase())) {
          refuse(`${what}: hdr ${name} is set by HAProxy`);
        }
        logFormat(c.words[c.i++], `${what}: hdr ${name}`, direction);
        break;
      }
      default:
        refuse(
          `${what}: ${quote(option)} is not an allowed option ` +
            `(allowed: status, content-type, string, lf-string, hdr${legacyStatus ? ", deny_status" : ""})`,
        );
    }
  }
  if (payload && !contentType) refuse(`${what}: a string needs a content-type`);
  if (contentType && !payload) refuse(`${what}: content-type without string or lf-string`);
  if (payload && (status === 204 || status === 304)) refuse(`${what}: a ${status} response has no body`);
}

const SET_COOKIE = /^[A-Za-z0-9_.-]{1,64}(=[A-Za-z0-9_.~-]{0,256})?$/;

function redirect(c: Cursor, what: string, direction: Direction): void {
  oneOf(c.words[c.i++], `${what}: the redirect type`, ["location", "prefix", "scheme"]);
  logFormat(c.words[c.i++], `${what}: the target`, direction);
  while (c.i < c.words.length && c.words[c.i] !== "if" && c.words[c.i] !== "unless") {
    const option = c.words[c.i++];
    if (option === "code") oneOf(c.words[c.i++], `${what}: code`, ["301", "302", "303", "307", "308"]);
    else if (option === "set-cookie") matching(c.words[c.i++], `${what}: set-cookie`, SET_COOKIE, "NAME or NAME=value");
    else if (option === "clear-cookie")
      matching(c.words[c.i++], `${what}: clear-cookie`, /^[A-Za-z0-9_.-]{1,64}=?$/, "a cookie name");
    else if (option !== "drop-query" && option !== "append-slash") {
      refuse(`${what}: ${quote(option)} is not an allowed redirect option`);
    }
  }
}

type Action = (c: Cursor, what: string, direction: Direction) => void;

const headerAction: Action = (c, what, direction) => {
  matching(c.words[c.i++], `${what}: the header name`, HEADER_NAME, "a header name");
  logFormat(c.words[c.i++], `${what}: the value`, direction);
};
const replaceHeader: Action = (c, what, direction) => {
  matching(c.words[c.i++], `${what}: the header name`, HEADER_NAME, "a header name");
  regex(c.words[c.i++], `${what}: the match`);
  logFormat(c.words[c.i++], `${what}: the replacement`, direction);
};
const formatAction: Action = (c, what, direction) => logFormat(c.words[c.i++], `${what}: the value`, direction);
const replaceAction: Action = (c, what, direction) => {
  regex(c.words[c.i++], `${what}: the match`);
  logFormat(c.words[c.i++], `${what}: the replacement`, direction);
};

/** Actions of `http-request` rules in a backend; none reads a file, routes elsewhere or touches shared state. */
export const HTTP_REQUEST_ACTIONS: Readonly<Record<string, Action>> = {
  "set-header": headerAction,
  "add-header": headerAction,
  "del-header": (c, what) => void matching(c.words[c.i++], `${what}: the header name`, HEADER_NAME, "a header name"),
  "replace-header": replaceHeader,
  "replace-value": replaceHeader,
  "set-path": formatAction,
  "set-pathq": formatAction,
  "set-query": formatAction,
  "set-uri": formatAction,
  "set-method": formatAction,
  "replace-path": replaceAction,
  "replace-pathq": replaceAction,
  "replace-uri": replaceAction,
  allow: () => {},
  deny: (c, what, direction) => reply(c, what, direction, true),
  return: (c, what, direction) => reply(c, what, direction, false),
  redirect,
};

/** Actions of `http-response` rules. */
export const HTTP_RESPONSE_ACTIONS: Readonly<Record<string, Action>> = {
  "set-header": headerAction,
  "add-header": headerAction,
  "del-header": HTTP_REQUEST_ACTIONS["del-header"],
  "replace-header": replaceHeader,
  "replace-value": replaceHeader,
  "set-status": (c, what) => {
    integer(c.words[c.i++], `${what}: the status`, 100, 999);
    if (c.words[c.i] === "reason") {
      c.i++;
      if (c.words[c.i++] === undefined) refuse(`${what}: reason needs a text`);
    }
  },
  allow: () => {},
  deny: (c, what, direction) => reply(c, what, direction, true),
  return: (c, what, direction) => reply(c, what, direction, false),
  redirect,
};

function httpRule(words: string[], state: BackendState, direction: "request" | "response"): void {
  const actions = direction === "request" ? HTTP_REQUEST_ACTIONS : HTTP_RESPONSE_ACTIONS;
  const name = words[1];
  const what = `http-${direction} ${name ?? ""}`.trim();
  if (name === undefined) refuse(`${what} needs an action`);
  const action = own(actions, name);
  if (!action)
    refuse(`${quote(name)} is not an allowed http-${direction} action (allowed: ${Object.keys(actions).join(", ")})`);
  const earlier = state.final[direction];
  if (earlier) {
    refuse(
      `${what}: the earlier "${earlier}" has no condition and ends the http-${direction} rules, so this one would never run`,
    );
  }
  const cursor = { words, i: 2 };
  action(cursor, what, direction);
  condition(words, cursor.i, state, direction, what);
  if (FINAL_ACTIONS.has(name) && cursor.i >= words.length) state.final[direction] = what;
}

/** Actions after which HAProxy evaluates no further rule of the same kind. */
const FINAL_ACTIONS = new Set(["allow", "deny", "return", "redirect"]);

// ---- server options (container links and default-server) ----

type ServerOption = (words: string[], i: number, what: string) => number;

const flag: ServerOption = (_words, i) => i + 1;
const withValue =
  (check: (word: string | undefined, what: string) => void): ServerOption =>
  (words, i, what) => {
    check(words[i + 1], `${what} ${words[i]}`);
    return i + 2;
  };
const count = (min: number, max: number) => withValue((word, what) => void integer(word, what, min, max));
const timeValue = withValue((word, what) => time(word, what));
const choice = (...allowed: string[]) => withValue((word, what) => void oneOf(word, what, allowed));
const ALPN = /^[A-Za-z0-9./-]{1,32}(,[A-Za-z0-9./-]{1,32}){0,7}$/;

/** Server options a tenant may set; none names a file, another address or another backend's server. */
export const SERVER_OPTIONS: Readonly<Record<string, ServerOption>> = {
  check: flag,
  "no-check": flag,
  backup: flag,
  "no-backup": flag,
  disabled: flag,
  enabled: flag,
  "send-proxy": flag,
  "send-proxy-v2": flag,
  "check-send-proxy": flag,
  "agent-check": flag,
  ssl: flag,
  "check-ssl": flag,
  weight: count(0, 256),
  inter: timeValue,
  fastinter: timeValue,
  downinter: timeValue,
  slowstart: timeValue,
  "agent-inter": timeValue,
  "pool-purge-delay": timeValue,
  rise: count(1, 1000),
  fall: count(1, 1000),
  maxconn: count(0, 1_000_000),
  maxqueue: count(0, 1_000_000),
  minconn: count(0, 1_000_000),
  "error-limit": count(1, 1000),
  "pool-max-conn": count(-1, 1_000_000),
  "pool-low-conn": count(0, 1_000_000),
  "max-reuse": count(-1, 1_000_000),
  port: count(1, 65535),
  "agent-port": count(1, 65535),
  "on-error": choice("fastinter", "fail-check", "sudden-death", "mark-down"),
  "on-marked-down": choice("shutdown-sessions"),
  "on-marked-up": choice("shutdown-backup-sessions"),
  observe: choice("layer4", "layer7"),
  "resolve-prefer": choice("ipv4", "ipv6"),
  proto: choice("h2"),
  verify: choice("none", "required"),
  "ssl-min-ver": choice("TLSv1.0", "TLSv1.1", "TLSv1.2", "TLSv1.3"),
  "ssl-max-ver": choice("TLSv1.0", "TLSv1.1", "TLSv1.2", "TLSv1.3"),
  // The system's CA bundle (public certificates) is the one file a tenant may name: HAProxy's @system-ca.
  "ca-file": choice("@system-ca"),
  cookie: withValue((word, what) => void matching(word, what, TOKEN, "letters, digits, '.', '_' or '-'")),
  "agent-send": withValue((word, what) => {
    if (word === undefined) refuse(`${what} needs a value`);
  }),
  verifyhost: withValue((word, what) => void matching(word, what, HOST_NAME, "a host name")),
  "check-sni": withValue((word, what) => void matching(word, what, HOST_NAME, "a host name")),
  sni: withValue((word, what) => {
    if (word === undefined) refuse(`${what} needs a sample expression`);
    sampleExpression(word, what);
  }),
  alpn: withValue(
    (word, what) => void matching(word, what, ALPN, "a comma-separated list of protocols such as h2,http/1.1"),
  ),
  "check-alpn": withValue(
    (word, what) => void matching(word, what, ALPN, "a comma-separated list of protocols such as h2,http/1.1"),
  ),
};

/** Checks server options (after `default-server`, or a container link's params) from words[start]. */
function serverOptions(words: string[], start: number, what: string): void {
  const seen = new Set<string>();
  let i = start;
  while (i < words.length) {
    const name = words[i];
    const option = own(SERVER_OPTIONS, name);
    if (!option) {
      if (FILE_KEYWORDS.has(name)) refuse(`${quote(name)} would read a file`);
      refuse(`${quote(name)} is not an allowed server option`);
    }
    if (seen.has(name)) refuse(`${what}: ${name} is given twice`);
    seen.add(name);
    i = option(words, i, what);
  }
  const verify = words[words.indexOf("verify") + 1];
  if ((seen.has("ssl") || seen.has("check-ssl")) && !seen.has("verify")) {
    refuse(`${what}: ssl needs "verify none" or "verify required ca-file @system-ca" (there is no other CA file)`);
  }
  if (seen.has("verify") && verify === "required" && !seen.has("ca-file"))
    refuse(`${what}: verify required needs ca-file @system-ca`);
  if (seen.has("agent-check") && !seen.has("agent-port")) refuse(`${what}: agent-check needs agent-port`);
}

// ---- health checks ----

function checkStep(state: BackendState, step: "connect" | "send" | "expect", what: string): void {
  const last = state.steps.at(-1);
  if (step === "connect" && last !== undefined && state.steps[0] !== "connect") {
    refuse(`${what}: a connect step must come first when the check has one`);
  }
  if (state.checks === "httpchk") {
    // HAProxy's http-check sequences: [connect] send expect... [connect send expect...]
    if (step === "connect" && last !== undefined && last !== "expect")
      refuse(`${what}: a connect step must follow an expect step`);
    if (step === "send" && last !== undefined && last !== "connect")
      refuse(`${what}: a send step needs a connect step before it`);
    if (step === "expect" && last === "connect")
      refuse(`${what}: an expect step after a connect needs a send step between them`);
  }
  state.steps.push(step);
}

function checkConnect(words: string[], i: number, what: string): void {
  while (i < words.length) {
    const option = words[i++];
    if (option === "port") integer(words[i++], `${what} port`, 1, 65535);
    else if (option === "comment") {
      if (words[i++] === undefined) refuse(`${what}: comment needs a text`);
    } else if (option === "proto") oneOf(words[i++], `${what} proto`, ["h2"]);
    else if (!["default", "linger", "send-proxy"].includes(option)) {
      const allowed = "default, port, linger, send-proxy, proto, comment";
      refuse(`${what}: ${quote(option)} is not an allowed connect option (allowed: ${allowed})`);
    }
  }
}

function checkVariable(words: string[], what: string, set: boolean): void {
  const call = /^(set-var|unset-var)\((.*)\)$/.exec(words[1]);
  if (!call || !/^check\.[A-Za-z0-9_.]{1,64}$/.test(call[2]))
    refuse(`${what}: ${words[1].split("(")[0]}() needs a check.* variable`);
  if (set) {
    if (words.length !== 3) refuse(`${what}: set-var needs one sample expression`);
    sampleExpression(words[2], what);
  } else if (words.length !== 2) refuse(`${what}: unset-var takes nothing more`);
}

const STATUS_LIST = /^[1-5][0-9]{2}(-[1-5][0-9]{2})?(,[1-5][0-9]{2}(-[1-5][0-9]{2})?){0,15}$/;

function httpCheck(words: string[], state: BackendState): void {
  const what = `http-check ${words[1] ?? ""}`.trim();
  if (state.checks !== "httpchk") refuse(`${what}: http-check rules need "option httpchk" on an earlier line`);
  const kind = words[1];
  if (kind === "set-var" || kind?.startsWith("set-var(")) return checkVariable(words, what, true);
  if (kind === "unset-var" || kind?.startsWith("unset-var(")) return checkVariable(words, what, false);
  switch (kind) {
    case "disable-on-404":
    case "send-state":
      if (words.length !== 2) refuse(`${what} takes nothing more`);
      return;
    case "comment":
      if (words.length !== 3) refuse(`${what} needs one text`);
      return;
    case "connect":
      checkStep(state, "connect", what);
      return checkConnect(words, 2, what);
    case "send": {
      checkStep(state, "send", what);
      const headers = new Set<string>();
      for (let i = 2; i < words.length;) {
        const option = words[i++];
        if (option === "meth") matching(words[i++], `${what} meth`, METHOD, "an HTTP method");
        else if (option === "uri") matching(words[i++], `${what} uri`, URI_PATH, "a path starting with /");
        else if (option === "ver") oneOf(words[i++], `${what} ver`, ["HTTP/1.0", "HTTP/1.1"]);
        else if (option === "body") {
          if (words[i++] === undefined) refuse(`${what}: body needs a text`);
        } else if (option === "hdr") {
          const name = matching(words[i++], `${what} hdr`, HEADER_NAME, "a header name").toLowerCase();
          if (headers.has(name)) refuse(`${what}: header ${name} is given twice`);
          headers.add(name);
          logFormat(words[i++], `${what} hdr ${name}`, "any");
        } else refuse(`${what}: ${quote(option)} is not an allowed send option (allowed: meth, uri, ver, hdr, body)`);
      }
      return;
    }
    case "expect": {
      checkStep(state, "expect", what);
      let i = 2;
      if (words[i] === "comment") {
        if (words[i + 1] === undefined) refuse(`${what}: comment needs a text`);
        i += 2;
      }
      if (words[i] === "!") i++;
      const test = oneOf(words[i++], `${what}: the test`, ["status", "rstatus", "string", "rstring"]);
      const pattern = words[i++];
      if (test === "status") matching(pattern, `${what} status`, STATUS_LIST, "status codes such as 200 or 200-399");
      else if (test.startsWith("r")) regex(pattern, `${what} ${test}`);
      else if (pattern === undefined) refuse(`${what} string needs a text`);
      if (i !== words.length) refuse(`${what}: unexpected ${quote(words[i])}`);
      return;
    }
    default:
      refuse(
        `${quote(kind ?? "")} is not an allowed http-check rule ` +
          "(allowed: connect, send, expect, set-var, unset-var, comment, disable-on-404, send-state)",
      );
  }
}

function tcpCheck(words: string[], state: BackendState): void {
  const what = `tcp-check ${words[1] ?? ""}`.trim();
  if (state.checks !== "tcp-check") refuse(`${what}: tcp-check rules need "option tcp-check" on an earlier line`);
  const kind = words[1];
  if (kind === "set-var" || kind?.startsWith("set-var(")) return checkVariable(words, what, true);
  if (kind === "unset-var" || kind?.startsWith("unset-var(")) return checkVariable(words, what, false);
  const withComment = (end: number) => {
    if (words.length === end) return;
    if (words.length !== end + 2 || words[end] !== "comment") refuse(`${what}: unexpected ${quote(words[end])}`);
  };
  switch (kind) {
    case "comment":
      if (words.length !== 3) refuse(`${what} needs one text`);
      return;
    case "connect":
      checkStep(state, "connect", what);
      return checkConnect(words, 2, what);
    case "send":
      checkStep(state, "send", what);
      if (words[2] === undefined) refuse(`${what} needs the data to send`);
      return withComment(3);
    case "send-binary":
      checkStep(state, "send", what);
      matching(words[2], what, /^(?:[0-9a-fA-F]{2}){1,500}$/, "hexadecimal bytes");
      return withComment(3);
    case "expect": {
      checkStep(state, "expect", what);
      let i = 2;
      if (words[i] === "!") i++;
      const test = oneOf(words[i++], `${what}: the test`, ["string", "rstring", "binary", "rbinary"]);
      const pattern = words[i++];
      if (test === "binary") matching(pattern, `${what} binary`, /^(?:[0-9a-fA-F]{2}){1,500}$/, "hexadecimal bytes");
      else if (test.startsWith("r")) regex(pattern, `${what} ${test}`);
      else if (pattern === undefined) refuse(`${what} string needs a text`);
      return withComment(i);
    }
    default:
      refuse(
        `${quote(kind ?? "")} is not an allowed tcp-check rule (allowed: connect, send, send-binary, expect, set-var, unset-var, comment)`,
      );
  }
}

// ---- backend directives ----

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

function option(words: string[], start: number, negated: boolean, state: BackendState): void {
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

function cookie(words: string[]): void {
  const what = "cookie";
  matching(words[1], `${what}: the name`, TOKEN, "a cookie name");
  const modes = ["rewrite", "insert", "prefix"];
  let mode = false;
  for (let i = 2; i < words.length;) {
    const option = words[i++];
    if (modes.includes(option)) {
      if (mode) refuse(`${what}: only one of rewrite, insert and prefix`);
      mode = true;
    } else if (option === "domain") matching(words[i++], `${what} domain`, /^\.?[A-Za-z0-9.-]{1,253}$/, "a domain");
    else if (option === "maxidle" || option === "maxlife") time(words[i++], `${what} ${option}`);
    else if (option === "attr")
      matching(words[i++], `${what} attr`, /^[A-Za-z0-9=_.-]{1,100}$/, "an attribute (SameSite=Strict)");
    else if (!["indirect", "nocache", "postonly", "preserve", "httponly", "secure", "dynamic"].includes(option)) {
      refuse(`${what}: ${quote(option)} is not an allowed option`);
    }
  }
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

const exactly = (n: number, words: string[], usage: string) => {
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
    if (value > 0 && value < 100) refuse("hash-balance-factor must be 0 or at least 100");
  },
  retries: (words) => {
    exactly(2, words, "one number");
    integer(words[1], "retries", 0, 100);
  },
  "retry-on": (words) => {
    if (words.length < 2) refuse("retry-on needs at least one event");
    for (const word of words.slice(1)) oneOf(word, "retry-on", RETRY_EVENTS);
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
  "default-server": (words) => serverOptions(words, 1, "default-server"),
  acl: (words, state) => {
    const name = matching(words[1], "acl: the name", ACL_NAME, "letters, digits, '.', ':', '_' or '-'");
    if (Object.hasOwn(PREDEFINED_ACLS, name) || ["or", "if", "unless"].includes(name))
      refuse(`acl: ${name} is a reserved name`);
    const direction = aclBody(words.slice(2), `acl ${name}`);
    const previous = state.acls.get(name);
    state.acls.set(name, previous === undefined ? direction : combine(previous, direction, `acl ${name}`));
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

/** An extra directive's arguments: no file or path-like word, no address, no sample fetch or converter off the list. */
function extraArguments(words: string[]): void {
  for (const word of words.slice(1)) {
    if (/[/\\~@]/.test(word) || /\.[A-Za-z][A-Za-z0-9]{0,7}$/.test(word))
      refuse(`${quote(word)} looks like a file or a path`);
    for (const match of word.matchAll(/([A-Za-z0-9_.+-]+)\(/g)) {
      const name = match[1];
      if (!Object.hasOwn(FETCHES, name) && !Object.hasOwn(CONVERTERS, name) && !Object.hasOwn(ACL_KEYWORDS, name)) {
        refuse(`${quote(name)} is not an allowed sample fetch or converter`);
      }
    }
    if (/(^|[^A-Za-z0-9_])(lua|51d|wurfl|da-csv)[.-]/.test(word)) refuse(`${quote(word)} calls code or data files`);
    if (/(^|[^A-Za-z0-9_])proc\./.test(word))
      refuse("process-wide variables (proc.*) are shared between backends and not allowed");
  }
}

// ---- lines ----

/** Splits params text into lines (LF or CRLF), each without its surrounding blanks. */
function splitLines(params: string): string[] {
  return params.split(/\r?\n/).map((line) => line.replace(/^[ \t]+|[ \t]+$/g, ""));
}

function lineProblem(line: string): string | undefined {
  if (line.length > MAX_LINE_LENGTH) return `longer than ${MAX_LINE_LENGTH} characters`;
  if (CONTROL.test(line)) return "contains a control character";
  return undefined;
}

function tokenized(line: string): string[] {
  const problem = lineProblem(line);
  if (problem) refuse(problem);
  const result = tokenizeLine(line);
  if (!result.ok) refuse(result.error);
  if (result.value.words.length > MAX_WORDS) refuse(`more than ${MAX_WORDS} words (HAProxy's limit)`);
  return result.value.words;
}

/**
 * Checks every decoded word of a line: no empty word (HAProxy would stop reading the arguments there), no environment
 * expansion, no word that makes HAProxy read a file (ca-file only as @system-ca), no control character (tcp-check data
 * and agent-send may hold escaped CR, LF and tab).
 */
function checkWords(words: string[]): void {
  words.forEach((word, index) => {
    if (word === "") refuse('an empty word ("") is not allowed');
    if (/\$[A-Za-z_.{]/.test(word)) refuse("environment expansion (${NAME} or $NAME) is not allowed");
    const breaksAllowed =
      (words[0] === "tcp-check" && index >= 2 && (words[1] === "send" || words[1] === "expect")) ||
      words[index - 1] === "agent-send";
    if (DECODED_CONTROL.test(word) || (!breaksAllowed && ESCAPED_BREAKS.test(word))) {
      refuse(`${quote(word)} contains a control character`);
    }
    if (FILE_KEYWORDS.has(word) && !(word === "ca-file" && words[index + 1] === "@system-ca")) {
      refuse(`${quote(word)} would read a file`);
    }
  });
}

/**
 * A last net over every word of a line the allow-list accepted: whatever position a word holds, it may not spell a call
 * that reads files, the environment, Lua code or shared tables (an ACL pattern such text is only a string to HAProxy,
 * but no tenant needs it).
 */
const FORBIDDEN_CALL = new RegExp(
  "(^|[^A-Za-z0-9_.])(map(_[a-z0-9]+)?|env|lua\\.[A-Za-z0-9_.]*|table_[a-z0-9_]+|sc[0-9]?_[a-z0-9_]+|src_[a-z0-9_]+|" +
    "51d\\.[A-Za-z0-9_.]*|wurfl-[a-z-]+|da-csv-conv)\\(|(^|[^A-Za-z0-9_.])lua\\.",
);

function netCheck(words: string[]): void {
  for (const word of words) {
    if (FORBIDDEN_CALL.test(word))
      refuse(`${quote(word)} calls a function that reads files, the environment or shared tables`);
  }
}

function backendLine(words: string[], state: BackendState, extra: ReadonlySet<string>): "maintenance" | void {
  const [directive] = words;
  if (SECTION_KEYWORDS.has(directive)) refuse(`${quote(directive)} opens a new section`);
  if (directive.startsWith("."))
    refuse(`${quote(directive)} is a configuration-parser directive (.if, .notice...) and not allowed`);
  if (directive === "_maintenance") {
    if (words.length > 1) refuse("_maintenance takes no arguments");
    return "maintenance";
  }
  if (directive.startsWith("_"))
    refuse(`${quote(directive)} is not a supported pseudo-directive (only _maintenance is)`);
  checkWords(words);
  if (directive === "no") {
    if (words[1] !== "option") refuse(`"no" is only allowed before option`);
    option(words, 2, true, state);
    return netCheck(words);
  }
  const rule = own(BACKEND_DIRECTIVES, directive);
  if (rule) {
    rule(words, state);
    return netCheck(words);
  }
  if (extra.has(directive) && !NEVER_EXTRA.has(directive)) {
    extraArguments(words);
    return netCheck(words);
  }
  if (FILE_KEYWORDS.has(directive) || directive === "log") refuse(`${quote(directive)} would read or write a file`);
  refuse(`${quote(directive)} is not an allowed directive`);
}

const problem = (line: number, text: string, reason: string): ParamsResult<never> => ({
  ok: false,
  error: { line, text, reason },
});

/**
 * Vets a backend's params: one directive per line, each allow-listed (or in `extraDirectives`, whose arguments are
 * still checked for files, paths and expansion). Empty lines and comment lines are dropped; the other lines are
 * returned as they will be written. `_maintenance` is the project's own pseudo-directive.
 */
export function vetBackendParams(
  params: string | null | undefined,
  extraDirectives: readonly string[] = [],
): ParamsResult<BackendParams> {
  const lines = splitLines(params ?? "");
  if (lines.length > MAX_PARAMS_LINES) {
    return problem(MAX_PARAMS_LINES + 1, lines[MAX_PARAMS_LINES], `more than ${MAX_PARAMS_LINES} lines`);
  }
  const extra = new Set(extraDirectives);
  const state: BackendState = { acls: new Map(), checks: "none", steps: [], final: {} };
  const kept: string[] = [];
  let maintenance = false;
  for (const [index, line] of lines.entries()) {
    try {
      const words = tokenized(line);
      if (words.length === 0) continue;
      if (backendLine(words, state, extra) === "maintenance") maintenance = true;
      else kept.push(line);
    } catch (error) {
      if (error instanceof Refusal) return problem(index + 1, line, error.reason);
      throw error;
    }
  }
  return { ok: true, value: { lines: kept, maintenance } };
}

/** Vets the params of a container link: one line of allow-listed server options, returned as it will be written. */
export function vetServerParams(params: string | null | undefined): ParamsResult<string> {
  const lines = splitLines(params ?? "");
  const used = lines.map((line, index) => ({ line, index })).filter(({ line }) => line !== "");
  if (used.length > 1) return problem(used[1].index + 1, used[1].line, "server params must be one line");
  if (used.length === 0) return { ok: true, value: "" };
  const { line, index } = used[0];
  try {
    const words = tokenized(line);
    if (words.length === 0) return { ok: true, value: "" };
    checkWords(words);
    serverOptions(words, 0, "server");
    netCheck(words);
    // Written as given: the server line ends with these options, so a trailing comment hides nothing.
    return { ok: true, value: line };
  } catch (error) {
    if (error instanceof Refusal) return problem(index + 1, line, error.reason);
    throw error;
  }
}

/** "params line 2: ..." for an API error. */
export const describeProblem = (field: string, error: ParamsProblem) => `${field} line ${error.line}: ${error.reason}`;
