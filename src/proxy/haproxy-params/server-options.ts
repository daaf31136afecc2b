// Server options of container links and default-server lines.
import { FILE_KEYWORDS, type ServerDefaults, type TlsBounds } from "./tokenizer";
import { HOST_NAME, TOKEN, integer, matching, oneOf, own, quote, refuse, time } from "./values";
import { sampleIn } from "./samples";

type ServerOption = (words: string[], i: number, what: string) => number;

export const flag: ServerOption = (_words, i) => i + 1;
const withValue =
  (check: (word: string | undefined, what: string) => void): ServerOption =>
  (words, i, what) => {
    check(words[i + 1], `${what} ${words[i]}`);
    return i + 2;
  };
const count = (min: number, max: number) => withValue((word, what) => void integer(word, what, min, max));
const timeValue = withValue((word, what) => time(word, what));
const choice = (...allowed: string[]) => withValue((word, what) => void oneOf(word, what, allowed));
/** HAProxy's TLS versions, oldest first. */
const TLS_VERSIONS = ["TLSv1.0", "TLSv1.1", "TLSv1.2", "TLSv1.3"];
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
  "ssl-min-ver": choice(...TLS_VERSIONS),
  "ssl-max-ver": choice(...TLS_VERSIONS),
  // The system's CA bundle (public certificates) is the one file a tenant may name: HAProxy's @system-ca.
  "ca-file": choice("@system-ca"),
  cookie: withValue((word, what) => void matching(word, what, TOKEN, "letters, digits, '.', '_' or '-'")),
  // Printable text only, like every word (HAProxy has no hexadecimal form of it): an agent that waits for a line end
  // before answering cannot be used; most agents answer on connection.
  "agent-send": withValue((word, what) => void matching(word, what, /^[\x20-\x7e]{1,200}$/, "printable text")),
  verifyhost: withValue((word, what) => void matching(word, what, HOST_NAME, "a host name")),
  "check-sni": withValue((word, what) => void matching(word, what, HOST_NAME, "a host name")),
  sni: withValue((word, what) => {
    if (word === undefined) refuse(`${what} needs a sample expression`);
    sampleIn(word, "server", what);
  }),
  alpn: withValue(
    (word, what) => void matching(word, what, ALPN, "a comma-separated list of protocols such as h2,http/1.1"),
  ),
  "check-alpn": withValue(
    (word, what) => void matching(word, what, ALPN, "a comma-separated list of protocols such as h2,http/1.1"),
  ),
};

/**
 * Checks server options (after `default-server`, or a container link's params) from words[start]; answers each
 * option's value (the word after it, for an option that takes one), by name. Values are read where each option
 * stands: the same word may also be the value of another option (`agent-send verify`).
 */
export function serverOptions(words: string[], start: number, what: string): Map<string, string | undefined> {
  const seen = new Map<string, string | undefined>();
  let i = start;
  while (i < words.length) {
    const name = words[i];
    const option = own(SERVER_OPTIONS, name);
    if (!option) {
      if (FILE_KEYWORDS.has(name)) refuse(`${quote(name)} would read a file`);
      refuse(`${quote(name)} is not an allowed server option`);
    }
    if (seen.has(name)) refuse(`${what}: ${name} is given twice`);
    const next = option(words, i, what);
    seen.set(name, next > i + 1 ? words[i + 1] : undefined);
    i = next;
  }
  if ((seen.has("ssl") || seen.has("check-ssl")) && !seen.has("verify")) {
    refuse(`${what}: ssl needs "verify none" or "verify required ca-file @system-ca" (there is no other CA file)`);
  }
  if (seen.get("verify") === "required" && !seen.has("ca-file"))
    refuse(`${what}: verify required needs ca-file @system-ca`);
  if (seen.has("agent-check") && !seen.has("agent-port")) refuse(`${what}: agent-check needs agent-port`);
  return seen;
}

/**
 * The TLS versions a server line (or a default-server line) leaves in force, given those it inherits (`from` says
 * where they come from). A minimum above the maximum is refused: HAProxy disables every version and refuses each server
 * using ssl or check-ssl ("all SSL/TLS versions are disabled"), and with it the whole file. It is refused without
 * ssl too, or a later line adding ssl would break every server at once.
 */
export function tlsBounds(
  options: ReadonlyMap<string, string | undefined>,
  inherited: TlsBounds,
  what: string,
  from: string,
): TlsBounds {
  const own = { min: options.get("ssl-min-ver"), max: options.get("ssl-max-ver") };
  const min = own.min ?? inherited.min;
  const max = own.max ?? inherited.max;
  if (min !== undefined && max !== undefined && TLS_VERSIONS.indexOf(min) > TLS_VERSIONS.indexOf(max)) {
    const origin = (value: string | undefined) => (value === undefined ? ` ${from}` : "");
    refuse(
      `${what}: ssl-min-ver ${min}${origin(own.min)} is above ssl-max-ver ${max}${origin(own.max)} ` +
        "(HAProxy would disable every TLS version)",
    );
  }
  return { ...(min !== undefined && { min }), ...(max !== undefined && { max }) };
}

/**
 * Refuses check-alpn on a server when its backend's default-server sets it too. HAProxy 2.6 gives every server the
 * default-server's check-alpn by pointer, not by copy, and a server's own check-alpn frees it: the next such server
 * frees it again. `haproxy -c` then says the file is valid and aborts (malloc_consolidate(): invalid chunk size), with
 * no ALERT naming the backend (checked-bundle.ts traces such a refusal, one check per halving); a later server without
 * its own would send freed memory.
 */
export function checkAlpnOnce(options: ReadonlyMap<string, string | undefined>, inherited: ServerDefaults): void {
  if (inherited.checkAlpn && options.has("check-alpn")) {
    refuse(
      "server: check-alpn is set by the backend's default-server already; set it in one place " +
        "(HAProxy 2.6 frees the shared value once per server setting it again, and crashes)",
    );
  }
}
