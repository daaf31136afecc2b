// Refusals and the checks of single argument values (integers, times, names, regexes, networks).
import { RE2JS } from "re2js";
import ipaddr from "ipaddr.js";
import { backtrackingRisk, spendRegex } from "./regex-cost";
import { pcreDifference } from "./regex-dialect";

/** Thrown inside the vetting of one line and turned into its reason; never leaves this module. */
export class Refusal {
  constructor(readonly reason: string) {}
}

export function refuse(reason: string): never {
  throw new Refusal(reason);
}

export const quote = (word: string) => JSON.stringify(word);

/** A table's own entry: a tenant's "constructor" or "__proto__" must not find Object.prototype's. */
export const own = <T>(table: Readonly<Record<string, T>>, key: string): T | undefined =>
  Object.hasOwn(table, key) ? table[key] : undefined;

// ---- values ----

const INTEGER = /^(0|[1-9][0-9]{0,9})$/;

export function integer(word: string | undefined, what: string, min: number, max: number): number {
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

export function time(word: string | undefined, what: string): void {
  if (word === undefined) refuse(`${what} needs a time`);
  const match = TIME.exec(word);
  const ms = match ? Number(match[1]) * TIME_UNITS[match[2] ?? "ms"] : NaN;
  if (!(ms >= 1 && ms <= MAX_TIME_MS))
    refuse(`${what} must be a time from 1ms to 24d (such as 500ms, 5s, 2m), not ${quote(word)}`);
}

export function oneOf(word: string | undefined, what: string, allowed: readonly string[]): string {
  if (word === undefined || !allowed.includes(word)) {
    refuse(`${what} must be one of ${allowed.join(", ")}${word === undefined ? "" : `, not ${quote(word)}`}`);
  }
  return word;
}

export function matching(word: string | undefined, what: string, pattern: RegExp, shape: string): string {
  if (word === undefined || !pattern.test(word))
    refuse(`${what} must be ${shape}${word === undefined ? "" : `, not ${quote(word)}`}`);
  return word;
}

export const HEADER_NAME = /^[!#%&'*+.^_`|~0-9A-Za-z-]{1,100}$/;
export const HOST_NAME =
  /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;
export const TOKEN = /^[A-Za-z0-9_.-]{1,100}$/;
export const METHOD = /^[A-Z]{1,20}$/;
/** An origin-form URI (a path, not a file: HAProxy sends it to the server). */
export const URI_PATH = /^\/[\x21-\x7e]{0,1000}$/;
export const CONTENT_TYPE =
  /^[a-z0-9][a-z0-9.+-]{0,63}\/[a-z0-9][a-z0-9.+-]{0,63}(; ?[a-z-]{1,32}=[A-Za-z0-9._-]{1,64})*$/;
export const MIME_TYPE = /^[a-z0-9][a-z0-9.+-]{0,63}\/[a-z0-9*][a-z0-9.+*-]{0,63}$/;
/** Statuses HAProxy has a built-in error page for (deny_status, errorloc). */
export const REPLY_STATUSES = [
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

/** Checks a regular expression; `everyStart` for regsub's, which runs from each match's end (see workOf). */
export function regex(word: string | undefined, what: string, everyStart = false): void {
  if (word === undefined) refuse(`${what} needs a regular expression`);
  // Before RE2 compiles it: what its counted repetitions copy is what compiling it costs.
  const overBudget = spendRegex(word);
  if (overBudget) refuse(`${what}: ${overBudget}`);
  try {
    // RE2 syntax keeps out backreferences and lookaround; what a pattern costs PCRE is regex-cost.ts's question.
    RE2JS.compile(word);
  } catch {
    refuse(`${what}: ${quote(word)} is not a regular expression in RE2 syntax`);
  }
  const risk = backtrackingRisk(word, everyStart);
  if (risk) refuse(`${what}: ${quote(word)} has ${risk}`);
  const difference = pcreDifference(word);
  if (difference) refuse(`${what}: ${quote(word)} has ${difference}`);
}

export function network(word: string | undefined, what: string): void {
  if (word === undefined) refuse(`${what} needs an address`);
  // IPv4 in four-part decimal only: HAProxy reads "10.1" or "0x0a000001" differently from ipaddr.js, or not at all.
  const [address, prefix] = word.split("/", 2);
  const valid =
    !address.includes("%") &&
    (ipaddr.IPv6.isValid(address) || ipaddr.IPv4.isValidFourPartDecimal(address)) &&
    (prefix === undefined || (/^[0-9]{1,3}$/.test(prefix) && ipaddr.isValidCIDR(word)));
  if (!valid) refuse(`${what} must be an IP address or network, not ${quote(word)}`);
}
