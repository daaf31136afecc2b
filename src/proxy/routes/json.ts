// JSON output of the proxy API, as the original's JSON-B wrote it: object keys sorted, null fields omitted.
import type { Context } from "hono";

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

export function jsonResponse(
  c: Context,
  value: unknown,
  status: 200 | 201 = 200,
  { keepNulls = false } = {},
): Response {
  return c.body(JSON.stringify(canonical(value, keepNulls)), status, {
    "Content-Type": "application/json; charset=UTF-8",
  });
}

/** The spec's ServiceResult: the reply of the create-or-update endpoints. */
export const serviceResult = <T>(payload: T, warnings: string[] = []) => ({
  success: true as const,
  payload,
  warnings,
});
