// Request bodies and validation for the news API. Bodies come as JSON or as form fields (curl -d); zod failures
// become the rest generator's validation object {valid: false, name: <rule>, param, value, <rule>: <limit>, message}.
import type { Context, MiddlewareHandler } from "hono";
import { z } from "../../shared/zod";
import { InvalidJsonBody } from "../../shared/http/errors";
import { multipartEntries, urlEncodedEntries } from "../../shared/http/form-body";
import {
  checkJsonDepth,
  decodeUtf8,
  JsonTooDeep,
  parseJsonText,
  readBodyBytes,
  refuseLoneSurrogates,
} from "../../shared/http/request-body";
import { bodyFailure, NewsError, validationError, type ValidationFailure } from "../errors";
import { newsBodyLimit } from "../settings";
import { MAX_URL_LENGTH } from "../store/text";

export type Body = Record<string, unknown>;

/** Fields whose values are never echoed in a validation error. */
const SECRET_FIELDS = new Set(["password", "access_token"]);

/** The deepest nesting a JSON body may have: the API's bodies are flat objects (holding an array of tickers at most). */
export const MAX_JSON_DEPTH = 16;

/**
 * The request body as an object, read once per request and kept on the context: the master-key check and the
 * validator both need it. Every body (JSON, URL-encoded or multipart form) is read by the shared reader within
 * NEWS_MAX_BODY_BYTES (413 past it) and must be UTF-8 (400 otherwise), multipart included: the API takes no files, so
 * a binary part is refused rather than parsed. An empty body is {}; form fields become strings. Refusals are answered
 * in the generator's shape (errors.ts bodyFailure).
 */
export async function requestBody(c: Context): Promise<Body> {
  const cached = c.get("body") as Body | undefined;
  if (cached) return cached;
  let body: Body = {};
  if (c.req.method !== "GET" && c.req.method !== "HEAD") {
    const type = c.req.header("content-type") ?? "";
    const bytes = await readBodyBytes(c.req.raw, newsBodyLimit(c.env));
    const text = decodeUtf8(bytes);
    if (/multipart\/form-data/i.test(type)) {
      if (bytes.byteLength > 0) body = formFields(await multipartEntries(bytes, type));
    } else if (/application\/x-www-form-urlencoded/i.test(type)) {
      body = urlEncodedFields(text);
    } else if (text.trim() !== "") {
      body = /json/i.test(type) || /^\s*[{[]/.test(text) ? parseJsonObject(text) : urlEncodedFields(text);
    }
  }
  c.set("body", body);
  return body;
}

/** Form fields as an object: a form cannot send "no value", so an empty field counts as absent. */
const formFields = (entries: [string, string][]): Body =>
  Object.fromEntries(entries.filter(([, value]) => value !== ""));

export const urlEncodedFields = (text: string): Body => formFields(urlEncodedEntries(text));

/**
 * A JSON body: an object, nested no deeper than MAX_JSON_DEPTH, with no lone surrogate (which D1 would store as
 * U+FFFD). Parsed first, so that text that is not JSON is answered as such however deep it opens.
 */
export function parseJsonObject(text: string): Body {
  try {
    const parsed = parseJsonText(text);
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
      throw new NewsError(400, { valid: false, name: "json", param: "body", message: "body must be a JSON object" });
    }
    checkJsonDepth(text, MAX_JSON_DEPTH);
    refuseLoneSurrogates(parsed, text);
    return parsed as Body;
  } catch (error) {
    throw error instanceof InvalidJsonBody || error instanceof JsonTooDeep ? bodyFailure(error) : error;
  }
}

const valueAt = (source: unknown, path: PropertyKey[]) =>
  path.reduce<unknown>(
    (value, key) =>
      value !== null && typeof value === "object" ? (value as Record<PropertyKey, unknown>)[key] : undefined,
    source,
  );

/** Turns the first zod issue into the generator's validation object. */
export function validationFailure(issue: z.core.$ZodIssue, source: unknown): Omit<ValidationFailure, "valid"> {
  const param = issue.path.map(String).join(".") || "body";
  const raw = valueAt(source, issue.path);
  const reported = "input" in issue ? issue.input : undefined;
  const input = reported === null || reported === undefined || Number.isNaN(reported) ? raw : reported;
  const value = SECRET_FIELDS.has(param) ? undefined : input;
  const withValue = (failure: Omit<ValidationFailure, "valid" | "param" | "value">) => ({
    param,
    value: value ?? null,
    ...failure,
  });
  switch (issue.code) {
    case "invalid_type":
      if (raw === undefined) return withValue({ name: "required", required: true, message: `${param} is required` });
      return withValue({ name: "type", type: issue.expected, message: `${param} must be a ${issue.expected}` });
    case "too_small":
      if (issue.origin === "string" || issue.origin === "array") {
        const message = `${param} must have length greater than or equal to ${issue.minimum}`;
        return withValue({ name: "minlength", minlength: Number(issue.minimum), message });
      }
      return withValue({
        name: "min",
        min: Number(issue.minimum),
        message: `${param} must be greater than or equal to ${issue.minimum}`,
      });
    case "too_big":
      // A list too long is echoed as it came (the comma list as written), not as the array it was split into.
      if (issue.origin === "array") {
        const message = `${param} must have length lower than or equal to ${issue.maximum}`;
        const written = SECRET_FIELDS.has(param) ? null : (raw ?? null);
        return { param, value: written, name: "maxlength", maxlength: Number(issue.maximum), message };
      }
      if (issue.origin === "string") {
        const message = `${param} must have length lower than or equal to ${issue.maximum}`;
        return withValue({ name: "maxlength", maxlength: Number(issue.maximum), message });
      }
      return withValue({
        name: "max",
        max: Number(issue.maximum),
        message: `${param} must be lower than or equal to ${issue.maximum}`,
      });
    case "invalid_format":
      if (issue.format === "regex" && "pattern" in issue) {
        const message = `${param} must match regular expression ${issue.pattern}`;
        return withValue({ name: "match", match: String(issue.pattern), message });
      }
      // Every URL the API stores is http(s) only (httpUrlField): say so rather than "a valid url" for javascript:.
      if (issue.format === "url")
        return withValue({ name: "match", match: "url", message: `${param} must be an http(s) URL` });
      return withValue({ name: "match", match: issue.format, message: `${param} must be a valid ${issue.format}` });
    case "invalid_value":
      return withValue({
        name: "enum",
        enum: issue.values,
        message: `${param} must be one of: ${issue.values.join(", ")}`,
      });
    case "custom": {
      const name = typeof issue.params?.name === "string" ? issue.params.name : "invalid";
      const limit = typeof issue.params?.[name] === "number" ? { [name]: issue.params[name] } : {};
      const failure = { name, ...limit, message: `${param} ${issue.message}` };
      // A list is echoed as it came (the comma list as written), as for maxlength.
      return Array.isArray(input) && typeof raw === "string" ? { param, value: raw, ...failure } : withValue(failure);
    }
    default:
      return withValue({ name: "invalid", message: `${param} is invalid` });
  }
}

export function parseNews<S extends z.ZodType>(schema: S, source: unknown): z.output<S> {
  const parsed = schema.safeParse(source, { reportInput: true });
  if (!parsed.success) throw validationError(validationFailure(parsed.error.issues[0], source));
  return parsed.data;
}

type Validated<T extends "json" | "query", S extends z.ZodType> = {
  in: { [K in T]: z.input<S> };
  out: { [K in T]: z.output<S> };
};

/**
 * Validates the request body (JSON or form, target "json") or the query string with a zod schema;
 * `c.req.valid(target)` then has the parsed type. Only the first failing field is reported, as the generator does.
 */
export function validateNews<T extends "json" | "query", S extends z.ZodType>(
  target: T,
  schema: S,
): MiddlewareHandler<any, string, Validated<T, S>> {
  return async (c, next) => {
    const source = target === "json" ? await requestBody(c) : c.req.query();
    c.req.addValidatedData(target, parseNews(schema, source) as object);
    await next();
  };
}

// Building blocks shared by the schemas of the routes.

/**
 * The most items a comma list may hold (companies, sources, topics, fields; an article's companies). Each list reaches
 * SQL or a full-text query: its size is not the caller's to choose (20 000 topics made one FTS5 query of 20 000
 * phrases, a second of CPU). The 70 seeded companies fit in one list.
 */
export const MAX_LIST_ITEMS = 100;

/**
 * A comma-separated list (query strings and form fields) or a JSON array of strings, blank items dropped, of at most
 * `maxItems` items (400 `maxlength` beyond).
 */
export const commaList = (item: z.ZodType<string> = z.string(), maxItems = MAX_LIST_ITEMS) =>
  z.preprocess((value) => {
    if (typeof value === "string")
      return value
        .split(",")
        .map((part) => part.trim())
        .filter(Boolean);
    return value;
  }, z.array(item).max(maxItems));

/**
 * An absolute http or https URL (with "//" after the scheme) of at most MAX_URL_LENGTH characters, trimmed. javascript:, data:,
 * ftp: and the like are refused: the URLs stored are shown to clients as links and images.
 */
export const httpUrlField = () => z.url({ protocol: z.regexes.httpProtocol }).max(MAX_URL_LENGTH);

export const ticker = z
  .string()
  .trim()
  .toUpperCase()
  .regex(/^[A-Z0-9]{1,6}$/);

/**
 * A company as /search's `companyids` names it: its ticker, or its Reuters code on the ASX (`BHP.AX`), the form the
 * original's PermID lookup answered and its clients send; read as the ticker.
 */
export const companyId = z
  .string()
  .trim()
  .toUpperCase()
  .regex(/^[A-Z0-9]{1,6}(\.AX)?$/)
  .transform((id) => id.replace(/\.AX$/, ""));

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

const ISO_8601 = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/i;

/** Whether the text's date names a day of the calendar: Date.parse rolls 2024-02-31 over to March 2 rather than refuse it. */
function isCalendarDay(text: string): boolean {
  const [year, month, day] = text.slice(0, 10).split("-").map(Number);
  const date = new Date(0);
  // setUTCFullYear, unlike Date.UTC, reads years 0 to 99 as written (0000-02-29 is a day).
  date.setUTCFullYear(year, month - 1, day);
  return date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

const isoText = z
  .string()
  .trim()
  .refine((text) => ISO_8601.test(text) && !Number.isNaN(Date.parse(text)) && isCalendarDay(text), {
    message: "must be an ISO 8601 date such as 2024-05-01 or 2024-05-01T09:30:00Z",
    params: { name: "type" },
  });

/** An ISO 8601 date or date-time (UTC unless it names an offset), as a Date; a bare date is its first instant. */
export const isoDate = isoText.transform((text) => new Date(DATE_ONLY.test(text) ? `${text}T00:00:00Z` : text));

/** Like isoDate, but a bare date is its last millisecond, so that `to=2024-05-01` includes that whole day. */
export const isoDateEnd = isoText.transform((text) =>
  DATE_ONLY.test(text) ? new Date(Date.parse(`${text}T00:00:00Z`) + 86_400_000 - 1) : new Date(text),
);
