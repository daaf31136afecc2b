// Sample expressions: the fetches and converters a tenant may use, and log-format strings.
import { own, quote, refuse } from "./values";

/** Which message a sample is read from: the request, the response or either (the connection, variables, constants). */
export type Direction = "request" | "response" | "any";
type ArgRule = "none" | "optional" | "required";
/** How an ACL compares its sample with its values; "none": HAProxy wants an explicit -m. */
export type Match =
  "str" | "beg" | "end" | "sub" | "dir" | "dom" | "reg" | "len" | "int" | "ip" | "bool" | "found" | "meth" | "none";

interface FetchRule {
  direction: Direction;
  args: ArgRule;
  /** How an ACL on this fetch matches when no -m is given. */
  match: Match;
}

export const fetch = (direction: Direction, args: ArgRule, match: Match): FetchRule => ({ direction, args, match });

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
export function parseCalls(text: string, what: string): Call[] {
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

export function checkArgs(call: Call, rule: ArgRule, what: string, variables: number[] = []): void {
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

export const combine = (a: Direction, b: Direction, what: string): Direction => {
  if (a === "any") return b;
  if (b === "any" || a === b) return a;
  refuse(`${what}: mixes request and response samples`);
};

/** Checks `fetch[,converter...]`; returns where its samples come from. */
export function sampleExpression(text: string, what: string): Direction {
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

export function usableIn(direction: Direction, wanted: Direction, what: string): void {
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
export function logFormat(text: string | undefined, what: string, direction: Direction): void {
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
