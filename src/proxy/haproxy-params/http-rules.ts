// http-request and http-response rules: the allowed actions and their arguments.
import {
  CONTENT_TYPE,
  HEADER_NAME,
  REPLY_STATUSES,
  integer,
  matching,
  oneOf,
  own,
  quote,
  refuse,
  regex,
} from "./values";
import { type Place, logFormat } from "./samples";
import { BackendState, condition } from "./conditions";

type Cursor = { words: string[]; i: number };

/** The part of a deny or return rule after its action: status, content type, payload and headers (never a file). */
function reply(c: Cursor, what: string, place: Place, legacyStatus: boolean): void {
  let status = 0;
  let contentType = false;
  let payload = false;
  const seen = new Set<string>();
  while (c.i < c.words.length && c.words[c.i] !== "if" && c.words[c.i] !== "unless") {
    const option = c.words[c.i++];
    if (seen.has(option) && option !== "hdr") refuse(`${what}: ${option} is given twice`);
    seen.add(option);
    switch (option) {
      case "deny_status":
        if (!legacyStatus || seen.has("status")) refuse(`${what}: deny_status cannot be combined with status`);
        oneOf(c.words[c.i++], `${what}: deny_status`, REPLY_STATUSES);
        break;
      case "status":
        if (seen.has("deny_status")) refuse(`${what}: deny_status cannot be combined with status`);
        status = integer(c.words[c.i++], `${what}: status`, 200, 599);
        break;
      case "content-type":
        matching(c.words[c.i++], `${what}: content-type`, CONTENT_TYPE, "a media type");
        contentType = true;
        break;
      case "string":
        if (c.words[c.i++] === undefined) refuse(`${what}: string needs a value`);
        if (seen.has("lf-string")) refuse(`${what}: string and lf-string exclude each other`);
        payload = true;
        break;
      case "lf-string":
        logFormat(c.words[c.i++], `${what}: lf-string`, place);
        if (seen.has("string")) refuse(`${what}: string and lf-string exclude each other`);
        payload = true;
        break;
      case "hdr": {
        const name = matching(c.words[c.i++], `${what}: hdr`, HEADER_NAME, "a header name");
        if (["content-length", "content-type", "transfer-encoding"].includes(name.toLowerCase())) {
          refuse(`${what}: hdr ${name} is set by HAProxy`);
        }
        logFormat(c.words[c.i++], `${what}: hdr ${name}`, place);
        break;
      }
      default:
        refuse(
          `${what}: ${quote(option)} is not an allowed option ` +
            `(allowed: status, content-type, string, lf-string, hdr${legacyStatus ? ", deny_status" : ""})`,
        );
    }
  }
  if (payload && !contentType) refuse(`${what}: a string needs a content-type`);
  if (contentType && !payload) refuse(`${what}: content-type without string or lf-string`);
  if (payload && (status === 204 || status === 304)) refuse(`${what}: a ${status} response has no body`);
}

const SET_COOKIE = /^[A-Za-z0-9_.-]{1,64}(=[A-Za-z0-9_.~-]{0,256})?$/;

function redirect(c: Cursor, what: string, place: Place): void {
  // HAProxy redirects a response only to a location.
  const types = place === "http-response" ? ["location"] : ["location", "prefix", "scheme"];
  oneOf(c.words[c.i++], `${what}: the redirect type`, types);
  logFormat(c.words[c.i++], `${what}: the target`, place);
  while (c.i < c.words.length && c.words[c.i] !== "if" && c.words[c.i] !== "unless") {
    const option = c.words[c.i++];
    if (option === "code") oneOf(c.words[c.i++], `${what}: code`, ["301", "302", "303", "307", "308"]);
    else if (option === "set-cookie") matching(c.words[c.i++], `${what}: set-cookie`, SET_COOKIE, "NAME or NAME=value");
    else if (option === "clear-cookie")
      matching(c.words[c.i++], `${what}: clear-cookie`, /^[A-Za-z0-9_.-]{1,64}=?$/, "a cookie name");
    else if (option !== "drop-query" && option !== "append-slash") {
      refuse(`${what}: ${quote(option)} is not an allowed redirect option`);
    }
  }
}

type Action = (c: Cursor, what: string, place: Place) => void;

const headerAction: Action = (c, what, place) => {
  matching(c.words[c.i++], `${what}: the header name`, HEADER_NAME, "a header name");
  logFormat(c.words[c.i++], `${what}: the value`, place);
};
const replaceHeader: Action = (c, what, place) => {
  matching(c.words[c.i++], `${what}: the header name`, HEADER_NAME, "a header name");
  regex(c.words[c.i++], `${what}: the match`);
  logFormat(c.words[c.i++], `${what}: the replacement`, place);
};
const formatAction: Action = (c, what, place) => logFormat(c.words[c.i++], `${what}: the value`, place);
const replaceAction: Action = (c, what, place) => {
  regex(c.words[c.i++], `${what}: the match`);
  logFormat(c.words[c.i++], `${what}: the replacement`, place);
};

/** Actions of `http-request` rules in a backend; none reads a file, routes elsewhere or touches shared state. */
export const HTTP_REQUEST_ACTIONS: Readonly<Record<string, Action>> = {
  "set-header": headerAction,
  "add-header": headerAction,
  "del-header": (c, what) => void matching(c.words[c.i++], `${what}: the header name`, HEADER_NAME, "a header name"),
  "replace-header": replaceHeader,
  "replace-value": replaceHeader,
  "set-path": formatAction,
  "set-pathq": formatAction,
  "set-query": formatAction,
  "set-uri": formatAction,
  "set-method": formatAction,
  "replace-path": replaceAction,
  "replace-pathq": replaceAction,
  "replace-uri": replaceAction,
  allow: () => {},
  deny: (c, what, place) => reply(c, what, place, true),
  return: (c, what, place) => reply(c, what, place, false),
  redirect,
};

/** Actions of `http-response` rules. */
export const HTTP_RESPONSE_ACTIONS: Readonly<Record<string, Action>> = {
  "set-header": headerAction,
  "add-header": headerAction,
  "del-header": HTTP_REQUEST_ACTIONS["del-header"],
  "replace-header": replaceHeader,
  "replace-value": replaceHeader,
  "set-status": (c, what) => {
    integer(c.words[c.i++], `${what}: the status`, 100, 999);
    if (c.words[c.i] === "reason") {
      c.i++;
      if (c.words[c.i++] === undefined) refuse(`${what}: reason needs a text`);
    }
  },
  allow: () => {},
  deny: (c, what, place) => reply(c, what, place, true),
  return: (c, what, place) => reply(c, what, place, false),
  redirect,
};

export function httpRule(words: string[], state: BackendState, direction: "request" | "response"): void {
  const actions = direction === "request" ? HTTP_REQUEST_ACTIONS : HTTP_RESPONSE_ACTIONS;
  const name = words[1];
  const what = `http-${direction} ${name ?? ""}`.trim();
  if (name === undefined) refuse(`${what} needs an action`);
  const action = own(actions, name);
  if (!action)
    refuse(`${quote(name)} is not an allowed http-${direction} action (allowed: ${Object.keys(actions).join(", ")})`);
  const earlier = state.final[direction];
  if (earlier) {
    refuse(
      `${what}: the earlier "${earlier}" has no condition and ends the http-${direction} rules, so this one would never run`,
    );
  }
  const cursor = { words, i: 2 };
  const place = direction === "request" ? "http-request" : "http-response";
  action(cursor, what, place);
  condition(words, cursor.i, state, place, what);
  if (FINAL_ACTIONS.has(name) && cursor.i >= words.length) state.final[direction] = what;
}

/** Actions after which HAProxy evaluates no further rule of the same kind. */
const FINAL_ACTIONS = new Set(["allow", "deny", "return", "redirect"]);
