// Issue 27 in the vetting (plain Node): no control byte in any word however written, response splitting refused with
// its exact reason, HAProxy's hexadecimal forms for binary health checks, and words counted as HAProxy 2.6 counts them
// (a line is written without its comment; container link params leave room for `server <name> <address>`).
import { describe, expect, it } from "vitest";
import {
  MAX_SERVER_WORDS,
  MAX_WORDS,
  vetBackendParams,
  vetServerParams,
} from "../../../src/proxy/haproxy-params/index";
import { reason, refusal, serverReason, words } from "../../support/proxy-params";
import { aclLineOfWords, serverParamsOfWords } from "../../support/haproxy-param-words";

describe("vetting: response splitting (issue 27)", () => {
  it.each([
    [
      "a reply header named agent-send",
      'http-request return status 200 content-type text/plain hdr agent-send "a\\r\\nContent-Length: 0\\r\\n\\r\\nHTTP/1.1 200 OK"',
      '"a\\r\\nContent-Length: 0\\r\\n\\r\\nHTTP/1.1 200 OK" contains a control character',
    ],
    [
      "a request header named agent-send",
      'http-request set-header agent-send "a\\r\\nX-Injected: 1"',
      '"a\\r\\nX-Injected: 1" contains a control character',
    ],
    [
      "a response header",
      'http-response set-header X-A "a\\r\\nSet-Cookie: s=1"',
      '"a\\r\\nSet-Cookie: s=1" contains a control character',
    ],
    ["a bare LF", "http-request set-header X-A a\\nb", '"a\\nb" contains a control character'],
    ["a tab escape", "http-request set-header X-A a\\tb", '"a\\tb" contains a control character'],
    ["a tab inside quotes", 'http-request set-header X-A "a\tb"', '"a\\tb" contains a control character'],
    ["hexadecimal escapes", "http-request set-header X-A a\\x0d\\x0ab", '"\\x0d" makes a control character'],
    ["CR LF in a redirect", "http-request redirect location /a\\r\\nX:1", '"/a\\r\\nX:1" contains a control character'],
    [
      "CR LF in a reason",
      'http-response set-status 200 reason "OK\\r\\nX: 1"',
      '"OK\\r\\nX: 1" contains a control character',
    ],
    [
      "CR LF in tcp-check data (send-binary is the way)",
      'option tcp-check\ntcp-check send "PING\\r\\n"',
      '"PING\\r\\n" contains a control character',
    ],
    [
      "CR LF in a tcp-check expect string (expect binary is the way)",
      'option tcp-check\ntcp-check expect string "+PONG\\r\\n"',
      '"+PONG\\r\\n" contains a control character',
    ],
    [
      "CR LF in an http-check header",
      'option httpchk\nhttp-check send hdr X-A "a\\r\\nb"',
      '"a\\r\\nb" contains a control character',
    ],
    [
      "CR LF in an http-check body",
      'option httpchk\nhttp-check send body "a\\r\\nb"',
      '"a\\r\\nb" contains a control character',
    ],
  ])("refuses %s", (_what, params, expected) => {
    expect(reason(params)).toBe(expected);
  });

  it("takes CR LF in health checks only in HAProxy's hexadecimal forms", () => {
    const params = "option tcp-check\ntcp-check send-binary 50494e470d0a\ntcp-check expect binary 2b504f4e470d0a";
    expect(vetBackendParams(params)).toEqual({
      ok: true,
      value: {
        lines: ["option tcp-check", "tcp-check send-binary 50494e470d0a", "tcp-check expect binary 2b504f4e470d0a"],
        maintenance: false,
        serverTls: {},
      },
    });
  });

  it("takes printable agent-send text only", () => {
    expect(serverReason('agent-check agent-port 9999 agent-send "ready\\n"')).toBe(
      '"ready\\n" contains a control character',
    );
    expect(serverReason("agent-check agent-port 9999 agent-send ready\\x0a")).toBe('"\\x0a" makes a control character');
    expect(serverReason("agent-check agent-port 9999 agent-send é")).toBe(
      'server agent-send must be printable text, not "é"',
    );
    expect(vetServerParams('agent-check agent-port 9999 agent-send "up ready"')).toEqual({
      ok: true,
      value: 'agent-check agent-port 9999 agent-send "up ready"',
    });
  });
});

describe("vetting: words as HAProxy counts them (issue 27)", () => {
  it("writes a backend line without its comment and trailing blanks, so 64 words and a comment pass", () => {
    const line = aclLineOfWords(MAX_WORDS);
    expect(vetBackendParams(`${line} # the paths`)).toEqual({
      ok: true,
      value: { lines: [line], maintenance: false, serverTls: {} },
    });
    expect(vetBackendParams(`${line}# the paths`)).toEqual({
      ok: true,
      value: { lines: [line], maintenance: false, serverTls: {} },
    });
    expect(vetBackendParams(`balance first\t#x\nretries 3 \t`)).toEqual({
      ok: true,
      value: { lines: ["balance first", "retries 3"], maintenance: false, serverTls: {} },
    });
    expect(refusal(`${aclLineOfWords(MAX_WORDS + 1)} # the paths`)).toEqual({
      line: 1,
      text: `${aclLineOfWords(MAX_WORDS + 1)} # the paths`,
      reason: "more than 64 words (HAProxy's limit)",
    });
  });

  it("keeps an escaped or quoted blank before the comment", () => {
    expect(vetBackendParams('http-request set-header X-A "a b" # c')).toEqual({
      ok: true,
      value: { lines: ['http-request set-header X-A "a b"'], maintenance: false, serverTls: {} },
    });
    expect(vetBackendParams("http-request set-header X-A a\\  # c")).toEqual({
      ok: true,
      value: { lines: ["http-request set-header X-A a\\ "], maintenance: false, serverTls: {} },
    });
  });

  it("counts the three words of `server <name> <address>` in a container link's params", () => {
    expect(MAX_SERVER_WORDS).toBe(61);
    const longest = serverParamsOfWords(MAX_SERVER_WORDS);
    expect(words(longest)).toHaveLength(61);
    expect(vetServerParams(longest)).toEqual({ ok: true, value: longest });
    expect(vetServerParams(`${longest} # the longest`)).toEqual({ ok: true, value: longest });
    expect(serverReason(serverParamsOfWords(MAX_SERVER_WORDS + 1))).toBe(
      'more than 61 words (HAProxy\'s limit of 64, with "server <name> <address>")',
    );
    expect(serverReason("check ".repeat(63))).toBe(
      'more than 61 words (HAProxy\'s limit of 64, with "server <name> <address>")',
    );
  });
});
