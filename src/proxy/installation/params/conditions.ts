// ACLs and if/unless conditions, with the predefined ACLs and where their samples come from.
import { integer, matching, network, oneOf, own, quote, refuse, regex } from "./values";
import {
  ACL_KEYWORDS,
  CONVERTERS,
  Direction,
  FETCHES,
  Match,
  checkArgs,
  fetch,
  parseCalls,
  sampleExpression,
  usableIn,
} from "./samples";

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
export function aclBody(words: string[], what: string): Direction {
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
export interface BackendState {
  acls: Map<string, Direction>;
  checks: "none" | "httpchk" | "tcp-check";
  /** The check steps so far, for HAProxy's ordering rules (connect first, send after a connect...). */
  steps: ("connect" | "send" | "expect")[];
  /** An earlier rule that ends the http-request (or http-response) rules whatever the request: later ones never run. */
  final: { request?: string; response?: string };
}

export const ACL_NAME = /^[A-Za-z0-9_.:-]{1,64}$/;

/** Checks `if|unless <condition>` from words[start]; the samples must be available in `direction`. */
export function condition(
  words: string[],
  start: number,
  state: BackendState,
  direction: Direction,
  what: string,
): void {
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
