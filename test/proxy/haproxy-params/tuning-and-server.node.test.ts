// Ordinary backend tuning accepted as written (pure, plain Node), _maintenance, an installation's extra directives,
// and a container link's server params: options accepted as written, and those refused with their exact reason.
import { describe, expect, it } from "vitest";
import { vetBackendParams, vetServerParams } from "../../../src/proxy/haproxy-params/index";
import { tuning } from "../../support/haproxy-param-tuning";
import { reason, serverReason } from "../../support/proxy-params";

describe("vetBackendParams: tuning that is accepted", () => {
  it("returns the lines as they will be written, without blank and comment lines", () => {
    const params = ["# tuning of the shop", "", ...tuning.map((line) => `  ${line}  `), "  # done"].join("\r\n");
    expect(vetBackendParams(params)).toEqual({ ok: true, value: { lines: tuning, maintenance: false, serverTls: {} } });
  });

  it("keeps _maintenance out of the lines", () => {
    expect(vetBackendParams("_maintenance\nbalance source")).toEqual({
      ok: true,
      value: { lines: ["balance source"], maintenance: true, serverTls: {} },
    });
    expect(reason("_maintenance now")).toBe("_maintenance takes no arguments");
  });

  it("accepts nothing at all", () => {
    for (const params of [null, undefined, "", "\n\n", "  # nothing"]) {
      expect(vetBackendParams(params)).toEqual({ ok: true, value: { lines: [], maintenance: false, serverTls: {} } });
    }
  });

  it("lets an installation allow more directives, whose arguments are still vetted", () => {
    expect(vetBackendParams("http-send-name-header X-Server", ["http-send-name-header"])).toEqual({
      ok: true,
      value: { lines: ["http-send-name-header X-Server"], maintenance: false, serverTls: {} },
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
  });

  it("reads long words of an extra directive in linear time (200 lines of 2000 characters took 1.2 s)", () => {
    const line = `http-after-response set-header X ${"a".repeat(1966)}`;
    const params = Array.from({ length: 200 }, () => line).join("\n");
    const started = performance.now();
    expect(vetBackendParams(params, ["http-after-response"]).ok).toBe(true);
    expect(performance.now() - started).toBeLessThan(300);
    expect(reason("http-after-response set-header X %[str(a),b.c+d-e(f)]", ["http-after-response"])).toBe(
      '"b.c+d-e" is not an allowed sample fetch or converter',
    );
  });

  it("lets no extra directive give a network address", () => {
    const extra = ["tcp-request", "http-after-response", "dispatch", "source", "log"];
    const address = (word: string) =>
      `${JSON.stringify(word)} looks like a network address (1.2.3.4, host:port or IPv6)`;
    expect(reason("tcp-request content reject if { src 10.0.0.1 }", extra)).toBe(address("10.0.0.1"));
    expect(reason("http-after-response set-header X %[str(10.1)]", extra)).toBe(address("%[str(10.1)]"));
    expect(reason("http-after-response set-header X localhost:8080", extra)).toBe(address("localhost:8080"));
    expect(reason("http-after-response set-header X ::1", extra)).toBe(address("::1"));
    expect(reason("http-after-response set-header X [fe80:0:0:0:0:0:0:1]", extra)).toBe(
      address("[fe80:0:0:0:0:0:0:1]"),
    );
    expect(reason("http-after-response set-header X %[ipv4(x)]", extra)).toBe('"ipv4" makes a network address');
    expect(reason("http-after-response set-header X %[ipv6(x)]", extra)).toBe('"ipv6" makes a network address');
    // 167772161 is 10.0.0.1 to HAProxy: the action, not the word, reaches the address.
    expect(reason("tcp-request content set-dst int(167772161)", extra)).toBe(
      '"set-dst" chooses the address HAProxy connects to',
    );
    for (const directive of ["dispatch localhost:80", "source localhost", "log localhost local0"]) {
      const name = directive.split(" ")[0];
      expect(reason(directive, extra)).toBe(`"${name}" takes a network address and cannot be allowed`);
    }
    // A time format's colon is no address.
    expect(reason("http-after-response set-header X %[date,ltime(%H:%M)]", extra)).toBeUndefined();
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
    "agent-send required ssl verify none",
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
    // "verify" is first the text agent-send sends: the ssl verification still needs its CA file (haproxy -c says so).
    ["agent-send verify ssl verify required", "server: verify required needs ca-file @system-ca"],
  ])("refuses %j: %s", (params, expected) => {
    expect(serverReason(params)).toBe(expected);
  });
});

describe("TLS versions that leave a server none (haproxy -c: all SSL/TLS versions are disabled)", () => {
  const disabled = "(HAProxy would disable every TLS version)";

  it("refuses a minimum above the maximum on one line, with or without ssl", () => {
    expect(reason("default-server ssl ssl-min-ver TLSv1.3 ssl-max-ver TLSv1.0 verify none")).toBe(
      `default-server: ssl-min-ver TLSv1.3 is above ssl-max-ver TLSv1.0 ${disabled}`,
    );
    expect(serverReason("ssl-max-ver TLSv1.1 ssl-min-ver TLSv1.2")).toBe(
      `server: ssl-min-ver TLSv1.2 is above ssl-max-ver TLSv1.1 ${disabled}`,
    );
    expect(serverReason("ssl verify none ssl-min-ver TLSv1.2 ssl-max-ver TLSv1.2")).toBeUndefined();
  });

  it("reads the default-server lines together, a later one overriding what it sets", () => {
    expect(reason("default-server ssl-min-ver TLSv1.3\ndefault-server ssl-max-ver TLSv1.2")).toBe(
      `default-server: ssl-min-ver TLSv1.3 of an earlier default-server line is above ssl-max-ver TLSv1.2 ${disabled}`,
    );
    const params = "default-server ssl-max-ver TLSv1.1\ndefault-server ssl-max-ver TLSv1.3 ssl-min-ver TLSv1.2";
    expect(vetBackendParams(params)).toEqual({
      ok: true,
      value: { lines: params.split("\n"), maintenance: false, serverTls: { min: "TLSv1.2", max: "TLSv1.3" } },
    });
  });

  it("vets a server's versions with those its backend's default-server sets", () => {
    const backend = vetBackendParams("default-server ssl-min-ver TLSv1.3");
    if (!backend.ok) throw new Error(backend.error.reason);
    expect(backend.value.serverTls).toEqual({ min: "TLSv1.3" });
    expect(vetServerParams("ssl verify none ssl-max-ver TLSv1.2", backend.value)).toEqual({
      ok: false,
      error: {
        line: 1,
        text: "ssl verify none ssl-max-ver TLSv1.2",
        reason: `server: ssl-min-ver TLSv1.3 of the backend's default-server is above ssl-max-ver TLSv1.2 ${disabled}`,
      },
    });
    expect(vetServerParams("ssl-min-ver TLSv1.2 ssl-max-ver TLSv1.2", backend.value).ok).toBe(true);
    expect(vetServerParams("ssl verify none ssl-max-ver TLSv1.2").ok).toBe(true);
    const maximum = { serverTls: { max: "TLSv1.0" } };
    expect(vetServerParams("check-ssl verify none ssl-min-ver TLSv1.1", maximum)).toEqual({
      ok: false,
      error: {
        line: 1,
        text: "check-ssl verify none ssl-min-ver TLSv1.1",
        reason: `server: ssl-min-ver TLSv1.1 is above ssl-max-ver TLSv1.0 of the backend's default-server ${disabled}`,
      },
    });
  });
});

describe("values HAProxy refuses together", () => {
  it.each([
    ["cookie SRV preserve", "cookie: preserve needs insert or indirect"],
    ["cookie SRV prefix nocache preserve", "cookie: preserve needs insert or indirect"],
    ["cookie SRV rewrite indirect", "cookie: rewrite and indirect exclude each other"],
    ["cookie SRV insert prefix", "cookie: only one of rewrite, insert and prefix"],
    ["cookie SRV insert domain localhost", 'cookie domain must be a domain with a dot, not "localhost"'],
    ["retry-on all-retryable-errors none", "retry-on: none must be the only event"],
    ["retry-on none none", "retry-on: none must be the only event"],
    ["hash-balance-factor 100", "hash-balance-factor must be 0 or greater than 100"],
    ["hash-balance-factor 1", "hash-balance-factor must be 0 or greater than 100"],
    [
      "option tcp-check\ntcp-check connect proto h2",
      'tcp-check connect: "proto" is not an allowed connect option (allowed: default, port, linger, send-proxy, comment)',
    ],
    ["acl a hdr_cnt(x) 5:1", "acl a: the range 5:1 ends below its start"],
    ["acl a path -m len 1:2 0000000010:9", "acl a: the range 0000000010:9 ends below its start"],
  ])("refuses %j: %s", (params, expected) => {
    expect(reason(params)).toBe(expected);
  });

  it.each([
    "cookie SRV insert preserve",
    "cookie SRV prefix indirect preserve",
    "cookie SRV domain .example.org",
    "retry-on none",
    "hash-balance-factor 0",
    "hash-balance-factor 101",
    "option httpchk\nhttp-check connect proto h2",
    "acl a hdr_cnt(x) 5:5 7: :3 2:4294967297 9999999999",
  ])("accepts %j", (params) => expect(reason(params)).toBeUndefined());
});

describe("check-alpn on both the default-server and a server (HAProxy 2.6 frees the shared value twice)", () => {
  const twice =
    "server: check-alpn is set by the backend's default-server already; set it in one place " +
    "(HAProxy 2.6 frees the shared value once per server setting it again, and crashes)";
  const vetted = (params: string) => {
    const backend = vetBackendParams(params);
    if (!backend.ok) throw new Error(backend.error.reason);
    return backend.value;
  };

  it("notes that the default-server lines set check-alpn, an earlier line's setting kept by a later one", () => {
    expect(vetted("default-server check-alpn h2").serverTls).toEqual({ checkAlpn: true });
    expect(vetted("default-server check-alpn h2\ndefault-server ssl-min-ver TLSv1.2").serverTls).toEqual({
      min: "TLSv1.2",
      checkAlpn: true,
    });
    expect(vetted("default-server alpn h2 check-sni a.example").serverTls).toEqual({});
  });

  it("refuses a server's check-alpn when its backend's default-server sets it, whatever the values", () => {
    const backend = vetted("default-server check check-alpn h2");
    for (const params of ["check-alpn h2", "check check-ssl verify none check-alpn http/1.1"]) {
      expect(vetServerParams(params, backend)).toEqual({ ok: false, error: { line: 1, text: params, reason: twice } });
    }
  });

  it("accepts check-alpn in one of the two places, and the options HAProxy 2.6 copies (valgrind: no bad free)", () => {
    const backend = vetted("default-server check-alpn h2 alpn h2 check-sni a.example sni str(a) verifyhost a.example");
    const server = "check-ssl verify none alpn http/1.1 check-sni b.example sni req.hdr(host) verifyhost b.example";
    expect(vetServerParams(server, backend)).toEqual({ ok: true, value: server });
    expect(vetServerParams("check-alpn h2", vetted("default-server check-ssl verify none"))).toEqual({
      ok: true,
      value: "check-alpn h2",
    });
    expect(vetServerParams("check-alpn h2")).toEqual({ ok: true, value: "check-alpn h2" });
  });
});
