// JSON output of the proxy API, as the original's JSON-B wrote it: object keys sorted, null fields omitted; and the
// warnings about a request body's unknown fields, where the answer has room for them.
import type { Context } from "hono";
import { requestUnknownFieldWarnings } from "../../shared/http/unknown-fields";

/**
 * Sorts object keys (UTF-16 code unit order, like Java's String.compareTo) and drops undefined fields, and null ones
 * unless `keepNulls` (the operations' answers, whose null says "none": a preview's `valid`, a status's fields).
 */
export function canonical(value: unknown, keepNulls = false): unknown {
  if (Array.isArray(value)) return value.map((item) => canonical(item, keepNulls));
  if (value === null || typeof value !== "object") return value;
  const result: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) {
    const field = (value as Record<string, unknown>)[key];
    if (field !== undefined && (keepNulls || field !== null)) result[key] = canonical(field, keepNulls);
  }
  return result;
}

/**
 * The answer with `extra` warnings added: after the `warnings` of an object (the field is added when it has none), or
 * after the items of a list of warnings (the mass update's answer). Anything else is returned as it is, with
 * `placed: false`. Without extra warnings the answer is unchanged, byte for byte.
 */
export function withWarnings(value: unknown, extra: string[]): { value: unknown; placed: boolean } {
  if (extra.length === 0) return { value, placed: true };
  if (Array.isArray(value) && value.every((item) => typeof item === "string")) {
    return { value: [...value, ...extra], placed: true };
  }
  if (value !== null && typeof value === "object" && !Array.isArray(value)) {
    const own = (value as { warnings?: unknown }).warnings;
    return { value: { ...value, warnings: [...(Array.isArray(own) ? own : []), ...extra] }, placed: true };
  }
  return { value, placed: false };
}

/** An RFC 9111 `Warning` header value (code 299, "miscellaneous persistent warning"), ASCII only. */
export const warningHeader = (text: string) =>
  `299 - ${JSON.stringify(text).replace(/[^\x20-\x7e]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`)}`;

export function jsonResponse(
  c: Context,
  value: unknown,
  status: 200 | 201 = 200,
  { keepNulls = false } = {},
): Response {
  const unknown = requestUnknownFieldWarnings(c);
  const answer = withWarnings(value, unknown);
  // No body route answers anything else today; a new one still names the fields, in headers.
  if (!answer.placed) for (const text of unknown) c.header("Warning", warningHeader(text), { append: true });
  return c.body(JSON.stringify(canonical(answer.value, keepNulls)), status, {
    "Content-Type": "application/json; charset=UTF-8",
  });
}

/** The spec's ServiceResult: the reply of the create-or-update endpoints. */
export const serviceResult = <T>(payload: T, warnings: string[] = []) => ({
  success: true as const,
  payload,
  warnings,
});
