// The news service's error answer, `{valid: false, name, param, message}`, as the news tests expect it.
import { expect } from "vitest";

/** The body of a news error answer. */
export const newsError = (name: string, param: string, message: string) => ({ valid: false, name, param, message });

/** Expects the status and exactly this error body. */
export async function expectNewsError(
  response: Response,
  status: number,
  name: string,
  param: string,
  message: string,
) {
  expect(response.status).toBe(status);
  expect(await response.json()).toEqual(newsError(name, param, message));
}
