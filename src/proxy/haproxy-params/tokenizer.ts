// Limits, the keyword sets and the tokeniser: one params line read the way HAProxy 2.6's parser reads it.
import type { Result } from "../../shared/result";

/** Most lines one backend's params may have. */
export const MAX_PARAMS_LINES = 200;
/** Longest params line, in characters. */
export const MAX_LINE_LENGTH = 2000;
/**
 * Most words on one line: HAProxy 2.6 (MAX_LINE_ARGS) refuses a line of more than 64, and counts a blank after the
 * last word as the start of one more, so a line is written without its trailing blanks and comment.
 */
export const MAX_WORDS = 64;
/** Most words of a container link's params: the generated `server <name> [<address>]:<port>` takes three of the 64. */
export const MAX_SERVER_WORDS = MAX_WORDS - 3;

/** Why a params text was refused: the 1-based line, its text and the reason. */
export interface ParamsProblem {
  line: number;
  text: string;
  reason: string;
}

export type ParamsResult<T> = Result<T, ParamsProblem>;

/** The TLS versions (ssl-min-ver, ssl-max-ver) a server line or a backend's default-server lines set, where set. */
export interface TlsBounds {
  min?: string;
  max?: string;
}

/**
 * The TLS settings a backend's default-server lines set that vet its servers' own: the versions, and whether they set
 * check-alpn (HAProxy 2.6 shares that value with every server, and a server setting it again frees it: see
 * checkAlpnOnce in server-options.ts).
 */
export interface ServerDefaults extends TlsBounds {
  checkAlpn?: true;
}

/**
 * Backend params that passed: the lines to write into the backend section, whether `_maintenance` was given, and the
 * TLS settings its default-server lines set, which every server of the backend inherits.
 */
export interface BackendParams {
  lines: string[];
  maintenance: boolean;
  serverTls: ServerDefaults;
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

/**
 * One line as HAProxy splits it: the decoded words, the comment that ended it, if any, and where the last word ends
 * (`line.slice(0, end)` is the line without its trailing blanks and comment, the words unchanged).
 */
export interface TokenizedLine {
  words: string[];
  comment: string | null;
  end: number;
}

export type TokenizeResult = Result<TokenizedLine, string>;

const isBlank = (ch: string) => ch === " " || ch === "\t";
const HEX = /^[0-9a-fA-F]{2}$/;
const ENV_NAME_START = /[A-Za-z_.{]/;
/** C0 controls but tab (a blank between words), DEL and the C1 controls: refused anywhere in a line. */
export const CONTROL = /[\x00-\x08\x0a-\x1f\x7f-\x9f]/;
/**
 * Control characters no decoded word may hold, however written (`\r`, `\n`, `\t`, `\xHH`, a tab inside quotes): HAProxy
 * writes such bytes raw into headers, health checks and agent strings (response splitting).
 */
export const DECODED_CONTROL = /[\x00-\x1f\x7f-\x9f]/;

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
  let end = 0;
  const fail = (error: string): TokenizeResult => ({ ok: false, error });
  while (i < line.length) {
    const ch = line[i];
    if (!squote && !dquote && isBlank(ch)) {
      if (word !== null) {
        words.push(word);
        end = i;
      }
      word = null;
      i++;
      continue;
    }
    if (ch === "#" && !squote && !dquote) {
      if (word !== null) {
        words.push(word);
        end = i;
      }
      return { ok: true, value: { words, comment: line.slice(i), end } };
    }
    word ??= "";
    if (ch === '"' && !squote) {
      dquote = !dquote;
      i++;
    } else if (ch === "'" && !dquote) {
      squote = !squote;
      i++;
    } else if (ch === "\\" && !squote) {
      const escape = readEscape(line, i, dquote);
      if ("error" in escape) return fail(escape.error);
      word += escape.text;
      i += escape.width;
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
  if (word !== null) {
    words.push(word);
    end = line.length;
  }
  return { ok: true, value: { words, comment: null, end } };
}

type Escape = { text: string; width: number } | { error: string };

/** Reads the backslash escape at `i` (outside single quotes) as HAProxy's parse_line() does. */
function readEscape(line: string, i: number, dquote: boolean): Escape {
  const next = line[i + 1];
  if (next === undefined) return { error: "a trailing backslash is not a line continuation in HAProxy" };
  if (next === " " || next === "\\" || next === "#" || next === "'" || next === '"') return { text: next, width: 2 };
  if (next === "t" || next === "n" || next === "r")
    return { text: next === "t" ? "\t" : next === "n" ? "\n" : "\r", width: 2 };
  if (next === "$" && dquote) return { text: "$", width: 2 };
  if (next !== "x") return { text: "\\", width: 1 };
  const hex = line.slice(i + 2, i + 4);
  if (!HEX.test(hex)) return { error: '"\\x" must be followed by two hexadecimal digits' };
  const decoded = String.fromCharCode(parseInt(hex, 16));
  if (DECODED_CONTROL.test(decoded)) return { error: `"\\x${hex}" makes a control character` };
  return { text: decoded, width: 4 };
}
