// ACLs and if/unless conditions, with the predefined ACLs, read as HAProxy 2.6 reads them (acl.c parse_acl_expr): an
// ACL keyword first, else a sample fetch; how it matches from the keyword, -m, or the type of the sample.
import { integer, matching, network, oneOf, own, quote, refuse, regex } from "./values";
import { ACL_KEYWORD_TABLE, ACL_MATCHES_BY_TYPE, SAMPLE_FETCH_KEYWORDS, type SampleType } from "./haproxy-keywords";
import { ALLOWED_FETCHES } from "./sample-policy";
import { type Place, bothUsable, parseCalls, sampleChain, usableIn } from "./samples";
import { spendRegexRuns } from "./regex-cost";
import { PATTERN_WORK, fetchWork, patternWork, spendSampleWork } from "./sample-cost";
import type { ServerDefaults } from "./tokenizer";

/** HAProxy's predefined ACLs a tenant may use, each with the criterion HAProxy defines it with (acl.c). */
export const PREDEFINED_ACLS: Readonly<Record<string, string>> = {
  TRUE: "always_true",
  FALSE: "always_false",
  HTTP: "req.proto_http",
  LOCALHOST: "src",
  METH_CONNECT: "method",
  METH_DELETE: "method",
  METH_GET: "method",
  METH_HEAD: "method",
  METH_OPTIONS: "method",
  METH_POST: "method",
  METH_PUT: "method",
  METH_TRACE: "method",
  "HTTP_1.0": "req.ver",
  "HTTP_1.1": "req.ver",
  HTTP_CONTENT: "req.hdr_val",
  HTTP_URL_ABS: "url_reg",
  HTTP_URL_SLASH: "url_beg",
  HTTP_URL_STAR: "url",
};

/** The fetch an ACL keyword or fetch name reads. */
const fetchOf = (name: string) => own(ACL_KEYWORD_TABLE, name)?.fetch ?? name;

/** Where a predefined ACL may be used: where its fetch may (HAProxy's table). */
export const predefinedUsage = (name: string): string | undefined => {
  const criterion = own(PREDEFINED_ACLS, name);
  return criterion === undefined ? undefined : own(SAMPLE_FETCH_KEYWORDS, fetchOf(criterion))?.usage;
};

/** ACL keywords a tenant may use: those whose fetch is allowed. */
export const allowedAclKeywords = (): string[] =>
  Object.keys(ACL_KEYWORD_TABLE).filter((name) => ALLOWED_FETCHES.has(ACL_KEYWORD_TABLE[name].fetch));

/** How a sample of each type matches without -m (acl.c); other types need -m. */
const DEFAULT_MATCH: Partial<Record<SampleType, string>> = {
  bool: "bool",
  sint: "int",
  addr: "ip",
  ipv4: "ip",
  ipv6: "ip",
  str: "str",
};
const MATCH_METHODS = ["str", "sub", "beg", "end", "dir", "dom", "reg", "len", "int", "ip", "bool", "found"];
const INT_PATTERN = /^(?:[0-9]{1,10}(?::[0-9]{0,10})?|:[0-9]{1,10})$/;
const INT_OPERATORS = ["eq", "ge", "gt", "le", "lt"];

/** The criterion: an ACL keyword (its own fetch and way of matching, unless converters follow) or a sample fetch. */
function criterionOf(criterion: string, what: string): { type: SampleType; usage: string; match: string | undefined } {
  const calls = parseCalls(criterion, what);
  const keyword = own(ACL_KEYWORD_TABLE, calls[0].name);
  const { type, usage } = sampleChain(calls, keyword?.fetch ?? calls[0].name, what);
  const match = keyword && calls.length === 1 ? keyword.match : own(DEFAULT_MATCH, type);
  return { type, usage, match };
}

function checkValues(values: string[], match: string, what: string): void {
  if (match === "bool" || match === "found") {
    if (values.length > 0) refuse(`${what}: a ${match === "bool" ? "boolean" : "-m found"} ACL takes no values`);
    return;
  }
  if (values.length === 0) refuse(`${what}: an ACL without values never matches`);
  if (match === "int" || match === "len") {
    for (let v = 0; v < values.length; v++) {
      if (INT_OPERATORS.includes(values[v])) {
        if (v !== 0 || values.length !== 2) refuse(`${what}: ${values[v]} takes exactly one integer`);
        integer(values[++v], `${what}: ${values[0]}`, 0, 2_147_483_647);
      } else {
        const [min, max] = matching(values[v], `${what}: a value`, INT_PATTERN, "an integer or a range such as 10:20")
          .split(":")
          .map((bound) => (bound === "" ? undefined : Number(bound)));
        if (min !== undefined && max !== undefined && min > max)
          refuse(`${what}: the range ${values[v]} ends below its start`);
      }
    }
  } else if (match === "ip") {
    for (const value of values) network(value, `${what}: a value`);
  } else if (match === "reg") {
    for (const value of values) regex(value, `${what}: a value`);
  }
}

/** Checks `criterion [flags] [values...]` (an `acl` line after its name, or an anonymous ACL); returns its usage. */
export function aclBody(words: string[], what: string): string {
  const [criterion, ...rest] = words;
  if (criterion === undefined) refuse(`${what} needs a criterion`);
  const { type, usage, match: implied } = criterionOf(criterion, what);
  let match = implied;
  let i = 0;
  for (; i < rest.length && rest[i].startsWith("-"); i++) {
    const flag = rest[i];
    if (flag === "--") {
      i++;
      break;
    }
    if (flag === "-i" || flag === "-n") continue;
    if (flag === "-m") {
      match = oneOf(rest[++i], `${what}: -m`, MATCH_METHODS);
      if (!ACL_MATCHES_BY_TYPE[type]?.includes(match)) refuse(`${what}: -m ${match} cannot match a ${type} sample`);
      continue;
    }
    if (flag === "-f" || flag === "-M") refuse(`${what}: the flag ${flag} reads patterns from a file`);
    refuse(`${what}: unknown ACL flag ${quote(flag)}`);
  }
  if (match === undefined)
    refuse(`${what}: ${quote(criterion)} needs -m to say how it matches (str, beg, end, sub, reg...)`);
  const values = rest.slice(i);
  checkValues(values, match, what);
  // `gt 0` is one pattern; each other value is one.
  const patterns = INT_OPERATORS.includes(values[0]) ? values.slice(1) : values;
  const overBudget = spendSampleWork(patterns.reduce((work, pattern) => work + patternWork(match, pattern), 0));
  if (overBudget) refuse(`${what}: ${overBudget}`);
  return usage;
}

/** Per backend: the ACLs defined so far (HAProxy needs them before use) and the health-check rules seen. */
export interface BackendState {
  /** Each ACL's usage: where every one of its expressions may be used. */
  acls: Map<string, string>;
  /**
   * Each ACL's regular expressions and sample work (its lines' fetches and patterns), and the conditions that used it
   * so far: each use evaluates them all.
   */
  aclCosts: Map<string, AclCost>;
  checks: "none" | "httpchk" | "tcp-check";
  /** The check steps so far, for HAProxy's ordering rules (connect first, send after a connect...). */
  steps: ("connect" | "send" | "expect")[];
  /** An earlier rule that ends the http-request (or http-response) rules whatever the request: later ones never run. */
  final: { request?: string; response?: string };
  /** The TLS settings the default-server lines so far set (a later line overrides only what it sets). */
  serverTls: ServerDefaults;
}

export interface AclCost {
  regexes: number;
  work: number;
  uses: number;
}

export const ACL_NAME = /^[A-Za-z0-9_.:-]{1,64}$/;

/** Checks `if|unless <condition>` from words[start]; every ACL must be usable in `place`. */
export function condition(words: string[], start: number, state: BackendState, place: Place, what: string): void {
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
      const body = words.slice(i + 1, end);
      usableIn(aclBody(body, `${what}: anonymous ACL`), place, what, `the anonymous ACL ${quote(body[0] ?? "")}`);
      i = end + 1;
    } else {
      if (term.includes("{") || term.includes("}")) refuse(`${what}: write "{" and "}" as separate words`);
      const usage = state.acls.get(term) ?? predefinedUsage(term);
      if (usage === undefined) refuse(`${what}: no ACL named ${quote(term)} is defined before this line`);
      usableIn(usage, place, what, `ACL ${term}`);
      useAcl(state, term, what);
      i++;
    }
    needTerm = false;
  }
  if (needTerm) refuse(`${what}: the condition is empty or ends with an operator`);
}

/**
 * Counts one more use of an ACL: its lines' fetches and patterns are evaluated once more a request, and from its
 * second use its regular expressions run once more (their first run was counted where they were written). A
 * predefined ACL is one fetch and its pattern (HTTP_URL_ABS a regex: `url_reg ^[^/:]*://`).
 */
function useAcl(state: BackendState, name: string, what: string): void {
  const cost = state.aclCosts.get(name);
  const predefined = own(PREDEFINED_ACLS, name);
  if (cost) cost.uses++;
  const regexRuns = cost ? (cost.uses > 1 ? cost.regexes : 0) : predefined === "url_reg" ? 1 : 0;
  const overRuns = regexRuns > 0 ? spendRegexRuns(regexRuns) : undefined;
  if (overRuns) refuse(`${what}: ACL ${name}: ${overRuns}`);
  const work = cost ? cost.work : predefined === undefined ? 0 : fetchWork(fetchOf(predefined)) + PATTERN_WORK;
  const overWork = spendSampleWork(work);
  if (overWork) refuse(`${what}: ACL ${name}: ${overWork}`);
}

/**
 * Records an `acl` line's usage (a name defined on several lines may be used only where each line may), and the
 * regular expressions and sample work it added: the rules that already use the ACL evaluate them too.
 */
export function defineAcl(state: BackendState, name: string, usage: string, line: Omit<AclCost, "uses">): void {
  const previous = state.acls.get(name);
  state.acls.set(name, previous === undefined ? usage : bothUsable(previous, usage));
  const cost = state.aclCosts.get(name) ?? { regexes: 0, work: 0, uses: 0 };
  cost.regexes += line.regexes;
  cost.work += line.work;
  state.aclCosts.set(name, cost);
  const overRuns = cost.uses > 1 && line.regexes > 0 ? spendRegexRuns(line.regexes * (cost.uses - 1)) : undefined;
  if (overRuns) refuse(`acl ${name}: ${overRuns}`);
  const overWork = spendSampleWork(line.work * cost.uses);
  if (overWork) refuse(`acl ${name}: ${overWork}`);
}
