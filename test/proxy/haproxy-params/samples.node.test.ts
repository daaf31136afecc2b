// Sample expressions against HAProxy's generated keyword table (plain Node): the tenant policy names only keywords
// HAProxy has, and the vetter refuses what HAProxy 2.6 would refuse: argument counts and types, converter chains it
// cannot cast, fetches used where HAProxy cannot evaluate them, and the values its keywords check themselves.
import { describe, expect, it } from "vitest";
import { vetBackendParams, vetServerParams } from "../../../src/proxy/haproxy-params/index";
import { PREDEFINED_ACLS, allowedAclKeywords, predefinedUsage } from "../../../src/proxy/haproxy-params/conditions";
import {
  ACL_KEYWORD_TABLE,
  CONVERTER_KEYWORDS,
  HAPROXY_KEYWORDS_VERSION,
  SAMPLE_CASTS,
  SAMPLE_FETCH_KEYWORDS,
  SAMPLE_USAGE_PLACES,
} from "../../../src/proxy/haproxy-params/haproxy-keywords";
import {
  ALLOWED_CONVERTERS,
  ALLOWED_FETCHES,
  CONVERTER_VALUES,
  EMPTY_ALLOWED,
  FETCH_VALUES,
} from "../../../src/proxy/haproxy-params/sample-policy";
import { PLACES } from "../../../src/proxy/haproxy-params/samples";
import { reason } from "../../support/proxy-params";

const header = (sample: string) => reason(`http-request set-header X %[${sample}]`);
const VALUE = "http-request set-header: the value";

describe("the tenant policy against HAProxy's keyword table", () => {
  it("was generated from HAProxy 2.6", () => {
    expect(HAPROXY_KEYWORDS_VERSION).toMatch(/^2\.6\./);
  });

  it("names only fetches, converters and ACL keywords HAProxy has", () => {
    expect([...ALLOWED_FETCHES].filter((name) => !Object.hasOwn(SAMPLE_FETCH_KEYWORDS, name))).toEqual([]);
    expect([...ALLOWED_CONVERTERS].filter((name) => !Object.hasOwn(CONVERTER_KEYWORDS, name))).toEqual([]);
    expect(Object.keys(FETCH_VALUES).filter((name) => !ALLOWED_FETCHES.has(name))).toEqual([]);
    expect(Object.keys(CONVERTER_VALUES).filter((name) => !ALLOWED_CONVERTERS.has(name))).toEqual([]);
    expect(Object.keys(EMPTY_ALLOWED).filter((name) => !ALLOWED_CONVERTERS.has(name))).toEqual([]);
    // An empty argument is allowed only where HAProxy takes a string.
    for (const [name, positions] of Object.entries(EMPTY_ALLOWED)) {
      for (const index of positions) expect([name, CONVERTER_KEYWORDS[name].args[index]]).toEqual([name, "string"]);
    }
    expect(allowedAclKeywords().every((name) => ALLOWED_FETCHES.has(ACL_KEYWORD_TABLE[name].fetch))).toBe(true);
    expect(allowedAclKeywords()).toContain("hdr_beg");
    expect(allowedAclKeywords()).not.toContain("req_ssl_sni");
  });

  it("checks only argument positions each keyword has", () => {
    const positions = (
      table: Record<string, Record<number, unknown>>,
      keywords: Record<string, { args: readonly unknown[] }>,
    ) =>
      Object.entries(table).flatMap(([name, checks]) =>
        Object.keys(checks)
          .map(Number)
          .filter((index) => index >= keywords[name].args.length)
          .map((index) => `${name}:${index}`),
      );
    expect(positions(FETCH_VALUES, SAMPLE_FETCH_KEYWORDS)).toEqual([]);
    expect(positions(CONVERTER_VALUES, CONVERTER_KEYWORDS)).toEqual([]);
  });

  it("maps each place of use to a usage column of the table, and each predefined ACL to a fetch", () => {
    for (const { column } of Object.values(PLACES)) expect(SAMPLE_USAGE_PLACES).toContain(column);
    expect(Object.keys(PREDEFINED_ACLS).filter((name) => predefinedUsage(name) === undefined)).toEqual([]);
    // Every type a fetch gives has its casts probed (addr comes only from map converters, which no tenant uses).
    const types = new Set(Object.values(SAMPLE_FETCH_KEYWORDS).map((fetch) => fetch.out));
    expect([...types].filter((type) => SAMPLE_CASTS[type] === undefined)).toEqual([]);
  });
});

describe("sample expressions (issue 27)", () => {
  it.each([
    ["int(x)", `${VALUE}: argument 1 of "int" must be an integer, not "x"`],
    ["ipv4(x)", `${VALUE}: argument 1 of "ipv4" must be an IPv4 address, not "x"`],
    ["hdr(a,b,c)", `${VALUE}: "hdr" takes at most 2 arguments, not 3`],
    ["var(txn.x,a,b)", `${VALUE}: "var" takes at most 2 arguments, not 3`],
    ["hdr(a,b)", `${VALUE}: argument 2 of "hdr" must be an integer, not "b"`],
    ["int", `${VALUE}: "int" needs 1 argument`],
    ["str(a),field", `${VALUE}: "field" needs 2 arguments`],
    ["ipv6(fe80::1%eth0)", `${VALUE}: argument 1 of "ipv6" must be an IPv6 address, not "fe80::1%eth0"`],
    ["ipv4(010.0.0.1)", `${VALUE}: argument 1 of "ipv4" must be an IPv4 address, not "010.0.0.1"`],
    ["src,ipmask(33)", `${VALUE}: argument 1 of "ipmask" must be a prefix length from 0 to 32, not "33"`],
    ["path()", `${VALUE}: "path" takes no arguments`],
    ["str()", `${VALUE}: argument 1 of "str" is empty`],
    ["str(a\\,b)", `${VALUE}: "str" takes at most 1 argument, not 2`],
    ["str(a),lower(x)", `${VALUE}: "lower" takes no arguments`],
    ["str(a\\\\r\\\\nX:1)", `${VALUE}: argument 1 of "str" contains a control character`],
    ["method,neg", `${VALUE}: the converter "neg" reads type sint, which HAProxy cannot cast meth to`],
    ["path,sha1,ipmask(24)", `${VALUE}: the converter "ipmask" reads type addr, which HAProxy cannot cast bin to`],
    ["str(a),json(x)", `${VALUE}: argument 1 of "json" must be one of ascii, utf8, utf8s, utf8p, utf8ps, not "x"`],
    ["path,sha2(100)", `${VALUE}: argument 1 of "sha2" must be one of 224, 256, 384, 512, not "100"`],
    [
      "path,digest(whirlpool)",
      `${VALUE}: argument 1 of "digest" must be one of md5, sha1, sha224, sha256, sha384, sha512, not "whirlpool"`,
    ],
    ["path,field(0,/)", `${VALUE}: argument 1 of "field" counts from 1 (or from -1 at the end), not 0`],
    ["uuid(3)", `${VALUE}: argument 1 of "uuid" must be one of 4, not "3"`],
    ["date(0,h)", `${VALUE}: argument 2 of "date" must be one of s, ms, us, not "h"`],
    ["bool(yes)", `${VALUE}: argument 1 of "bool" must be one of true, false, 1, 0, not "yes"`],
    [
      "hdr(host,-11)",
      `${VALUE}: argument 2 of "hdr" must be at least -10 (HAProxy keeps the last 10 occurrences), not "-11"`,
    ],
    ["path,regsub(a,b,x)", `${VALUE}: argument 3 of "regsub" takes only the flags i and g`],
    ["date,ltime(%Y%n)", `${VALUE}: argument 1 of "ltime": %n and %t would write control characters`],
    ["path,url_enc(x)", `${VALUE}: argument 1 of "url_enc" must be one of query, not "x"`],
    [
      "path,concat(a,b,c)",
      `${VALUE}: argument 2 of "concat" must be a variable of the txn, req, res, sess or check scope, not "b"`,
    ],
    [
      "int(1),add(x)",
      `${VALUE}: argument 1 of "add" must be an integer or a variable of the txn, req, res, sess or check scope, not "x"`,
    ],
    ["str(a),strcmp(proc.x)", `${VALUE}: process-wide variables (proc.*) are shared between backends and not allowed`],
    ["path,map(x)", `${VALUE}: "map" is not an allowed converter`],
    ["req.payload(0,1)", `${VALUE}: "req.payload" is not an allowed sample fetch`],
  ])("refuses %%[%s]", (sample, expected) => {
    expect(header(sample)).toBe(expected);
  });

  it.each([
    "hdr(host,-1)",
    "hdr",
    "path,concat(,txn.x,)",
    "int(-3),add(txn.n),mul(+2)",
    "src,ipmask(24,64)",
    "ipv6(::ffff:10.0.0.1)",
    "date(-60,ms),http_date(0,ms)",
    "path,regsub(^/a,/b,gi)",
    "path,sha1,hex",
    "str(a),json(utf8s)",
    "bool(TRUE)",
    "hdr_val(content-length)",
    // Without parentheses HAProxy gives a required string argument the value "", which json and url_enc take.
    "str(a),json",
    "path,url_enc",
    "urlp_val(id)",
  ])("accepts %%[%s]", (sample) => {
    expect(header(sample)).toBeUndefined();
  });
});

describe("sample arguments as HAProxy's make_arg_list reads them", () => {
  it("reads their quotes and escapes after the line's own", () => {
    // The line's quotes go first: inside double quotes, single quotes and escaped double quotes reach the argument.
    expect(reason(`http-request set-header X "%[str('a,b')]"`)).toBeUndefined();
    expect(reason('http-request set-header X "%[str(\\"a)b\\")]"')).toBeUndefined();
    expect(reason("http-request set-header X %[str('a,b')]")).toBe(`${VALUE}: "str" takes at most 1 argument, not 2`);
    // HAProxy ends a log-format expression at the first "]", quoted or not.
    expect(reason(`http-request set-header X "%[str('a]b')]"`)).toBe(`${VALUE}: "str('a" has an unclosed "("`);
    expect(reason("http-request set-header X %[str(a(b))]")).toBe(
      `${VALUE}: "str(a(b))": write "(" inside an argument in quotes`,
    );
  });
});

describe("where samples are used (issue 27)", () => {
  const check = 'HAProxy\'s "backend tcp-check rule"';
  it.each([
    [
      "option httpchk\nhttp-check send hdr x-a %[req.hdr(host)]",
      `http-check send hdr x-a: "req.hdr" is not available in a health check rule (${check})`,
    ],
    [
      "option tcp-check\ntcp-check set-var(check.x) req.hdr(host)",
      `tcp-check set-var(check.x): "req.hdr" is not available in a health check rule (${check})`,
    ],
    [
      "option httpchk\nhttp-check set-var(check.x) path",
      `http-check set-var(check.x): "path" is not available in a health check rule (${check})`,
    ],
    [
      "acl a shdr(server) x\nhttp-request deny if a",
      'http-request deny: ACL a is not available in an http-request rule (HAProxy\'s "backend http-request header rule")',
    ],
    [
      "acl a path /x\nacl a status 500\nhttp-response deny if a",
      'http-response deny: ACL a is not available in an http-response rule (HAProxy\'s "backend http-response header rule")',
    ],
    [
      "http-response deny if HTTP_1.1",
      'http-response deny: ACL HTTP_1.1 is not available in an http-response rule (HAProxy\'s "backend http-response header rule")',
    ],
    [
      "http-request deny if { status 500 }",
      'http-request deny: the anonymous ACL "status" is not available in an http-request rule (HAProxy\'s "backend http-request header rule")',
    ],
    [
      "http-request return status 200 content-type text/plain lf-string %[status]",
      'http-request return: lf-string: "status" is not available in an http-request rule (HAProxy\'s "backend http-request header rule")',
    ],
  ])("refuses %j", (params, expected) => {
    expect(reason(params)).toBe(expected);
  });

  it("takes in a server's sni only what HAProxy can read when it connects", () => {
    expect(vetServerParams("ssl verify none sni status")).toEqual({
      ok: false,
      error: {
        line: 1,
        text: "ssl verify none sni status",
        reason: 'server sni: "status" is not available in a server\'s sni (HAProxy\'s "server source selection")',
      },
    });
    expect(vetServerParams("ssl verify none sni req.hdr(host),lower").ok).toBe(true);
  });

  it.each([
    "option httpchk\nhttp-check send hdr x-a %[str(a)] hdr x-b %[var(check.x)]",
    "option tcp-check\ntcp-check set-var(check.x) str(a),lower",
    "acl a method GET\nhttp-response deny if a",
    "http-response set-header X-M %[method]",
    "acl a hdr(host),lower -m end .example.org\nhttp-request deny if a",
    "acl a hdr_val(content-length) gt 10\nhttp-request deny if a HTTP_CONTENT",
    "acl a var(txn.x) -m found\nhttp-request deny if a",
  ])("accepts %j", (params) => {
    expect(reason(params)).toBeUndefined();
  });
});

describe("ACL matching as HAProxy reads it", () => {
  it.each([
    [
      "http-response redirect prefix /x",
      'http-response redirect: the redirect type must be one of location, not "prefix"',
    ],
    ["acl a var(txn.x) x", 'acl a: "var(txn.x)" needs -m to say how it matches (str, beg, end, sub, reg...)'],
    ["acl a method -m int 1", "acl a: -m int cannot match a meth sample"],
    ["acl a path,sha1 -m ip 10.0.0.1", "acl a: -m ip cannot match a bin sample"],
    ["acl a hdr_val(x) abc", 'acl a: a value must be an integer or a range such as 10:20, not "abc"'],
    ["acl a hdr_ip(x-forwarded-for) abc", 'acl a: a value must be an IP address or network, not "abc"'],
    ["acl a ssl_fc x", "acl a: a boolean ACL takes no values"],
  ])("refuses %j: %s", (params, expected) => {
    expect(reason(params)).toBe(expected);
  });
});
