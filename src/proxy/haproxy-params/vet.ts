// Vetting whole params texts: backend params and container link params, line by line, and the problem's wording.
import {
  BackendParams,
  CONTROL,
  DECODED_CONTROL,
  FILE_KEYWORDS,
  MAX_LINE_LENGTH,
  MAX_PARAMS_LINES,
  MAX_SERVER_WORDS,
  MAX_WORDS,
  ParamsProblem,
  ParamsResult,
  SECTION_KEYWORDS,
  type ServerDefaults,
  tokenizeLine,
} from "./tokenizer";
import { Refusal, own, quote, refuse } from "./values";
import { BackendState } from "./conditions";
import { checkAlpnOnce, serverOptions, tlsBounds } from "./server-options";
import { BACKEND_DIRECTIVES, NEVER_EXTRA, extraArguments, option } from "./directives";
import { withRegexBudget } from "./regex-cost";
import { withSampleBudget } from "./sample-cost";

const isBlank = (code: number) => code === 0x20 || code === 0x09;

/**
 * The line without its leading and trailing spaces and tabs. A loop, not `/^[ \t]+|[ \t]+$/g`: that regex retries its
 * trailing branch at every blank of a line, so blanks followed by a word cost time quadratic in the line's length,
 * and this runs before any length check.
 */
export function trimBlanks(line: string): string {
  let start = 0;
  let end = line.length;
  while (start < end && isBlank(line.charCodeAt(start))) start++;
  while (end > start && isBlank(line.charCodeAt(end - 1))) end--;
  return line.slice(start, end);
}

/** Splits params text into lines (LF or CRLF), each without its surrounding blanks. */
function splitLines(params: string): string[] {
  return params.split(/\r?\n/).map(trimBlanks);
}

function lineProblem(line: string): string | undefined {
  if (line.length > MAX_LINE_LENGTH) return `longer than ${MAX_LINE_LENGTH} characters`;
  if (CONTROL.test(line)) return "contains a control character";
  return undefined;
}

/**
 * The words of a line, and the line as it is written: without its comment and trailing blanks, which HAProxy would
 * count as one more word (a line of 64 words and ` # comment` is "too many words" to HAProxy 2.6).
 */
function tokenized(line: string): { words: string[]; written: string } {
  const problem = lineProblem(line);
  if (problem) refuse(problem);
  const result = tokenizeLine(line);
  if (!result.ok) refuse(result.error);
  return { words: result.value.words, written: line.slice(0, result.value.end) };
}

/**
 * Checks every decoded word of a line: no empty word (HAProxy would stop reading the arguments there), no environment
 * expansion, no word that makes HAProxy read a file (ca-file only as @system-ca), and no control character, however
 * written: HAProxy writes a word's bytes raw into headers, replies, health checks and agent strings, so a CR or LF
 * would split a response. Binary health-check data has HAProxy's hexadecimal forms (tcp-check send-binary, expect
 * binary).
 */
function checkWords(words: string[]): void {
  words.forEach((word, index) => {
    if (word === "") refuse('an empty word ("") is not allowed');
    if (/\$[A-Za-z_.{]/.test(word)) refuse("environment expansion (${NAME} or $NAME) is not allowed");
    if (DECODED_CONTROL.test(word)) refuse(`${quote(word)} contains a control character`);
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
  return withRegexBudget(() => withSampleBudget(() => vetBackendLines(params, extraDirectives)));
}

function vetBackendLines(
  params: string | null | undefined,
  extraDirectives: readonly string[],
): ParamsResult<BackendParams> {
  const lines = splitLines(params ?? "");
  if (lines.length > MAX_PARAMS_LINES) {
    return problem(MAX_PARAMS_LINES + 1, lines[MAX_PARAMS_LINES], `more than ${MAX_PARAMS_LINES} lines`);
  }
  const extra = new Set(extraDirectives);
  const state: BackendState = {
    acls: new Map(),
    aclCosts: new Map(),
    checks: "none",
    steps: [],
    final: {},
    serverTls: {},
  };
  const kept: string[] = [];
  let maintenance = false;
  for (const [index, line] of lines.entries()) {
    try {
      const { words, written } = tokenized(line);
      if (words.length === 0) continue;
      if (words.length > MAX_WORDS) refuse(`more than ${MAX_WORDS} words (HAProxy's limit)`);
      if (backendLine(words, state, extra) === "maintenance") maintenance = true;
      else kept.push(written);
    } catch (error) {
      if (error instanceof Refusal) return problem(index + 1, line, error.reason);
      throw error;
    }
  }
  return { ok: true, value: { lines: kept, maintenance, serverTls: state.serverTls } };
}

/**
 * Vets the params of a container link: one line of allow-listed server options, returned as it will be written
 * (without its comment), after the three words of `server <name> [<address>]:<port>`. `backend`, the vetted params of
 * the server's backend where known, gives what its default-server lines set, which the server inherits (TLS versions
 * that must overlap, a check-alpn the server may not set again).
 */
export function vetServerParams(
  params: string | null | undefined,
  backend?: Pick<BackendParams, "serverTls">,
): ParamsResult<string> {
  return withRegexBudget(() => withSampleBudget(() => vetServerLine(params, backend?.serverTls ?? {})));
}

function vetServerLine(params: string | null | undefined, inherited: ServerDefaults): ParamsResult<string> {
  const lines = splitLines(params ?? "");
  const used = lines.map((line, index) => ({ line, index })).filter(({ line }) => line !== "");
  if (used.length > 1) return problem(used[1].index + 1, used[1].line, "server params must be one line");
  if (used.length === 0) return { ok: true, value: "" };
  const { line, index } = used[0];
  try {
    const { words, written } = tokenized(line);
    if (words.length === 0) return { ok: true, value: "" };
    if (words.length > MAX_SERVER_WORDS) {
      refuse(`more than ${MAX_SERVER_WORDS} words (HAProxy's limit of ${MAX_WORDS}, with "server <name> <address>")`);
    }
    checkWords(words);
    const options = serverOptions(words, 0, "server");
    tlsBounds(options, inherited, "server", "of the backend's default-server");
    checkAlpnOnce(options, inherited);
    netCheck(words);
    return { ok: true, value: written };
  } catch (error) {
    if (error instanceof Refusal) return problem(index + 1, line, error.reason);
    throw error;
  }
}

/** "params line 2: ..." for an API error. */
export const describeProblem = (field: string, error: ParamsProblem) => `${field} line ${error.line}: ${error.reason}`;
