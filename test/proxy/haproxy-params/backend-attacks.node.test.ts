// Every attack of the pentest on backend params (pure, plain Node), refused with its exact reason: new sections, file
// reads, environment expansion, parser directives, disallowed directives, options and sample functions, and limits.
import { describe, expect, it } from "vitest";
import { MAX_LINE_LENGTH, MAX_PARAMS_LINES } from "../../../src/proxy/haproxy-params/index";
import { reason, refusal, words } from "../../support/proxy-params";

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
