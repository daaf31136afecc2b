// Sample expressions as HAProxy 2.6 parses them: calls and their arguments (make_arg_list's quoting), each checked
// against HAProxy's own keyword table (haproxy-keywords.ts: argument counts and types, the type each converter reads
// and the casts before it, where each fetch may be used) and the tenant policy (sample-policy.ts); and log-formats.
import ipaddr from "ipaddr.js";
import {
  type ArgumentType,
  type Arguments,
  CONVERTER_KEYWORDS,
  SAMPLE_CASTS,
  SAMPLE_FETCH_KEYWORDS,
  SAMPLE_USAGE_PLACES,
  type SampleType,
  type UsagePlace,
} from "./haproxy-keywords";
import { ALLOWED_CONVERTERS, ALLOWED_FETCHES, CONVERTER_VALUES, EMPTY_ALLOWED, FETCH_VALUES } from "./sample-policy";
import { DECODED_CONTROL } from "./tokenizer";
import { FETCH_WORK, fetchWork, spendSampleWork } from "./sample-cost";
import { own, quote, refuse, regex } from "./values";

// ---- where samples are used ----

/**
 * The places where a tenant's samples are evaluated, each with the check place HAProxy 2.6 tests fetches against
 * (a column of the keyword table's `usage`). http-check and tcp-check rules are both "backend tcp-check rule".
 */
export const PLACES = {
  "http-request": { column: "backend http-request header rule", label: "an http-request rule" },
  "http-response": { column: "backend http-response header rule", label: "an http-response rule" },
  "tcp-request content": { column: "backend tcp-request content rule", label: "a tcp-request content rule" },
  "tcp-response content": { column: "backend tcp-response content rule", label: "a tcp-response content rule" },
  check: { column: "backend tcp-check rule", label: "a health check rule" },
  server: { column: "server source selection", label: "a server's sni" },
  "use-server": { column: "backend use-server, balance or stick-match rule", label: "a use-server or balance rule" },
  "stick-store": { column: "backend stick-store rule", label: "a stick-store rule" },
  logs: { column: "logs", label: "a log-format" },
} as const satisfies Record<string, { column: UsagePlace; label: string }>;

export type Place = keyof typeof PLACES;

/** Usable everywhere: the usage of an expression without a fetch restriction. */
export const EVERYWHERE = "Y".repeat(SAMPLE_USAGE_PLACES.length);

/** Where both usages allow (an ACL of several expressions may be used only where each of them may). */
export const bothUsable = (a: string, b: string) =>
  [...a].map((column, index) => (column === "Y" && b[index] === "Y" ? "Y" : ".")).join("");

/** Refuses `subject` (a fetch, an ACL) whose usage does not include `place`. */
export function usableIn(usage: string, place: Place, what: string, subject: string): void {
  const { column, label } = PLACES[place];
  if (usage[SAMPLE_USAGE_PLACES.indexOf(column)] !== "Y") {
    refuse(`${what}: ${subject} is not available in ${label} (HAProxy's "${column}")`);
  }
}

// ---- calls ----

export interface Call {
  name: string;
  /** The decoded arguments (quotes and escapes as HAProxy's make_arg_list reads them); null without parentheses. */
  args: string[] | null;
}

/** What HAProxy's make_arg_list takes after a backslash (outside single quotes); it keeps any other backslash. */
const ARGUMENT_ESCAPES: Readonly<Record<string, string>> = {
  "\\": "\\",
  '"': '"',
  "'": "'",
  " ": " ",
  r: "\r",
  n: "\n",
  t: "\t",
};

/** Reads one `(...)` argument list from text[start] (just after "("); returns the arguments and the end. */
function argumentList(text: string, start: number, what: string): { args: string[]; end: number } {
  const args: string[] = [];
  let current = "";
  let quoteChar = "";
  let i = start;
  for (;;) {
    const ch = text[i];
    if (ch === undefined) refuse(`${what}: ${quote(text)} has an unclosed "("`);
    i++;
    if (quoteChar === "'") {
      if (ch === "'") quoteChar = "";
      else current += ch;
    } else if (ch === "\\") {
      const next = text[i];
      if (next === undefined) refuse(`${what}: ${quote(text)} ends with a backslash`);
      if (Object.hasOwn(ARGUMENT_ESCAPES, next)) {
        current += ARGUMENT_ESCAPES[next];
        i++;
      } else current += ch;
    } else if (ch === '"') {
      quoteChar = quoteChar === '"' ? "" : '"';
    } else if (ch === "'" && quoteChar === "") {
      quoteChar = "'";
    } else if (quoteChar === '"') {
      current += ch;
    } else if (ch === ",") {
      args.push(current);
      current = "";
    } else if (ch === ")") {
      args.push(current);
      return { args, end: i };
    } else if (ch === "(" || ch === "[" || ch === "]") {
      refuse(`${what}: ${quote(text)}: write "${ch}" inside an argument in quotes`);
    } else {
      current += ch;
    }
  }
}

/** Splits `name(args),name(args)...` (HAProxy's sample expression) into its calls, arguments decoded. */
export function parseCalls(text: string, what: string): Call[] {
  const calls: Call[] = [];
  let i = 0;
  for (;;) {
    const name = /^[A-Za-z0-9_.+-]+/.exec(text.slice(i))?.[0];
    if (!name) refuse(`${what}: ${quote(text)} is not a sample expression`);
    i += name.length;
    let args: string[] | null = null;
    if (text[i] === "(") ({ args, end: i } = argumentList(text, i + 1, what));
    calls.push({ name, args });
    if (i === text.length) return calls;
    if (text[i] !== ",") refuse(`${what}: ${quote(text)} is not a sample expression`);
    i++;
  }
}

// ---- arguments ----

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

/** What each argument type must look like; a type not listed is one no tenant keyword takes. */
const ARGUMENT_TYPES: Partial<Record<ArgumentType, (value: string, what: string, args: string[]) => void>> = {
  integer: (value, what) => {
    if (!/^[+-]?[0-9]{1,18}$/.test(value)) refuse(`${what} must be an integer, not ${quote(value)}`);
  },
  string: () => {},
  // Only regsub takes a regex argument; with the g flag (its third) it runs it again from each match's end.
  regex: (value, what, args) => regex(value, what, (args[2] ?? "").includes("g")),
  "IPv4 address": (value, what) => {
    if (!ipaddr.IPv4.isValidFourPartDecimal(value) || /(^|\.)0[0-9]/.test(value))
      refuse(`${what} must be an IPv4 address, not ${quote(value)}`);
  },
  "IPv6 address": (value, what) => {
    if (value.includes("%") || !ipaddr.IPv6.isValid(value))
      refuse(`${what} must be an IPv6 address, not ${quote(value)}`);
  },
  "IPv4 mask": (value, what) => {
    if (!/^(3[0-2]|[12]?[0-9])$/.test(value))
      refuse(`${what} must be a prefix length from 0 to 32, not ${quote(value)}`);
  },
  "IPv6 mask": (value, what) => {
    if (!/^(12[0-8]|1[01][0-9]|[1-9]?[0-9])$/.test(value))
      refuse(`${what} must be a prefix length from 0 to 128, not ${quote(value)}`);
  },
};

/** Checks a call's arguments: their count and types (HAProxy's table), then their values (the policy). */
function checkArguments(
  call: Call,
  spec: Arguments,
  values: Record<number, (v: string, w: string) => void>,
  what: string,
) {
  const { name, args } = call;
  if (args !== null && spec.args.length === 0) refuse(`${what}: ${quote(name)} takes no arguments`);
  // Without parentheses HAProxy reads one empty argument where one is required: a string's is "" (json is json("")).
  const given = args ?? (spec.required > 0 && own(EMPTY_ALLOWED, name)?.includes(0) ? [""] : []);
  if (given.length > spec.args.length)
    refuse(`${what}: ${quote(name)} takes at most ${plural(spec.args.length, "argument")}, not ${given.length}`);
  if (given.length < spec.required) refuse(`${what}: ${quote(name)} needs ${plural(spec.required, "argument")}`);
  given.forEach((value, index) => {
    const subject = `${what}: argument ${index + 1} of ${quote(name)}`;
    if (DECODED_CONTROL.test(value)) refuse(`${subject} contains a control character`);
    if (/^\s*proc\./.test(value))
      refuse(`${what}: process-wide variables (proc.*) are shared between backends and not allowed`);
    if (value === "") {
      if (own(EMPTY_ALLOWED, name)?.includes(index)) return;
      refuse(`${subject} is empty`);
    }
    const type = spec.args[index];
    const check = ARGUMENT_TYPES[type];
    if (!check) refuse(`${subject} is of type ${type}, which a tenant may not give`);
    check(value, subject, given);
    values[index]?.(value, subject);
  });
}

// ---- expressions ----

/** A checked sample expression: the type it gives and where its fetch may be used. */
export interface Sample {
  type: SampleType;
  usage: string;
}

/**
 * Checks `fetch[,converter...]` whose first call reads the fetch `fetchName` (an ACL keyword reads another fetch than
 * its own name): policy, arguments, and each converter's input against the type before it, as HAProxy casts it; counts
 * one evaluation of it against the backend's sample work.
 */
export function sampleChain(calls: Call[], fetchName: string, what: string): Sample {
  const [first, ...converters] = calls;
  const fetch = ALLOWED_FETCHES.has(fetchName) ? own(SAMPLE_FETCH_KEYWORDS, fetchName) : undefined;
  if (!fetch) refuse(`${what}: ${quote(first.name)} is not an allowed sample fetch`);
  checkArguments(first, fetch, own(FETCH_VALUES, fetchName) ?? {}, what);
  let type = fetch.out;
  for (const call of converters) {
    const converter = ALLOWED_CONVERTERS.has(call.name) ? own(CONVERTER_KEYWORDS, call.name) : undefined;
    if (!converter) refuse(`${what}: ${quote(call.name)} is not an allowed converter`);
    checkArguments(call, converter, own(CONVERTER_VALUES, call.name) ?? {}, what);
    if (!SAMPLE_CASTS[type]?.includes(converter.input)) {
      refuse(
        `${what}: the converter ${quote(call.name)} reads type ${converter.input}, which HAProxy cannot cast ${type} to`,
      );
    }
    type = converter.out;
  }
  const overBudget = spendSampleWork(fetchWork(fetchName) + FETCH_WORK * converters.length);
  if (overBudget) refuse(`${what}: ${quote(first.name)}: ${overBudget}`);
  return { type, usage: fetch.usage };
}

/** Checks `fetch[,converter...]`. */
export function sampleExpression(text: string, what: string): Sample {
  const calls = parseCalls(text, what);
  return sampleChain(calls, calls[0].name, what);
}

/** Checks a sample expression used in `place`. */
export function sampleIn(text: string, place: Place, what: string): Sample {
  const calls = parseCalls(text, what);
  const sample = sampleChain(calls, calls[0].name, what);
  usableIn(sample.usage, place, what, quote(calls[0].name));
  return sample;
}

// ---- log-format ----

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

/** Checks a log-format string (`%[expression]`, `%var`, `%%`) whose samples are evaluated in `place`. */
export function logFormat(text: string | undefined, what: string, place: Place): void {
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
      // HAProxy ends the expression at the first "]", quoted or not.
      const end = text.indexOf("]", i);
      if (end < 0) refuse(`${what}: "%[" without "]" in ${quote(text)}`);
      sampleIn(text.slice(i + 1, end), place, what);
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
