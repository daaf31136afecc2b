// The vetting of HAProxy params (pure, plain Node): the tokeniser against HAProxy's parsing rules, every attack of the
// pentest refused with its exact reason, ordinary tuning accepted as written, and property tests over any input.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  MAX_LINE_LENGTH,
  MAX_PARAMS_LINES,
  vetBackendParams,
  vetServerParams,
} from "../../../src/proxy/haproxy-params/index";
import { BACKEND_DIRECTIVES } from "../../../src/proxy/haproxy-params/directives";
import { SERVER_OPTIONS } from "../../../src/proxy/haproxy-params/server-options";
import { FILE_KEYWORDS, tokenizeLine } from "../../../src/proxy/haproxy-params/tokenizer";
import { reason, refusal, serverReason, words } from "../../support/proxy-params";

describe("tokenizeLine (HAProxy 2.6 parse_line)", () => {
  it.each([
    ["a  b\tc", ["a", "b", "c"]],
    ["  a b  ", ["a", "b"]],
    ['a "b c" d', ["a", "b c", "d"]],
    ["a 'b c' d", ["a", "b c", "d"]],
    ['"pro"gram x', ["program", "x"]],
    ["'fr'ont\"end\"", ["frontend"]],
    ["a\\ b", ["a b"]],
    ["a\\\\b", ["a\\b"]],
    ["a\\#b", ["a#b"]],
    ['a\\"b', ['a"b']],
    ["a\\'b", ["a'b"]],
    ['"a\\"b"', ['a"b']],
    ["\\x70rogram", ["program"]],
    ["a\\x2fb", ["a/b"]],
    ["a\\tb", ["a\tb"]],
    ['"a\\r\\n"', ["a\r\n"]],
    ["\\program", ["\\program"]],
    ["a\\qb", ["a\\qb"]],
    ["'a\\x41 $HOME \"b'", ['a\\x41 $HOME "b']],
    ['"a \\$1"', ["a $1"]],
    ["^/a$ $b", ["^/a$", "$b"]],
    ['"" a', ["", "a"]],
    ["", []],
  ])("reads %j as %j", (line, expected) => {
    expect(words(line)).toEqual(expected);
  });

  it("ends the line at an unquoted #, even inside a word, and keeps the comment and where the last word ends", () => {
    expect(tokenizeLine("balance roundrobin # tuned")).toEqual({
      ok: true,
      value: { words: ["balance", "roundrobin"], comment: "# tuned", end: 18 },
    });
    expect(tokenizeLine("a b#c d")).toEqual({ ok: true, value: { words: ["a", "b"], comment: "#c d", end: 3 } });
    expect(tokenizeLine("# only a comment")).toEqual({
      ok: true,
      value: { words: [], comment: "# only a comment", end: 0 },
    });
    expect(words("a \"b#c\" 'd#e' f\\#g")).toEqual(["a", "b#c", "d#e", "f#g"]);
    // An escaped or quoted blank belongs to its word: the line is cut after it, never inside an escape.
    expect(tokenizeLine("a\\  #c")).toEqual({ ok: true, value: { words: ["a "], comment: "#c", end: 3 } });
    expect(tokenizeLine('"a " \\t')).toEqual({ ok: true, value: { words: ["a ", "\t"], comment: null, end: 7 } });
  });

  it.each([
    ['a "b', "unterminated quote"],
    ["a 'b", "unterminated quote"],
    ["'a\\'b'", "unterminated quote"],
    ["balance roundrobin \\", "a trailing backslash is not a line continuation in HAProxy"],
    ["a \\x4", '"\\x" must be followed by two hexadecimal digits'],
    ["a \\xzz", '"\\x" must be followed by two hexadecimal digits'],
    ["file\\x00x", '"\\x00" makes a control character'],
    ["a \\x1b", '"\\x1b" makes a control character'],
    ["a \\x0d\\x0a", '"\\x0d" makes a control character'],
    ["a \\x0a", '"\\x0a" makes a control character'],
    ["a \\x09", '"\\x09" makes a control character'],
    ["a \\x7f", '"\\x7f" makes a control character'],
    ["a \\x85", '"\\x85" makes a control character'],
    ['"${HOME}"', "environment expansion (${NAME} or $NAME) is not allowed"],
    ['"$HOME"', "environment expansion (${NAME} or $NAME) is not allowed"],
    ['"${.LINE}"', "environment expansion (${NAME} or $NAME) is not allowed"],
    ['"a$"', 'a "$" inside double quotes must be written "\\$"'],
    ['"$1"', 'a "$" inside double quotes must be written "\\$"'],
  ])("refuses %j: %s", (line, error) => {
    expect(tokenizeLine(line)).toEqual({ ok: false, error });
  });
});

describe("vetBackendParams: the pentest's attacks", () => {
  it.each([
    '"program" run',
    "'program' run",
    "\\x70rogram run",
    'pro"gram" run',
    '"global"',
    "'frontend' evil",
    "listen evil",
    "backend other",
    "userlist admins",
    "ring r",
  ])("refuses a section keyword written as %j", (line) => {
    const name = words(line)[0];
    expect(refusal(`balance roundrobin\n${line}\n  command /bin/sh -c id`)).toEqual({
      line: 2,
      text: line,
      reason: `${JSON.stringify(name)} opens a new section`,
    });
  });

  it("refuses an escaped keyword HAProxy would not strip, as an unknown directive", () => {
    expect(refusal("\\program x")).toEqual({
      line: 1,
      text: "\\program x",
      reason: '"\\\\program" is not an allowed directive',
    });
  });

  it.each([
    'http-request set-header X-Leak "${AWS_SECRET}"',
    'http-request set-header X-Leak "$AWS_SECRET"',
    "http-request set-header X-Leak ${AWS_SECRET}",
    "http-request set-header X-Leak $AWS_SECRET",
    'http-request set-header X-Leak "${NOPE-default}"',
    "http-request set-header X-Leak '${AWS_SECRET}'",
    'http-request set-header X-Leak "\\$AWS_SECRET"',
  ])("refuses environment expansion in %j", (line) => {
    expect(refusal(line)).toEqual({
      line: 1,
      text: line,
      reason: "environment expansion (${NAME} or $NAME) is not allowed",
    });
  });

  it.each([
    ["http-request return status 200 content-type text/plain file certs/other.example.pem", '"file" would read a file'],
    ["http-request return status 200 content-type text/plain lf-file /etc/passwd", '"lf-file" would read a file'],
    ["http-request deny status 403 errorfile /etc/haproxy/x.http", '"errorfile" would read a file'],
    ["http-request deny errorfiles other", '"errorfiles" would read a file'],
    ["http-request return status 200 fi\\x6ce fallback.pem", '"file" would read a file'],
    ['http-request return status 200 "file" fallback.pem', '"file" would read a file'],
    ["http-error status 400 file certs/x.pem", '"file" would read a file'],
    ["errorfile 503 /etc/shadow", '"errorfile" would read a file'],
    ["errorfile 503 fallback.pem", '"errorfile" would read a file'],
    ["acl k path_beg -f /etc/passwd", '"-f" would read a file'],
    ["lua-load /tmp/x.lua", '"lua-load" would read a file'],
    ["load-server-state-from-file global", '"load-server-state-from-file" would read a file'],
    ["log /dev/log local0", '"log" would read or write a file'],
    [
      'http-request set-header X "%[req.hdr(host),map(/etc/passwd)]"',
      'http-request set-header: the value: "map" is not an allowed converter',
    ],
    [
      'http-request set-header X "%[src,map_ip(certs/x.pem)]"',
      'http-request set-header: the value: "map_ip" is not an allowed converter',
    ],
    [
      "http-request set-header X %[env(SECRET)]",
      'http-request set-header: the value: "env" is not an allowed sample fetch',
    ],
    [
      "http-request set-header X %[lua.secret]",
      'http-request set-header: the value: "lua.secret" is not an allowed sample fetch',
    ],
    ["acl k req.hdr(host),map(domain2backend.map) -m found", 'acl k: "map" is not an allowed converter'],
  ])("refuses %j: %s", (line, expected) => {
    expect(refusal(line)).toEqual({ line: 1, text: line, reason: expected });
  });

  it.each([".if defined(HOME)", ".notice hello", ".diag x", ".alert x", ".endif"])(
    "refuses the parser directive %j",
    (line) => {
      expect(reason(line)).toBe(
        `${JSON.stringify(line.split(" ")[0])} is a configuration-parser directive (.if, .notice...) and not allowed`,
      );
    },
  );

  it.each([
    ["server evil 10.0.0.1:22", '"server" is not an allowed directive'],
    ["server-template x 1-3 10.0.0.1:80", '"server-template" is not an allowed directive'],
    ["use_backend other_1_www", '"use_backend" is not an allowed directive'],
    ["stats enable", '"stats" is not an allowed directive'],
    ["stick-table type ip size 100m", '"stick-table" is not an allowed directive'],
    ["mode tcp", '"mode" is not an allowed directive'],
    ["bogus-directive on", '"bogus-directive" is not an allowed directive'],
    ["maxconn 100", '"maxconn" is not an allowed directive'],
    ["_userauth admins", '"_userauth" is not a supported pseudo-directive (only _maintenance is)'],
    ["no balance", '"no" is only allowed before option'],
    ["default option redispatch", '"default" is not an allowed directive'],
    ["no option httpchk", 'HAProxy has no "no option httpchk"'],
    ["option external-check", '"external-check" would read a file'],
    [
      "option httplog",
      '"httplog" is not an allowed option (allowed: httpchk, forwardfor, tcp-check, tcpka, redispatch, http-server-close, http-keep-alive, httpclose, abortonclose, allbackups, persist, log-health-checks, prefer-last-server, splice-auto, splice-request, splice-response, http-no-delay, checkcache, independent-streams, nolinger, srvtcpka, http-buffer-request)',
    ],
    [
      "http-request set-var(txn.x) str(a)",
      '"set-var(txn.x)" is not an allowed http-request action (allowed: set-header, add-header, del-header, replace-header, replace-value, set-path, set-pathq, set-query, set-uri, set-method, replace-path, replace-pathq, replace-uri, allow, deny, return, redirect)',
    ],
    [
      "http-request use-service prometheus-exporter",
      '"use-service" is not an allowed http-request action (allowed: set-header, add-header, del-header, replace-header, replace-value, set-path, set-pathq, set-query, set-uri, set-method, replace-path, replace-pathq, replace-uri, allow, deny, return, redirect)',
    ],
    [
      "http-request set-header X %[var(proc.shared)]",
      "http-request set-header: the value: process-wide variables (proc.*) are shared between backends and not allowed",
    ],
    [
      "http-request set-header X %[var(shared)]",
      'http-request set-header: the value: argument 1 of "var" must be a variable of the txn, req, res, sess or check scope, not "shared"',
    ],
    [
      "http-request set-header X %[str(a),concat(,proc.x,)]",
      "http-request set-header: the value: process-wide variables (proc.*) are shared between backends and not allowed",
    ],
    [
      "http-request set-header X %[src,table_conn_cur(other)]",
      'http-request set-header: the value: "table_conn_cur" is not an allowed converter',
    ],
    [
      "http-request set-header X %[nbsrv(other_1_www)]",
      'http-request set-header: the value: "nbsrv" is not an allowed sample fetch',
    ],
    [
      "http-request set-header X %[constructor]",
      'http-request set-header: the value: "constructor" is not an allowed sample fetch',
    ],
    [
      "http-request set-header X %[path,toString]",
      'http-request set-header: the value: "toString" is not an allowed converter',
    ],
    ["acl a __proto__ x", 'acl a: "__proto__" is not an allowed sample fetch'],
    [
      "http-request deny if hasOwnProperty",
      'http-request deny: no ACL named "hasOwnProperty" is defined before this line',
    ],
    ["constructor x", '"constructor" is not an allowed directive'],
    ["http-request deny if nosuch", 'http-request deny: no ACL named "nosuch" is defined before this line'],
    ["http-check expect status 200", 'http-check expect: http-check rules need "option httpchk" on an earlier line'],
    [
      "option httpchk\nhttp-check connect addr 127.0.0.1",
      'http-check connect: "addr" is not an allowed connect option (allowed: default, port, linger, send-proxy, proto, comment)',
    ],
    ["default-server addr 10.0.0.1", '"addr" is not an allowed server option'],
    ["default-server ssl verify none crt certs/x.pem", '"crt" would read a file'],
    [
      "timeout client 5s",
      'timeout must be one of server, connect, queue, tunnel, http-request, http-keep-alive, check, server-fin, tarpit, not "client"',
    ],
    ["timeout server 25d", 'timeout server must be a time from 1ms to 24d (such as 500ms, 5s, 2m), not "25d"'],
    ["balance roundrobin extra", "balance roundrobin takes no arguments"],
    [
      "http-request return status 204 content-type text/plain string x",
      "http-request return: a 204 response has no body",
    ],
    ["acl a path_reg (", 'acl a: a value: "(" is not a regular expression in RE2 syntax'],
    ["acl a src not-an-address", 'acl a: a value must be an IP address or network, not "not-an-address"'],
    ["acl a src 10.1", 'acl a: a value must be an IP address or network, not "10.1"'],
    ["acl a src fe80::1%eth0", 'acl a: a value must be an IP address or network, not "fe80::1%eth0"'],
    ["acl a src 10.0.0.0/33", 'acl a: a value must be an IP address or network, not "10.0.0.0/33"'],
    [
      "acl a path -m str %[env(X)] lua.x",
      '"%[env(X)]" calls a function that reads files, the environment or shared tables',
    ],
    ["acl a path -m str lua.x", '"lua.x" calls a function that reads files, the environment or shared tables'],
    [
      'http-request set-header X "a%20b"',
      'http-request set-header: the value: "%2" is not an allowed log-format variable (write a literal "%" as "%%")',
    ],
    ['http-request set-header X ""', 'an empty word ("") is not allowed'],
    [
      "http-response set-header X %[path]",
      'http-response set-header: the value: "path" is not available in an http-response rule (HAProxy\'s "backend http-response header rule")',
    ],
  ])("refuses %j: %s", (params, expected) => {
    expect(reason(params)).toBe(expected);
  });

  it("refuses control characters, long lines, too many words and too many lines", () => {
    expect(refusal("balance\u0000roundrobin")).toEqual({
      line: 1,
      text: "balance\u0000roundrobin",
      reason: "contains a control character",
    });
    expect(reason("balance roundrobin\r\nretries 3\r\n")).toBeUndefined();
    expect(reason("balance roundrobin\rprogram x")).toBe("contains a control character");
    expect(reason("http-request set-header X a\u000bb")).toBe("contains a control character");
    expect(reason("http-request set-header X a\u0085b")).toBe("contains a control character");
    expect(reason('http-request set-header X "a\\nb"')).toBe('"a\\nb" contains a control character');
    const long = `http-request set-header X ${"a".repeat(MAX_LINE_LENGTH)}`;
    expect(reason(long)).toBe(`longer than ${MAX_LINE_LENGTH} characters`);
    expect(reason(`acl a path_beg ${Array.from({ length: 61 }, (_, i) => `/p${i}`).join(" ")}`)).toBeUndefined();
    expect(reason(`acl a path_beg ${Array.from({ length: 62 }, (_, i) => `/p${i}`).join(" ")}`)).toBe(
      "more than 64 words (HAProxy's limit)",
    );
    expect(refusal("retries 3\n".repeat(MAX_PARAMS_LINES + 1))).toEqual({
      line: MAX_PARAMS_LINES + 1,
      text: "retries 3",
      reason: `more than ${MAX_PARAMS_LINES} lines`,
    });
  });

  it("names the first refused line, counting blank lines", () => {
    expect(refusal("balance roundrobin\n\n# tuning\nretries 3\nprogram x")).toEqual({
      line: 5,
      text: "program x",
      reason: '"program" opens a new section',
    });
  });
});

/** Ordinary tuning a tenant writes; every line must be accepted as written. */
const tuning = [
  "balance leastconn",
  "timeout server 30s",
  "timeout connect 5s",
  "retries 3",
  "retry-on conn-failure empty-response 503",
  "option redispatch",
  "no option http-buffer-request",
  "option httpchk GET /health HTTP/1.1",
  "http-check send hdr Host www.example.org",
  "http-check expect status 200-399",
  "cookie SRV insert indirect nocache httponly secure attr SameSite=Strict",
  "hash-type consistent sdbm avalanche",
  "compression algo gzip",
  "compression type text/html text/plain application/json",
  "http-reuse safe",
  "default-server inter 3s fall 3 rise 2",
  "acl api path_beg /api /v2",
  "acl office src 10.0.0.0/8 2001:db8::/32",
  "acl static path_end -i .css .js",
  "acl host_ok req.hdr(host),lower -m end .example.org",
  'http-request deny status 403 content-type text/plain string "Forbidden" if api !office',
  "http-request set-header X-Forwarded-Port %[dst_port]",
  'http-request set-header X-Client "%[src] %ci"',
  "http-request replace-path ^/old/(.*) /new/\\1",
  "http-request redirect scheme https code 301 if !{ ssl_fc }",
  'http-request return status 200 content-type "text/plain; charset=utf-8" string "pong" if { path /ping }',
  "http-response set-header Strict-Transport-Security max-age=31536000",
  "http-response del-header Server",
  "http-response set-status 503 reason Down if { status 502 }",
  "errorloc 503 https://status.example.org/",
];

describe("vetBackendParams: tuning that is accepted", () => {
  it("returns the lines as they will be written, without blank and comment lines", () => {
    const params = ["# tuning of the shop", "", ...tuning.map((line) => `  ${line}  `), "  # done"].join("\r\n");
    expect(vetBackendParams(params)).toEqual({ ok: true, value: { lines: tuning, maintenance: false } });
  });

  it("keeps _maintenance out of the lines", () => {
    expect(vetBackendParams("_maintenance\nbalance source")).toEqual({
      ok: true,
      value: { lines: ["balance source"], maintenance: true },
    });
    expect(reason("_maintenance now")).toBe("_maintenance takes no arguments");
  });

  it("accepts nothing at all", () => {
    for (const params of [null, undefined, "", "\n\n", "  # nothing"]) {
      expect(vetBackendParams(params)).toEqual({ ok: true, value: { lines: [], maintenance: false } });
    }
  });

  it("lets an installation allow more directives, whose arguments are still vetted", () => {
    expect(vetBackendParams("http-send-name-header X-Server", ["http-send-name-header"])).toEqual({
      ok: true,
      value: { lines: ["http-send-name-header X-Server"], maintenance: false },
    });
    expect(reason("http-send-name-header X-Server")).toBe('"http-send-name-header" is not an allowed directive');
    const extra = ["bogus"];
    expect(reason("bogus /etc/passwd", extra)).toBe('"/etc/passwd" looks like a file or a path');
    expect(reason("bogus certs/other.pem", extra)).toBe('"certs/other.pem" looks like a file or a path');
    expect(reason("bogus fallback.pem", extra)).toBe('"fallback.pem" looks like a file or a path');
    expect(reason("bogus unix@admin", extra)).toBe('"unix@admin" looks like a file or a path');
    expect(reason("bogus file x", extra)).toBe('"file" would read a file');
    expect(reason('bogus "${SECRET}"', extra)).toBe("environment expansion (${NAME} or $NAME) is not allowed");
    expect(reason("bogus %[env(SECRET)]", extra)).toBe('"env" is not an allowed sample fetch or converter');
    expect(reason("bogus %[lua.x]", extra)).toBe('"%[lua.x]" calls code or data files');
    expect(reason("program x", ["program"])).toBe('"program" opens a new section');
    expect(reason("server x 10.0.0.1:80", ["server"])).toBe('"server" is not an allowed directive');
  });
});

describe("vetServerParams", () => {
  it.each([
    "check",
    "check inter 2s fastinter 1s downinter 5s rise 2 fall 3 weight 10",
    "backup maxconn 100 maxqueue 10 slowstart 30s",
    "ssl verify none sni req.hdr(host) alpn h2,http/1.1",
    "ssl verify required ca-file @system-ca verifyhost api.example.org",
    "agent-check agent-port 9999 agent-inter 5s agent-send ready",
    "send-proxy-v2 proto h2",
  ])("accepts %j as written", (params) => {
    expect(vetServerParams(`  ${params} `)).toEqual({ ok: true, value: params });
  });

  it("accepts nothing at all", () => {
    for (const params of [null, undefined, "", " \n "])
      expect(vetServerParams(params)).toEqual({ ok: true, value: "" });
  });

  it.each([
    ["ssl verify none crt /etc/haproxy/certs/other.pem", '"crt" would read a file'],
    ["ssl verify required ca-file /etc/ssl/private/ca.pem", '"ca-file" would read a file'],
    ["ssl verify none crl-file /x", '"crl-file" would read a file'],
    ["check addr 169.254.169.254 port 80", '"addr" is not an allowed server option'],
    ["source 10.0.0.1", '"source" is not an allowed server option'],
    ["track other_1_www/node1", '"track" is not an allowed server option'],
    ["socks4 127.0.0.1:1080", '"socks4" is not an allowed server option'],
    ["namespace other", '"namespace" is not an allowed server option'],
    ["ssl", 'server: ssl needs "verify none" or "verify required ca-file @system-ca" (there is no other CA file)'],
    ["ssl verify required", "server: verify required needs ca-file @system-ca"],
    ["agent-check", "server: agent-check needs agent-port"],
    ["weight 300", 'server weight must be an integer from 0 to 256, not "300"'],
    ["check check", "server: check is given twice"],
    ["sni %[env(X)]", 'server sni: "%[env(X)]" is not a sample expression'],
    ["sni env(SECRET)", 'server sni: "env" is not an allowed sample fetch'],
    ['cookie "${SECRET}"', "environment expansion (${NAME} or $NAME) is not allowed"],
    ["check # comment\nbackup", "server params must be one line"],
  ])("refuses %j: %s", (params, expected) => {
    expect(serverReason(params)).toBe(expected);
  });
});

// ---- properties ----

/** Pieces of lines: directives, attack forms, quoting and escapes, so that random joins reach every path. */
const piece = fc.constantFrom(
  ...Object.keys(BACKEND_DIRECTIVES),
  ...Object.keys(SERVER_OPTIONS),
  "no",
  "program",
  '"program"',
  "\\x70rogram",
  "'global'",
  ".if",
  "_maintenance",
  "server",
  "log",
  "stick-table",
  "roundrobin",
  "5s",
  "30s",
  "httpchk",
  "redispatch",
  "GET",
  "/health",
  "200",
  "set-header",
  "deny",
  "return",
  "status",
  "content-type",
  "text/plain",
  "string",
  "X-A",
  "if",
  "unless",
  "{",
  "}",
  "!",
  "||",
  "path_beg",
  "/api",
  "src",
  "10.0.0.0/8",
  "%[src]",
  "%[path,lower]",
  "%[env(X)]",
  "map(/etc/passwd)",
  "file",
  "lf-file",
  "certs/x.pem",
  "-f",
  "-i",
  "-m",
  "beg",
  "${HOME}",
  "$HOME",
  '"$HOME"',
  "\\$x",
  '"a b"',
  "'c d'",
  "\\ ",
  "\\x41",
  "\\x00",
  "#",
  "\\",
  '"',
  "'",
  "none",
  "required",
  "@system-ca",
  "h2",
  "ok",
  "3",
  "-1",
  "\t",
  "\u0085",
  "é",
  "constructor",
  "__proto__",
  "%[toString]",
  "hasOwnProperty(x)",
);
const serverTuning = [
  "check inter 2s",
  "ssl verify none sni req.hdr(host)",
  "backup weight 0",
  "agent-check agent-port 9999",
  "cookie s1 check",
];
const joined = fc
  .array(fc.tuple(piece, fc.constantFrom(" ", " ", "", "\t")), { maxLength: 12 })
  .map((parts) => parts.map(([p, s]) => p + s).join(""));
/** Params built from accepted lines with a piece put in somewhere (or not): most runs reach the accepting paths. */
function paramsFrom(accepted: string[]) {
  const mutated = fc
    .tuple(fc.constantFrom(...accepted), fc.option(piece, { freq: 2 }), fc.nat(), fc.nat())
    .map(([text, insert, at, cut]) => {
      if (insert === null) return text;
      const position = at % (text.length + 1);
      return cut % 3 === 0 ? text.slice(0, position) + insert : text.slice(0, position) + insert + text.slice(position);
    });
  const line = fc.oneof(mutated, joined);
  return fc.oneof(
    { weight: 3, arbitrary: line },
    { weight: 2, arbitrary: fc.array(line, { minLength: 2, maxLength: 6 }).map((lines) => lines.join("\n")) },
    { weight: 1, arbitrary: fc.string({ maxLength: 300 }) },
    { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 300 }) },
  );
}
const params = paramsFrom([...tuning, ...serverTuning.map((line) => `default-server ${line}`)]);
const serverParams = paramsFrom(serverTuning);

const DIRECTIVE_WORDS = new Set([...Object.keys(BACKEND_DIRECTIVES), "no"]);
const EXPANSION = /\$[A-Za-z_.{]/;
/** Calls that read files, the environment or code, in any spelling a word can hold. */
const FILE_CALLS = /(^|[^A-Za-z0-9_])(map(_[a-z]+)?|env|lua\.[A-Za-z0-9_.]*|table_[a-z_]+)\(/;

function expectHarmless(lineWords: string[]) {
  lineWords.forEach((word, index) => {
    expect(word).not.toBe("");
    expect(word).not.toMatch(EXPANSION);
    expect(word).not.toMatch(FILE_CALLS);
    expect(word).not.toMatch(/[\x00-\x1f\x7f-\x9f]/);
    if (FILE_KEYWORDS.has(word)) expect([word, lineWords[index + 1]]).toEqual(["ca-file", "@system-ca"]);
  });
}

describe("properties", () => {
  it("vets and tokenises any text to a value or a refusal, never throwing, within the limits", () => {
    fc.assert(
      fc.property(
        params,
        fc.array(fc.constantFrom("bogus", "http-send-name-header", "program", "server"), { maxLength: 2 }),
        (text, extra) => {
          const result = vetBackendParams(text, extra);
          const lines = text.split(/\r?\n/);
          if (result.ok) {
            expect(result.value.lines.length).toBeLessThanOrEqual(Math.min(lines.length, MAX_PARAMS_LINES));
            for (const kept of result.value.lines) expect(kept.length).toBeLessThanOrEqual(MAX_LINE_LENGTH);
          } else {
            expect(result.error.line).toBeGreaterThanOrEqual(1);
            expect(result.error.line).toBeLessThanOrEqual(lines.length);
            expect(typeof result.error.reason).toBe("string");
          }
          const server = vetServerParams(text);
          expect(typeof server.ok).toBe("boolean");
          const tokens = tokenizeLine(text);
          if (tokens.ok) expect(tokens.value.words.every((word) => typeof word === "string")).toBe(true);
          else expect(typeof tokens.error).toBe("string");
        },
      ),
      { numRuns: 3000 },
    );
  });

  it("accepts only lines whose first word is allow-listed and whose words read no file and expand nothing", () => {
    let accepted = 0;
    fc.assert(
      fc.property(params, (text) => {
        const result = vetBackendParams(text);
        if (!result.ok) return;
        for (const kept of result.value.lines) {
          const again = tokenizeLine(kept);
          expect(again.ok).toBe(true);
          if (!again.ok) return;
          const lineWords = again.value.words;
          accepted++;
          expect(DIRECTIVE_WORDS.has(lineWords[0])).toBe(true);
          if (lineWords[0] === "no") expect(lineWords[1]).toBe("option");
          expectHarmless(lineWords);
        }
      }),
      { numRuns: 3000 },
    );
    // The generator must reach the accepting paths, or the property proves nothing.
    expect(accepted).toBeGreaterThan(150);
  });

  it("accepts only server params made of allow-listed options", () => {
    let accepted = 0;
    fc.assert(
      fc.property(serverParams, (text) => {
        const result = vetServerParams(text);
        if (!result.ok || result.value === "") return;
        const again = tokenizeLine(result.value);
        expect(again.ok).toBe(true);
        if (!again.ok) return;
        accepted++;
        expect(Object.hasOwn(SERVER_OPTIONS, again.value.words[0])).toBe(true);
        expectHarmless(again.value.words);
      }),
      { numRuns: 3000 },
    );
    expect(accepted).toBeGreaterThan(100);
  });
});
