// The tenant policy on sample expressions: which fetches and converters a tenant may name (a deliberate choice: none
// reads a file, a map, a table, the environment, Lua or another backend's state), and the values HAProxy checks itself
// after parsing an argument's type (its val_args functions), which the generated table cannot say.
import { quote, refuse } from "./values";

/** Sample fetches a tenant may use: the connection, the request or response, constants and scoped variables. */
export const ALLOWED_FETCHES: ReadonlySet<string> = new Set([
  "src",
  "src_port",
  "dst",
  "dst_port",
  "ssl_fc",
  "ssl_fc_sni",
  "ssl_fc_protocol",
  "method",
  "var",
  "str",
  "int",
  "bool",
  "ipv4",
  "ipv6",
  "always_true",
  "always_false",
  "date",
  "rand",
  "uuid",
  "be_name",
  "be_id",
  "fe_name",
  "path",
  "pathq",
  "query",
  "url",
  "base",
  "req.ver",
  "req.hdr",
  "req.fhdr",
  "req.hdr_cnt",
  "hdr",
  "hdr_cnt",
  "hdr_val",
  "hdr_ip",
  "req.cook",
  "req.cook_cnt",
  "cook",
  "cook_cnt",
  "url_param",
  "urlp",
  "urlp_val",
  "status",
  "res.ver",
  "res.hdr",
  "res.fhdr",
  "res.hdr_cnt",
  "shdr",
  "res.cook",
  "scook",
]);

/** Converters a tenant may use: pure functions of their input and arguments. */
export const ALLOWED_CONVERTERS: ReadonlySet<string> = new Set([
  "lower",
  "upper",
  "field",
  "word",
  "regsub",
  "bytes",
  "length",
  "base64",
  "b64dec",
  "hex",
  "url_dec",
  "url_enc",
  "json",
  "ipmask",
  "concat",
  "strcmp",
  "add",
  "sub",
  "mul",
  "div",
  "mod",
  "and",
  "or",
  "xor",
  "neg",
  "cpl",
  "bool",
  "not",
  "odd",
  "even",
  "sdbm",
  "djb2",
  "crc32",
  "wt6",
  "xxh32",
  "xxh64",
  "sha1",
  "sha2",
  "digest",
  "ltime",
  "utime",
  "http_date",
  "ltrim",
  "rtrim",
  "cut_crlf",
  "host_only",
  "port_only",
]);

/** Variable scopes a tenant may use: proc.* is shared by every backend of the load balancer. */
export const VARIABLE = /^(txn|req|res|sess|check)\.[A-Za-z0-9_.]{1,64}$/;

/** Checks one argument's value; `what` names it ("...: argument 2 of \"hdr\""). */
type ValueCheck = (value: string, what: string) => void;

const variable: ValueCheck = (value, what) => {
  if (!VARIABLE.test(value))
    refuse(`${what} must be a variable of the txn, req, res, sess or check scope, not ${quote(value)}`);
};
const oneOf =
  (...allowed: string[]): ValueCheck =>
  (value, what) => {
    if (!allowed.includes(value)) refuse(`${what} must be one of ${allowed.join(", ")}, not ${quote(value)}`);
  };
const integerOrVariable: ValueCheck = (value, what) => {
  if (!/^[+-]?[0-9]{1,18}$/.test(value) && !VARIABLE.test(value))
    refuse(`${what} must be an integer or a variable of the txn, req, res, sess or check scope, not ${quote(value)}`);
};
const atLeast =
  (min: number, why: string): ValueCheck =>
  (value, what) => {
    if (Number(value) < min) refuse(`${what} must be at least ${min} (${why}), not ${quote(value)}`);
  };
const notZero: ValueCheck = (value, what) => {
  if (Number(value) === 0) refuse(`${what} counts from 1 (or from -1 at the end), not 0`);
};
const notEmpty: ValueCheck = (value, what) => {
  if (value === "") refuse(`${what} is empty`);
};
const timeUnit = oneOf("s", "ms", "us");
/** strftime's %n and %t write a line feed and a tab. */
const timeFormat: ValueCheck = (value, what) => {
  if (/%[EO]?[nt]/.test(value)) refuse(`${what}: %n and %t would write control characters`);
};
/** HAProxy's MAX_HDR_HISTORY: a header occurrence counts back at most 10 from the last. */
const occurrence = atLeast(-10, "HAProxy keeps the last 10 occurrences");
const HEADER = { 1: occurrence };

/**
 * Per keyword, the checks of argument values after their type (by position): HAProxy's own val_args checks, and the
 * variables a tenant may name. A position not listed takes any value of its type.
 */
export const FETCH_VALUES: Readonly<Record<string, Readonly<Record<number, ValueCheck>>>> = {
  var: { 0: variable },
  bool: { 0: (value, what) => oneOf("true", "false", "1", "0")(value.toLowerCase(), what) },
  date: { 1: timeUnit },
  uuid: { 0: oneOf("4") },
  "req.hdr": HEADER,
  "req.fhdr": HEADER,
  hdr: HEADER,
  hdr_val: HEADER,
  hdr_ip: HEADER,
  "res.hdr": HEADER,
  "res.fhdr": HEADER,
  shdr: HEADER,
};

export const CONVERTER_VALUES: Readonly<Record<string, Readonly<Record<number, ValueCheck>>>> = {
  field: { 0: notZero, 1: notEmpty },
  word: { 0: notZero, 1: notEmpty },
  regsub: { 2: (value, what) => void (/^[ig]*$/.test(value) || refuse(`${what} takes only the flags i and g`)) },
  url_enc: { 0: oneOf("query") },
  json: { 0: oneOf("ascii", "utf8", "utf8s", "utf8p", "utf8ps") },
  concat: { 1: (value, what) => value === "" || variable(value, what) },
  strcmp: { 0: variable },
  add: { 0: integerOrVariable },
  sub: { 0: integerOrVariable },
  mul: { 0: integerOrVariable },
  div: { 0: integerOrVariable },
  mod: { 0: integerOrVariable },
  and: { 0: integerOrVariable },
  or: { 0: integerOrVariable },
  xor: { 0: integerOrVariable },
  sha2: { 0: oneOf("224", "256", "384", "512") },
  // OpenSSL message digests every OpenSSL that HAProxy 2.6 builds with has.
  digest: { 0: oneOf("md5", "sha1", "sha224", "sha256", "sha384", "sha512") },
  ltime: { 0: timeFormat },
  utime: { 0: timeFormat },
  http_date: { 1: timeUnit },
};

/**
 * Positions where an empty string is a value HAProxy gives a meaning (concat's prefix, variable and suffix; json's and
 * url_enc's default); elsewhere it is refused.
 */
export const EMPTY_ALLOWED: Readonly<Record<string, readonly number[]>> = {
  concat: [0, 1, 2],
  json: [0],
  url_enc: [0],
};
