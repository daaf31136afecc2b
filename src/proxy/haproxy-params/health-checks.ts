// Health checks: http-check and tcp-check rules and their state per backend.
import { HEADER_NAME, METHOD, URI_PATH, integer, matching, oneOf, quote, refuse, regex } from "./values";
import { logFormat, sampleIn } from "./samples";
import { BackendState } from "./conditions";

function checkStep(state: BackendState, step: "connect" | "send" | "expect", what: string): void {
  const last = state.steps.at(-1);
  if (step === "connect" && last !== undefined && state.steps[0] !== "connect") {
    refuse(`${what}: a connect step must come first when the check has one`);
  }
  if (state.checks === "httpchk") {
    // HAProxy's http-check sequences: [connect] send expect... [connect send expect...]
    if (step === "connect" && last !== undefined && last !== "expect")
      refuse(`${what}: a connect step must follow an expect step`);
    if (step === "send" && last !== undefined && last !== "connect")
      refuse(`${what}: a send step needs a connect step before it`);
    if (step === "expect" && last === "connect")
      refuse(`${what}: an expect step after a connect needs a send step between them`);
  }
  state.steps.push(step);
}

/**
 * Checks a connect step's options. `proto h2` is for http-check only: HAProxy 2.6 takes no HTTP multiplexer for a
 * tcp-check ("invalid MUX protocol 'h2' for tcp-check").
 */
function checkConnect(words: string[], i: number, what: string, http: boolean): void {
  while (i < words.length) {
    const option = words[i++];
    if (option === "port") integer(words[i++], `${what} port`, 1, 65535);
    else if (option === "comment") {
      if (words[i++] === undefined) refuse(`${what}: comment needs a text`);
    } else if (option === "proto" && http) oneOf(words[i++], `${what} proto`, ["h2"]);
    else if (!["default", "linger", "send-proxy"].includes(option)) {
      const allowed = `default, port, linger, send-proxy, ${http ? "proto, " : ""}comment`;
      refuse(`${what}: ${quote(option)} is not an allowed connect option (allowed: ${allowed})`);
    }
  }
}

function checkVariable(words: string[], what: string, set: boolean): void {
  const call = /^(set-var|unset-var)\((.*)\)$/.exec(words[1]);
  if (!call || !/^check\.[A-Za-z0-9_.]{1,64}$/.test(call[2]))
    refuse(`${what}: ${words[1].split("(")[0]}() needs a check.* variable`);
  if (set) {
    if (words.length !== 3) refuse(`${what}: set-var needs one sample expression`);
    sampleIn(words[2], "check", what);
  } else if (words.length !== 2) refuse(`${what}: unset-var takes nothing more`);
}

const STATUS_LIST = /^[1-5][0-9]{2}(-[1-5][0-9]{2})?(,[1-5][0-9]{2}(-[1-5][0-9]{2})?){0,15}$/;

export function httpCheck(words: string[], state: BackendState): void {
  const what = `http-check ${words[1] ?? ""}`.trim();
  if (state.checks !== "httpchk") refuse(`${what}: http-check rules need "option httpchk" on an earlier line`);
  const kind = words[1];
  if (kind === "set-var" || kind?.startsWith("set-var(")) return checkVariable(words, what, true);
  if (kind === "unset-var" || kind?.startsWith("unset-var(")) return checkVariable(words, what, false);
  switch (kind) {
    case "disable-on-404":
    case "send-state":
      if (words.length !== 2) refuse(`${what} takes nothing more`);
      return;
    case "comment":
      if (words.length !== 3) refuse(`${what} needs one text`);
      return;
    case "connect":
      checkStep(state, "connect", what);
      return checkConnect(words, 2, what, true);
    case "send": {
      checkStep(state, "send", what);
      const headers = new Set<string>();
      for (let i = 2; i < words.length;) {
        const option = words[i++];
        if (option === "meth") matching(words[i++], `${what} meth`, METHOD, "an HTTP method");
        else if (option === "uri") matching(words[i++], `${what} uri`, URI_PATH, "a path starting with /");
        else if (option === "ver") oneOf(words[i++], `${what} ver`, ["HTTP/1.0", "HTTP/1.1"]);
        else if (option === "body") {
          if (words[i++] === undefined) refuse(`${what}: body needs a text`);
        } else if (option === "hdr") {
          const name = matching(words[i++], `${what} hdr`, HEADER_NAME, "a header name").toLowerCase();
          if (headers.has(name)) refuse(`${what}: header ${name} is given twice`);
          headers.add(name);
          logFormat(words[i++], `${what} hdr ${name}`, "check");
        } else refuse(`${what}: ${quote(option)} is not an allowed send option (allowed: meth, uri, ver, hdr, body)`);
      }
      return;
    }
    case "expect": {
      checkStep(state, "expect", what);
      let i = 2;
      if (words[i] === "comment") {
        if (words[i + 1] === undefined) refuse(`${what}: comment needs a text`);
        i += 2;
      }
      if (words[i] === "!") i++;
      const test = oneOf(words[i++], `${what}: the test`, ["status", "rstatus", "string", "rstring"]);
      const pattern = words[i++];
      if (test === "status") matching(pattern, `${what} status`, STATUS_LIST, "status codes such as 200 or 200-399");
      else if (test.startsWith("r")) regex(pattern, `${what} ${test}`);
      else if (pattern === undefined) refuse(`${what} string needs a text`);
      if (i !== words.length) refuse(`${what}: unexpected ${quote(words[i])}`);
      return;
    }
    default:
      refuse(
        `${quote(kind ?? "")} is not an allowed http-check rule ` +
          "(allowed: connect, send, expect, set-var, unset-var, comment, disable-on-404, send-state)",
      );
  }
}

export function tcpCheck(words: string[], state: BackendState): void {
  const what = `tcp-check ${words[1] ?? ""}`.trim();
  if (state.checks !== "tcp-check") refuse(`${what}: tcp-check rules need "option tcp-check" on an earlier line`);
  const kind = words[1];
  if (kind === "set-var" || kind?.startsWith("set-var(")) return checkVariable(words, what, true);
  if (kind === "unset-var" || kind?.startsWith("unset-var(")) return checkVariable(words, what, false);
  const withComment = (end: number) => {
    if (words.length === end) return;
    if (words.length !== end + 2 || words[end] !== "comment") refuse(`${what}: unexpected ${quote(words[end])}`);
  };
  switch (kind) {
    case "comment":
      if (words.length !== 3) refuse(`${what} needs one text`);
      return;
    case "connect":
      checkStep(state, "connect", what);
      return checkConnect(words, 2, what, false);
    case "send":
      checkStep(state, "send", what);
      if (words[2] === undefined) refuse(`${what} needs the data to send`);
      return withComment(3);
    case "send-binary":
      checkStep(state, "send", what);
      matching(words[2], what, /^(?:[0-9a-fA-F]{2}){1,500}$/, "hexadecimal bytes");
      return withComment(3);
    case "expect": {
      checkStep(state, "expect", what);
      let i = 2;
      if (words[i] === "!") i++;
      const test = oneOf(words[i++], `${what}: the test`, ["string", "rstring", "binary", "rbinary"]);
      const pattern = words[i++];
      if (test === "binary") matching(pattern, `${what} binary`, /^(?:[0-9a-fA-F]{2}){1,500}$/, "hexadecimal bytes");
      else if (test.startsWith("r")) regex(pattern, `${what} ${test}`);
      else if (pattern === undefined) refuse(`${what} string needs a text`);
      return withComment(i);
    }
    default:
      refuse(
        `${quote(kind ?? "")} is not an allowed tcp-check rule (allowed: connect, send, send-binary, expect, set-var, unset-var, comment)`,
      );
  }
}
