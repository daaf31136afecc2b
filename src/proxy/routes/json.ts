// JSON output of the proxy API, as the original's JSON-B wrote it: object keys sorted, null fields omitted.
import type { Context } from "hono";

/** Sorts object keys (UTF-16 code unit order, like Java's String.compareTo) and drops null/undefined fields. */
export function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value === null || typeof value !== "object") return value;
  const result: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) {
    const field = (value as Record<string, unknown>)[key];
    if (field !== null && field !== undefined) result[key] = canonical(field);
  }
  return result;
}

export function jsonResponse(c: Context, value: unknown, status: 200 | 201 = 200): Response {
  return c.body(JSON.stringify(canonical(value)), status, { "Content-Type": "application/json; charset=UTF-8" });
}

/** The spec's ServiceResult: the reply of the create-or-update endpoints. */
export const serviceResult = <T>(payload: T, warnings: string[] = []) => ({
  success: true as const,
  payload,
  warnings,
});
